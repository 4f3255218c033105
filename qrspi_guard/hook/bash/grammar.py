"""Bash's grammar over :mod:`~qrspi_guard.hook.bash.lexer`' tokens: which simple commands
a command line runs, and which of them run in a subshell.

:func:`parse` returns a tree of four kinds of node:

- :class:`Simple`: one simple command (its words and redirections);
- :class:`Seq`: nodes run one after another in the same shell (a list, ``&&``, ``||``,
  a ``{ ...; }`` group, the parts of ``if``, ``while``, ``for``, ``case``);
- :class:`Sub`: a node run in a subshell, whose ``cd`` ends with it: ``( ... )``, each
  command of a pipeline of two or more (bash runs them all in subshells), a list sent
  to the background with ``&``;
- :class:`Words`: words that are only expanded (a ``for`` list, a ``case`` subject,
  ``[[ ... ]]``, ``(( ... ))``): their command substitutions run, nothing else does.

A compound command's redirections (``( ... ) > F``) are kept on a :class:`Seq`. A
function's body is read where it is defined, as if it ran there. Text bash would
refuse raises :class:`~qrspi_guard.hook.bash.tokens.Incomplete`.
"""

from __future__ import annotations

from qrspi_guard.hook.bash.lexer import tokens
from qrspi_guard.hook.bash.tokens import Incomplete, Redir, Word

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import TypeVar

    T = TypeVar("T", Word, Redir)

_CASE_ENDS = (";;", ";&", ";;&")


class Simple:
    __slots__ = ("words", "redirs")

    def __init__(self, words: list[Word], redirs: list[Redir]) -> None:
        self.words = words
        self.redirs = redirs


class Seq:
    __slots__ = ("items", "redirs")

    def __init__(self, items: list[Node], redirs: list[Redir] | None = None) -> None:
        self.items = items
        self.redirs = redirs or []


class Sub:
    __slots__ = ("body",)

    def __init__(self, body: Node) -> None:
        self.body = body


class Words:
    __slots__ = ("words",)

    def __init__(self, words: list[Word]) -> None:
        self.words = words


TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import TypeAlias

    Node: TypeAlias = "Simple | Seq | Sub | Words"


def parse(command: str) -> Node:
    """The tree of *command*, or :class:`Incomplete`."""
    return parse_tokens(tokens(command))


def parse_tokens(toks: list[Word | Redir | str]) -> Node:
    """The tree of a token list (a command substitution's, say)."""
    parser = _Parser(toks)
    node = parser.list_(())
    if parser.i < len(toks):
        raise Incomplete(f"unexpected {toks[parser.i]!r}")
    return node


#: compound commands nested deeper than this are not read (text bash would run, but
#: no agent writes: the command is opaque)
MAX_NESTING = 64


