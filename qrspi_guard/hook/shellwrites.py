"""What a shell command writes, and what it names, read from its command line (cli.md,
the hook paragraph).

:func:`analyse` reads a command as bash reads it (:mod:`~qrspi_guard.hook.bash.grammar`:
quotes, comments, here-documents, continuations, brace expansion, subshells,
command substitutions) and returns an :class:`Analysis`:

- ``writes``: the files it visibly writes or changes: its output redirections
  (``>``, ``>>``, ``>|``, ``&>``, ``<>``, ``>&FILE``) and what each program in
  :mod:`~qrspi_guard.hook.bash.programs` writes (``tee``, ``sed -i`` and sed's ``w``,
  ``cp`` ..., ``sort -o``, ``uniq IN OUT``, ``xxd IN OUT``, ``find -fprint``,
  ``yq -i``, ``tree -o``, ``git diff --output``), followed through ``cd``,
  ``sh -c``, ``eval`` and the programs that run their arguments (``env``, ``nice``...);
- ``opaque``: some of its writes cannot be read from it (a script, an interpreter,
  a program not in the table, a path held in a variable, text bash would refuse);
- ``names``: the paths the opaque commands name, in their words and in the
  here-documents they read (``python3 - <<EOF ... open('R/x.md', 'w')``), split
  generously: whatever they write, these are the files they may have written.

A path is absolute, joined to the directory the command runs in at that point (a
``cd`` moves it until its subshell ends; a ``cd`` that cannot be followed makes later
relative paths unknown); a glob is matched on the disk (flagged: bash matched it
before the call). Reads the disk only to match globs and to tell a copy into a
directory; no printing.
"""

from __future__ import annotations

import os
import re

from qrspi_guard.hook.bash.fields import Field, fields
from qrspi_guard.hook.bash.grammar import Seq, Simple, Sub, Words, parse, parse_tokens
from qrspi_guard.hook.bash.options import Args, Opaque
from qrspi_guard.hook.bash.programs import PROGRAMS, READERS
from qrspi_guard.hook.bash.tokens import MAX_DEPTH, QUO, Incomplete, Redir, Word, is_assignment

#: a command line longer than this is not read (opaque)
MAX_COMMAND = 1 << 20
#: at most this many paths written and named are kept; past it the command is opaque
MAX_PATHS = 4096
#: at most this many command lines (the command, ``sh -c``, ``eval``...) are read
MAX_SCRIPTS = 64
_WRITING = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SPLIT = re.compile(r"[\s;|&<>()`'\"=,:\[\]{}]+")
_SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin"})


class Analysis:
    """What a command writes (``writes``), what its opaque parts name (``names``), as
    (absolute path, matched by a glob), and whether some writes cannot be read
    (``opaque``)."""

    __slots__ = ("writes", "names", "opaque")

    def __init__(self) -> None:
        self.writes: list[tuple[str, bool]] = []
        self.names: list[tuple[str, bool]] = []
        self.opaque = False

    @property
    def reads_only(self) -> bool:
        """It writes nothing, as far as anything can tell."""
        return not self.opaque and not self.writes

    def add(self, into: list[tuple[str, bool]], path: str, globbed: bool) -> None:
        if len(self.writes) + len(self.names) >= MAX_PATHS:
            self.opaque = True
        elif (path, globbed) not in into:
            into.append((path, globbed))

    def __repr__(self) -> str:
        return f"Analysis(writes={self.writes!r}, names={self.names!r}, opaque={self.opaque})"


def analyse(command: str, base: str) -> Analysis:
    """What *command*, run in directory *base*, writes and names."""
    out = Analysis()
    _Walker(out).script(command, _State(base), 0)
    return out


class _State:
    """Where relative paths start (None: after a ``cd`` that could not be followed)."""

    __slots__ = ("base",)

    def __init__(self, base: str | None) -> None:
        self.base = base

    def copy(self) -> _State:
        return _State(self.base)


