"""Bash's tokens: words, operators, redirections and here-documents, as bash reads them.

:func:`tokens` splits a command line the way bash's own reader does (bash(1),
"QUOTING", "REDIRECTION", "Here Documents"; POSIX "Token Recognition"):

- blanks are spaces and tabs; a new line is an operator (it ends a command);
- a ``#`` starts a comment only where a word would start (``ls R#x`` is one word);
- a backslash-newline is removed wherever it stands outside single quotes, in a word
  too (``rev\\<newline>iews`` is ``reviews``);
- quotes (``'...'``, ``"..."``, ``$'...'``, ``$"..."``) and backslashes make their
  text literal; what is quoted is never an operator (``"<<X"`` is a word);
- ``$(...)``, backquotes and ``<(...)`` / ``>(...)`` are commands that run: their
  tokens are kept with the word (:attr:`Word.subs`); ``$name``, ``${...}`` and
  ``$((...))`` are expansions whose value is not known here;
- a ``<<`` or ``<<-`` here-document takes the lines after the end of its line up to
  its delimiter as its body (:attr:`Redir.body`), expanded like double quotes unless
  the delimiter is quoted.

Brace expansion, tilde expansion and globbing are :mod:`~qrspi_guard.hook.bash.fields`'
work. Text bash would refuse (an unclosed quote, a stray ``)``) raises
:class:`Incomplete`. Pure: text in, tokens out; nesting is bounded (:data:`MAX_DEPTH`).
"""

from __future__ import annotations

import re

from qrspi_guard.hook.bash.tokens import (
    EXP,
    LIT,
    MAX_DEPTH,
    QUO,
    REDIRS,
    Incomplete,
    Redir,
    Word,
    ansi_c,
    is_assignment,
)

_OPS = (";;&", ";;", ";&", "&&", "||", "|&", "&>>", "&>", "<<<", "<<-", "<<", "<>", "<&",
        ">&", ">>", ">|", "((", "<", ">", "|", "&", ";", "(", ")")