class _Parser:
    def __init__(self, toks: list[Word | Redir | str]) -> None:
        self.t = toks
        self.i = 0
        self.nesting = 0

    def peek(self, ahead: int = 0) -> Word | Redir | str | None:
        at = self.i + ahead
        return self.t[at] if at < len(self.t) else None

    def run_of(self, kind: type[T]) -> list[T]:
        """The tokens of *kind* (words, redirections) from here to the first token that
        is not one, taken."""
        got: list[T] = []
        while isinstance(tok := self.peek(), kind):
            got.append(tok)
            self.i += 1
        return got

    def reserved(self, *names: str) -> bool:
        tok = self.peek()
        return isinstance(tok, Word) and tok.plain() in names

    def expect(self, *names: str) -> None:
        tok = self.peek()
        if not (tok in names or self.reserved(*names)):
            raise Incomplete(f"expected {' or '.join(names)}")
        self.i += 1

    def newlines(self) -> None:
        while self.peek() == "\n":
            self.i += 1

    # -- lists, and-or lists, pipelines ---------------------------------------------------

    def list_(self, stops: tuple[str, ...]) -> Seq:
        items: list[Node] = []
        while True:
            self.newlines()
            tok = self.peek()
            if tok is None or tok in stops or self.reserved(*stops):
                return Seq(items)
            node = self.and_or()
            if self.peek() == "&":
                self.i += 1
                node = Sub(node)
            elif self.peek() == ";":
                self.i += 1
            items.append(node)

    def and_or(self) -> Node:
        items = [self.pipeline()]
        while self.peek() in ("&&", "||"):
            self.i += 1
            self.newlines()
            items.append(self.pipeline())
        return items[0] if len(items) == 1 else Seq(items)

    def pipeline(self) -> Node:
        while self.reserved("!", "time"):
            self.i += 1
            if self.reserved("-p"):
                self.i += 1
        commands = [self.command()]
        while self.peek() in ("|", "|&"):
            self.i += 1
            self.newlines()
            commands.append(self.command())
        if len(commands) == 1:
            return commands[0]
        return Seq([Sub(c) for c in commands])

    # -- commands -------------------------------------------------------------------------

    def command(self) -> Node:
        self.nesting += 1
        try:
            if self.nesting > MAX_NESTING:
                raise Incomplete("nested too deep")
            return self.compound_or_simple()
        finally:
            self.nesting -= 1

    def compound_or_simple(self) -> Node:
        tok = self.peek()
        if tok == "(":
            self.i += 1
            body = self.list_((")",))
            self.expect(")")
            return self.redirected(Sub(body))
        if tok == "((":
            return self.arithmetic()
        name = tok.plain() if isinstance(tok, Word) else None
        compound = {"{": self.group, "if": self.if_, "while": self.loop, "until": self.loop,
                    "for": self.for_, "select": self.for_, "case": self.case,
                    "[[": self.test, "function": self.function}.get(name or "")
        if compound is not None:
            self.i += 1
            return compound()
        if name in ("}", "then", "fi", "do", "done", "else", "elif", "esac", "in", "]]"):
            raise Incomplete(f"unexpected {name}")
        return self.simple()

    def redirected(self, node: Node) -> Node:
        redirs = self.run_of(Redir)
        return Seq([node], redirs) if redirs else node

    def simple(self) -> Node:
        words: list[Word] = []
        redirs: list[Redir] = []
        while True:
            tok = self.peek()
            if isinstance(tok, Word):
                words.append(tok)
            elif isinstance(tok, Redir):
                redirs.append(tok)
            else:
                break
            self.i += 1
            if len(words) == 1 and not redirs and self.peek() == "(" and self.peek(1) == ")":
                self.i += 2  # NAME ( ) COMPOUND: a function, read as if it ran here
                self.newlines()
                return self.command()
        if not words and not redirs:
            raise Incomplete(f"unexpected {self.peek()!r}")
        return Simple(words, redirs)

    def group(self) -> Node:
        body = self.list_(("}",))
        self.expect("}")
        return self.redirected(body)

    def if_(self) -> Node:
        parts = [self.list_(("then",))]
        self.expect("then")
        parts.append(self.list_(("elif", "else", "fi")))
        while self.reserved("elif"):
            self.i += 1
            parts.append(self.list_(("then",)))
            self.expect("then")
            parts.append(self.list_(("elif", "else", "fi")))
        if self.reserved("else"):
            self.i += 1
            parts.append(self.list_(("fi",)))
        self.expect("fi")
        return self.redirected(Seq(list(parts)))

    def loop(self) -> Node:
        condition = self.list_(("do",))
        self.expect("do")
        body = self.list_(("done",))
        self.expect("done")
        return self.redirected(Seq([condition, body]))

    def for_(self) -> Node:
        items: list[Node] = []
        if self.peek() == "((":
            items.append(self.arithmetic())
        else:
            if not isinstance(self.peek(), Word):
                raise Incomplete("for without a name")
            self.i += 1
            self.newlines()
            if self.reserved("in"):
                self.i += 1
                items.append(Words(self.run_of(Word)))
        while self.peek() in ("\n", ";"):
            self.i += 1
        if self.reserved("{"):
            self.i += 1
            items.append(self.list_(("}",)))
            self.expect("}")
        else:
            self.expect("do")
            items.append(self.list_(("done",)))
            self.expect("done")
        return self.redirected(Seq(items))

    def case(self) -> Node:
        subject = self.peek()
        if not isinstance(subject, Word):
            raise Incomplete("case without a word")
        self.i += 1
        self.newlines()
        self.expect("in")
        items: list[Node] = [Words([subject])]
        while True:
            self.newlines()
            if self.reserved("esac"):
                self.i += 1
                return self.redirected(Seq(items))
            if self.peek() == "(":
                self.i += 1
            patterns: list[Word] = []
            while True:
                tok = self.peek()
                if not isinstance(tok, Word):
                    raise Incomplete("case pattern expected")
                patterns.append(tok)
                self.i += 1
                if self.peek() == "|":
                    self.i += 1
                    continue
                self.expect(")")
                break
            items.append(Words(patterns))
            items.append(self.list_(_CASE_ENDS + ("esac",)))
            if self.peek() in _CASE_ENDS:
                self.i += 1
            elif not self.reserved("esac"):
                raise Incomplete("case item without ;;")

    def test(self) -> Node:
        words: list[Word] = []
        while not self.reserved("]]"):
            tok = self.peek()
            if tok is None:
                raise Incomplete("[[ without ]]")
            if isinstance(tok, Word):
                words.append(tok)
            elif isinstance(tok, Redir):  # `<` and `>` compare strings here
                words.append(tok.target)
            self.i += 1
        self.i += 1
        return self.redirected(Words(words))

    def function(self) -> Node:
        if not isinstance(self.peek(), Word):
            raise Incomplete("function without a name")
        self.i += 1
        if self.peek() == "(" and self.peek(1) == ")":
            self.i += 2
        self.newlines()
        return self.command()

    def arithmetic(self) -> Node:
        """``(( ... ))``: expanded only; but ``((cd x; ls))`` are two subshells, as bash
        reads text that is not arithmetic."""
        depth, j = 0, self.i
        words: list[Word] = []
        while j < len(self.t):
            tok = self.t[j]
            if tok in ("(", "(("):
                depth += len(tok)
            elif tok == ")":
                depth -= 1
                if depth == 0:
                    break
            elif tok in (";", "\n"):
                self.t[self.i:self.i + 1] = ["(", "("]
                return self.command()
            elif isinstance(tok, Word):
                words.append(tok)
            elif isinstance(tok, Redir):
                words.append(tok.target)
            j += 1
        else:
            raise Incomplete("unclosed ((")
        self.i = j + 1
        return self.redirected(Words(words))