class _Walker:
    def __init__(self, out: Analysis) -> None:
        self.out = out
        self.scripts = 0

    def script(self, text: str, state: _State, depth: int) -> None:
        self.scripts += 1
        if len(text) > MAX_COMMAND or self.scripts > MAX_SCRIPTS or depth > MAX_DEPTH:
            self.out.opaque = True
            return
        try:
            node = parse(text)
        except Incomplete:  # bash would refuse it; what is in it is still named
            self.out.opaque = True
            self.name([Word([(text, QUO)])], state)
            return
        self.node(node, state, depth)

    def node(self, node: Simple | Seq | Sub | Words, state: _State, depth: int) -> None:
        if isinstance(node, Simple):
            self.simple(node, state, depth)
        elif isinstance(node, Seq):
            self.redirects(node.redirs, state, depth)
            for item in node.items:
                self.node(item, state, depth)
        elif isinstance(node, Sub):
            self.node(node.body, state.copy(), depth)
        else:  # only their substitutions run
            for word in node.words:
                self.substitutions(word, state, depth)

    def substitutions(self, word: Word, state: _State, depth: int) -> None:
        """The commands ``$(...)`` and backquotes in *word* run, in a subshell."""
        if word.unknown:
            self.out.opaque = True
        for toks in word.subs:
            try:
                node = parse_tokens(toks)
            except Incomplete:
                self.out.opaque = True
                continue
            self.node(node, state.copy(), depth + 1)

    def redirects(self, redirs: list[Redir], state: _State, depth: int) -> None:
        ctx = Ctx(self, state, [], depth)
        for redir in redirs:
            self.substitutions(redir.target, state, depth)
            if redir.body is not None and redir.body is not redir.target:
                self.substitutions(redir.body, state, depth)
            value = redir.target.value()
            duplicate = value is not None and (value.isdigit() or value == "-")  # 2>&1
            if redir.op in _WRITING or (redir.op == ">&" and not duplicate):
                found = fields(redir.target)
                if found is None or len(found) != 1:
                    self.out.opaque = True  # a variable, or an ambiguous redirect
                    continue
                ctx.write(found[0])

    def simple(self, cmd: Simple, state: _State, depth: int) -> None:
        for word in cmd.words:
            self.substitutions(word, state, depth)
        self.redirects(cmd.redirs, state, depth)
        words = cmd.words
        while words and is_assignment(words[0]):
            words = words[1:]
        if not words:
            return
        bodies = [r.body for r in cmd.redirs if r.body is not None]
        argv: Args = []
        for word in words:
            found = fields(word)
            argv.extend(found if found is not None else [None])
        ctx = Ctx(self, state, [b.value() for b in bodies], depth)
        try:
            ctx.run(argv, same_shell=True)
        except Opaque:
            self.out.opaque = True
            self.name(cmd.words + bodies, state)  # OUT=R/x python3 gen.py names R/x

    def name(self, words: list[Word], state: _State) -> None:
        """The paths in *words*: each field whole, and each piece of its text between
        quotes, brackets, commas, operators and blanks."""
        ctx = Ctx(self, state, [], 0)
        for word in words:
            for field in fields(word) or ():
                ctx.add(self.out.names, field)
            for token in _SPLIT.split(word.text()):
                if token and "\0" not in token:
                    piece = Field(token)
                    if "*" in token or "?" in token:
                        piece.pattern = token
                    ctx.add(self.out.names, piece)


def _program(name: str) -> str:
    """The program a command word names; a path to one outside the system's
    directories is a program of its own (a script: ``""``, opaque)."""
    if "/" not in name:
        return name
    head, tail = os.path.split(name)
    return tail if head in _SYSTEM_DIRS else ""