#: operators after which a word is in command position
_COMMAND_START = frozenset({";", "\n", "&", "&&", "||", "|", "|&", "(", ";;", ";&", ";;&"})
_RESERVED_BEFORE_COMMAND = frozenset({"then", "do", "else", "elif", "{", "!", "time", "in"})
_META = frozenset(" \t\n;&|()<>")
_RUN = re.compile(r"[^ \t\n;&|()<>\\'\"$`]+")
_DQ_RUN = re.compile(r"[^\\$`\"]+")
_HEREDOC_RUN = re.compile(r"[^\\$`]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_SUBSCRIPT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
_FD = re.compile(r"[0-9]{1,4}|\{[A-Za-z_][A-Za-z0-9_]*\}")


def tokens(command: str) -> list[Word | Redir | str]:
    """The tokens of *command*, or :class:`Incomplete`."""
    return _Lexer(command).run(0, closing=False)[0]


class _Lexer:
    """Reads one text; a command substitution is read by a nested lexer over the same
    text, a backquoted one over its own."""

    def __init__(self, s: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise Incomplete("nested too deep")
        self.s = s
        self.n = len(s)
        self.depth = depth
        self.pending: list[Redir] = []  # here-documents whose bodies start on the next line

    # -- the command level ------------------------------------------------------------

    def run(self, i: int, closing: bool) -> tuple[list[Word | Redir | str], int]:
        """Tokens from *i* to the end, or (*closing*) to the ``)`` of a ``$(``."""
        s, n = self.s, self.n
        toks: list[Word | Redir | str] = []
        paren = case = 0
        while i < n:
            c = s[i]
            if c == " " or c == "\t":
                i += 1
            elif c == "\\" and s.startswith("\n", i + 1):
                i += 2
            elif c == "#":
                j = s.find("\n", i)
                i = n if j < 0 else j
            elif c == "\n":
                toks.append("\n")
                i = self.bodies(i + 1)
            elif c in "<>&|;()" and not (c in "<>" and s.startswith("(", i + 1)):
                op = next(o for o in _OPS if s.startswith(o, i))
                i += len(op)
                if op in REDIRS:
                    redir, i = self.redirect(op, None, i)
                    toks.append(redir)
                    continue
                if op in ("(", "(("):
                    paren += len(op)
                elif op == ")":
                    if paren:
                        paren -= 1
                    elif not case:
                        if closing:
                            self.unfed()
                            return toks, i
                        raise Incomplete("unmatched )")
                toks.append(op)
            else:
                word, i = self.word(i, _assignment_position(toks))
                plain = word.plain()
                if i < n and s[i] in "<>" and not s.startswith("(", i + 1) and plain \
                        and _FD.fullmatch(plain):
                    op = next(o for o in _OPS if s.startswith(o, i))
                    if op in REDIRS:
                        redir, i = self.redirect(op, plain, i + len(op))
                        toks.append(redir)
                        continue
                if plain in ("case", "esac") and _command_position(toks):
                    case = case + 1 if plain == "case" else max(0, case - 1)
                toks.append(word)
        if closing:
            raise Incomplete("unclosed $(")
        self.bodies(n)
        return toks, n

    def redirect(self, op: str, fd: str | None, i: int) -> tuple[Redir, int]:
        s, n = self.s, self.n
        while i < n and (s[i] in " \t" or s.startswith("\\\n", i)):
            i += 1 if s[i] != "\\" else 2
        if i >= n or (s[i] in _META and not (s[i] in "<>" and s.startswith("(", i + 1))):
            raise Incomplete(f"{op} without a target")
        target, i = self.word(i)
        redir = Redir(op, fd, target)
        if op in ("<<", "<<-"):
            self.pending.append(redir)
        return redir, i

    def unfed(self) -> None:
        """Here-documents whose line never ended: their bodies are empty."""
        for redir in self.pending:
            redir.body = Word([("", QUO)])
        self.pending = []

    def bodies(self, i: int) -> int:
        """Read the bodies of the pending here-documents from line start *i*."""
        s, n = self.s, self.n
        for redir in self.pending:
            parts = redir.target.parts
            delimiter = "".join(t for t, _ in parts)
            quoted = any(kind == QUO for _, kind in parts)
            strip = redir.op == "<<-"
            start = end = i
            while True:
                j = s.find("\n", i)
                stop = n if j < 0 else j
                line = s[i:stop]
                if (line.lstrip("\t") if strip else line) == delimiter:
                    end, i = i, min(stop + 1, n)
                    break
                if j < 0:  # delimited by end of input, as bash allows (with a warning)
                    end = i = n
                    break
                i = j + 1
            text = s[start:end]
            if strip:
                text = re.sub(r"(?m)^\t+", "", text)
            if quoted:
                redir.body = Word([(text, QUO)])
            else:
                body = Word()
                _Lexer(text, self.depth + 1).double(0, body, None)
                redir.body = body
        self.pending = []
        return i

    # -- words --------------------------------------------------------------------------

    def word(self, i: int, assignment: bool = False) -> tuple[Word, int]:
        """The word at *i*. Where an assignment may stand, ``NAME[`` opens a subscript
        that runs to its ``]``, blanks and new lines included, as bash reads it."""
        s, n = self.s, self.n
        word = Word()
        parts = word.parts
        if assignment:
            m = _SUBSCRIPT.match(s, i)
            if m is not None:
                j = self.matching(m.end(), "[", "]")
                parts.append((s[i:j], LIT))
                i = j
        while i < n:
            c = s[i]
            if c in _META:
                if c in "<>" and s.startswith("(", i + 1):  # <(...) >(...): a command runs
                    toks, j = self.nested(i + 2)
                    word.subs.append(toks)
                    parts.append((s[i:j], EXP))
                    i = j
                    continue
                break
            if c == "\\":
                if s.startswith("\n", i + 1):
                    i += 2
                else:
                    parts.append((s[i + 1:i + 2] or "\\", QUO))
                    i += 2
            elif c == "'":
                j = s.find("'", i + 1)
                if j < 0:
                    raise Incomplete("unclosed '")
                parts.append((s[i + 1:j], QUO))
                i = j + 1
            elif c == '"':
                i = self.double(i + 1, word, '"')
            elif c == "$":
                i = self.dollar(i, word, False)
            elif c == "`":
                i = self.backquote(i + 1, word)
            else:
                m = _RUN.match(s, i)
                assert m is not None
                parts.append((m.group(), LIT))
                i = m.end()
        return word, min(i, n)

    def double(self, i: int, word: Word, quote: str | None) -> int:
        """Double-quoted text from *i* to its closing *quote*, or (None: a here-document
        body) to the end. Returns the index after it."""
        s, n = self.s, self.n
        buf: list[str] = []
        run = _DQ_RUN if quote else _HEREDOC_RUN

        def flush() -> None:
            if buf:
                word.parts.append(("".join(buf), QUO))
                buf.clear()

        word.parts.append(("", QUO))  # `""` is a word, empty
        while i < n:
            c = s[i]
            if quote and c == quote:
                flush()
                return i + 1
            if c == "\\":
                d = s[i + 1:i + 2]
                if d == "\n":
                    i += 2
                elif d and (d in "$`\\" or d == quote):
                    buf.append(d)
                    i += 2
                else:
                    buf.append("\\")
                    i += 1
            elif c == "$":
                flush()
                i = self.dollar(i, word, True)
            elif c == "`":
                flush()
                i = self.backquote(i + 1, word)
            else:
                m = run.match(s, i)
                if m is None:  # a `"` in a here-document body
                    buf.append(c)
                    i += 1
                else:
                    buf.append(m.group())
                    i = m.end()
        if quote:
            raise Incomplete("unclosed \"")
        flush()
        return n

    def dollar(self, i: int, word: Word, in_double: bool) -> int:
        s, n = self.s, self.n
        nxt = s[i + 1:i + 2]
        if nxt == "'" and not in_double:
            j = i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                raise Incomplete("unclosed $'")
            word.parts.append((ansi_c(s[i + 2:j]), QUO))
            return j + 1
        if nxt == '"' and not in_double:
            return self.double(i + 2, word, '"')
        if s.startswith("((", i + 1):
            end = self.arithmetic_end(i + 3)
            if end is not None:
                raw = s[i:end]
                word.unknown = word.unknown or "$(" in raw[3:] or "`" in raw
                word.parts.append((raw, EXP))
                return end
        if nxt == "(":
            toks, j = self.nested(i + 2)
            word.subs.append(toks)
            word.parts.append((s[i:j], EXP))
            return j
        if nxt == "{":
            j = self.matching(i + 2, "{", "}")
            raw = s[i:j]
            word.unknown = word.unknown or "$(" in raw or "`" in raw
            word.parts.append((raw, EXP))
            return j
        m = _NAME.match(s, i + 1)
        if m is not None:
            word.parts.append((s[i:m.end()], EXP))
            return m.end()
        word.parts.append(("$", QUO if in_double else LIT))
        return i + 1

    def nested(self, i: int) -> tuple[list[Word | Redir | str], int]:
        """The tokens of a ``$(`` (or ``<(``) whose text starts at *i*, and the index
        after its ``)``."""
        return _Lexer(self.s, self.depth + 1).run(i, closing=True)

    def backquote(self, i: int, word: Word) -> int:
        s, n = self.s, self.n
        j, out = i, []
        while j < n and s[j] != "`":
            if s[j] == "\\" and j + 1 < n:
                out.append(s[j + 1] if s[j + 1] in "$`\\" else s[j:j + 2])
                j += 2
            else:
                out.append(s[j])
                j += 1
        if j >= n:
            raise Incomplete("unclosed `")
        word.subs.append(_Lexer("".join(out), self.depth + 1).run(0, closing=False)[0])
        word.parts.append((s[i - 1:j + 1], EXP))
        return j + 1

    def arithmetic_end(self, i: int) -> int | None:
        """The index after the ``))`` closing a ``$((`` whose text starts at *i*; None
        when a ``)`` closes it alone (``$( (cmd) )`` written without the space)."""
        s, n = self.s, self.n
        depth = 0
        while i < n:
            c = s[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth:
                    depth -= 1
                elif s.startswith(")", i + 1):
                    return i + 2
                else:
                    return None
            i += 1
        raise Incomplete("unclosed $((")

    def matching(self, i: int, opening: str, closing: str) -> int:
        """The index after the *closing* that matches an *opening* just before *i*;
        quotes and backslashes make what they hold plain text."""
        s, n = self.s, self.n
        depth = 1
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c in "'\"":
                j = s.find(c, i + 1)
                if j < 0:
                    raise Incomplete(f"unclosed quote in {opening}")
                i = j + 1
                continue
            depth += (c == opening) - (c == closing)
            i += 1
            if not depth:
                return i
        raise Incomplete(f"unclosed {opening}")


def _assignment_position(toks: list[Word | Redir | str]) -> bool:
    """Where a word may be an assignment: in command position, or after one."""
    if _command_position(toks):
        return True
    last = toks[-1]
    return isinstance(last, Word) and is_assignment(last)


def _command_position(toks: list[Word | Redir | str]) -> bool:
    if not toks:
        return True
    last = toks[-1]
    if isinstance(last, str):
        return last in _COMMAND_START
    return isinstance(last, Word) and last.plain() in _RESERVED_BEFORE_COMMAND