class Ctx:
    """What a program handler is told and tells: the directory it runs in, the text
    it reads on stdin (here-documents), and what it writes and runs."""

    __slots__ = ("walker", "state", "inputs", "depth")

    def __init__(self, walker: _Walker, state: _State, inputs: list[str | None],
                 depth: int) -> None:
        self.walker = walker
        self.state = state
        self.inputs = inputs  #: the here-documents and here-strings it reads (None: unknown)
        self.depth = depth

    def join(self, base: str | None, path: str | None) -> str:
        """*path* from *base* (or the current directory); Opaque when it is unknown."""
        where = base if base is not None else self.state.base
        if path is None or (where is None and not os.path.isabs(path)):
            raise Opaque
        return os.path.join(where or "", path)

    def _paths(self, path: str | None, base: str | None = None) -> list[tuple[str, bool]]:
        full = self.join(base, path)
        if "\0" in full:
            raise Opaque  # no file has this name: the runtime cannot even pass it to bash
        pattern = getattr(path, "pattern", None)
        if pattern:
            import glob

            where = base if base is not None else self.state.base
            matches = sorted(glob.glob(os.path.join(glob.escape(where or ""), pattern)))
            if matches:
                return [(m, True) for m in matches[:MAX_PATHS]]
        return [(full, False)]

    def add(self, into: list[tuple[str, bool]], path: str, base: str | None = None) -> None:
        try:
            found = self._paths(path, base)
        except Opaque:
            return
        for full, globbed in found:
            self.walker.out.add(into, full, globbed)

    def write(self, path: str | None, base: str | None = None) -> None:
        """The program writes *path* (None: a path that is not known)."""
        try:
            found = self._paths(path, base)
        except Opaque:
            self.walker.out.opaque = True
            return
        for full, globbed in found:
            self.walker.out.add(self.walker.out.writes, full, globbed)

    def copy(self, target: str | None, source: str | None, into: bool | None) -> None:
        """A copy (cp, mv, ln, install) of *source* to *target*, or into it: *into* True
        (``-t DIR``, several sources), False (``-T``), None (when it is a directory, or
        ends with ``/``). A directory copied is a tree: opaque."""
        for dest, _ in self._paths(target):
            for src, _ in self._paths(source):
                if os.path.isdir(src) and not os.path.islink(src):
                    raise Opaque
                into_dir = into if into is not None else (
                    dest.endswith("/") or os.path.isdir(dest))
                path = os.path.join(dest, os.path.basename(src)) if into_dir else dest
                self.walker.out.add(self.walker.out.writes, path, False)

    def run(self, argv: Args, chdir: str | None = None, same_shell: bool = False) -> None:
        """The command *argv* runs: in this shell (``cd`` stays), or in a process of its
        own, in *chdir* when given."""
        if not argv:
            return
        if argv[0] is None:
            raise Opaque
        state = self.state if same_shell else self.state.copy()
        if chdir is not None:
            state.base = self.join(None, chdir)
        name = _program(argv[0])
        if name in ("cd", "pushd", "popd"):
            if same_shell:
                _cd(name, argv[1:], state)
            return
        handler = PROGRAMS.get(name)
        if handler is None:
            raise Opaque
        handler(argv[1:], Ctx(self.walker, state, self.inputs, self.depth))

    def run_unknown(self, argv: Args) -> None:
        """A command run with arguments nobody can read (``xargs``, ``find -exec``):
        it writes nothing only when it is a reader."""
        if not argv or argv[0] is None or _program(argv[0]) not in READERS:
            raise Opaque

    def script(self, text: str | None, same_shell: bool) -> None:
        """A command line it runs (``sh -c``, ``eval``): in this shell, or its own."""
        if text is None:
            raise Opaque
        state = self.state if same_shell else self.state.copy()
        self.walker.script(text, state, self.depth + 1)


def _cd(name: str, args: Args, state: _State) -> None:
    while args and args[0] in ("-L", "-P", "-e", "-@", "--"):
        args = args[1:]
    if name == "popd" or (name == "pushd" and not args):
        state.base = None  # the directory stack is not followed
        return
    target = args[0] if args else os.path.expanduser("~")
    if target is None or target == "-" or (state.base is None and not os.path.isabs(target)):
        state.base = None
        return
    state.base = os.path.join(state.base or "", target)
