"""What each program writes, read from its arguments: the hook's table of programs.

:data:`PROGRAMS` maps a program's name to a function of its arguments (each a
:class:`~qrspi_guard.hook.bash.fields.Field`, or None where an expansion makes it
unknown) and a :class:`~qrspi_guard.hook.shellwrites.Ctx`, which it tells what the
program writes (``ctx.write``, ``ctx.copy``) and what it runs (``ctx.run``,
``ctx.script``; :mod:`~qrspi_guard.hook.bash.runners`). A program whose writes
cannot be read from its arguments raises :class:`~qrspi_guard.hook.bash.options.Opaque`;
so does every program that is not in the table. Options are read as the program reads
them (:func:`~qrspi_guard.hook.bash.options.getopt`).
"""

from __future__ import annotations

import re

from qrspi_guard.hook.bash.options import Args, Opaque, getopt, given, known
from qrspi_guard.hook.bash.runners import RUNNERS
from qrspi_guard.hook.bash.sed import sed_writes

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from qrspi_guard.hook.shellwrites import Ctx

    Handler = Callable[[Args, Ctx], None]

#: programs that write nothing, whatever their arguments (their output goes to stdout;
#: ``rm`` and its kind leave nothing to judge)
READERS = frozenset("""
    cat tac ls dir vdir grep egrep fgrep zgrep zcat ag head tail wc stat more echo printf
    true false test [ pwd diff cmp cut tr jq column nl fold comm paste join expand unexpand
    rev fmt seq yes numfmt basename dirname realpath readlink which type sleep date
    sha1sum sha224sum sha256sum sha384sum sha512sum md5sum b2sum cksum sum od hexdump
    strings printenv id whoami groups uname hostname nproc du df tty locale getconf :
    export declare typeset local readonly unset set shopt read mapfile readarray let
    shift getopts wait exit return break continue umask ulimit kill jobs disown hash
    alias unalias help dirs caller compgen complete enable rm unlink rmdir
    """.split())
#: git subcommands that write nothing in the work tree (but for ``--output``)
GIT_READ = frozenset("""status diff log show ls-files rev-parse blame grep branch shortlog
    describe cat-file ls-tree rev-list diff-tree diff-index diff-files show-ref
    for-each-ref merge-base whatchanged""".split())


def _nothing(args: Args, ctx: Ctx) -> None:
    return None


def _operands(values: str = "", longs: tuple[str, ...] = (),
              optional: tuple[str, ...] = ()) -> Handler:
    """A program that writes every operand (``tee``, ``touch``, ``mkdir``...)."""
    def handler(args: Args, ctx: Ctx) -> None:
        for path in getopt(args, values, longs, optional)[1]:
            ctx.write(path)
    return handler


def _guarded(pattern: str) -> Handler:
    """A reader with a few options that write or run something: opaque with them."""
    def handler(args: Args, ctx: Ctx) -> None:
        if any(a is None or re.match(pattern, a) for a in args):
            raise Opaque
    return handler


def _sort(args: Args, ctx: Ctx) -> None:
    opts, _ = getopt(known(args), "kotST", (
        "key", "field-separator", "output", "temporary-directory", "buffer-size", "parallel",
        "batch-size", "compress-program", "files0-from", "random-source", "sort"))
    if given(opts, "--compress-program"):
        raise Opaque  # a program sort runs
    for path in given(opts, "-o", "--output"):
        ctx.write(path)


def _uniq(args: Args, ctx: Ctx) -> None:
    """``uniq [options] [input [output]]``."""
    _, ops = getopt(known(args), "fsw", ("skip-fields", "skip-chars", "check-chars"),
                    ("all-repeated", "group"))
    if len(ops) > 1 and ops[1] != "-":
        ctx.write(ops[1])


def _xxd(args: Args, ctx: Ctx) -> None:
    """``xxd [options] [infile [outfile]]``; ``-c8`` and ``-cols 8`` alike."""
    rest = known(args)
    ops: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if ops or a == "-" or not a.startswith("-"):
            ops.append(a)
        elif a == "--":
            ops.extend(rest[i:])
            break
        elif a[1] in "cglosnR" and (len(a) == 2 or a[2:] in (
                "ols", "roupsize", "en", "ffset", "eek", "ame")):
            i += 1  # its value is the next argument
    if len(ops) > 1 and ops[1] != "-":
        ctx.write(ops[1])


def _tree(args: Args, ctx: Ctx) -> None:
    opts, _ = getopt(known(args), "LPIHTo", ("charset", "filelimit", "timefmt", "sort",
                                             "hintro", "houtro", "infofile", "gitfile"))
    for path in given(opts, "-o"):
        ctx.write(path)


def _find(args: Args, ctx: Ctx) -> None:
    """``-fprint F``, ``-fprint0 F``, ``-fprintf F FORMAT``, ``-fls F``; ``-exec`` and its
    kind run a command on files it finds."""
    rest = known(args)
    i = 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if a in ("-fprint", "-fprint0", "-fls", "-fprintf"):
            ctx.write(rest[i] if i < len(rest) else None)
            i += 2 if a == "-fprintf" else 1
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i, len(rest)) if rest[j] in (";", "+")), len(rest))
            ctx.run_unknown(list(rest[i:end]))
            i = end + 1


def _git(args: Args, ctx: Ctx) -> None:
    """The reading subcommands write nothing but ``--output FILE``; any other, or a
    ``-c`` setting (which can name a program), is opaque."""
    rest = known(args)
    i, where = 0, None
    while i < len(rest) and rest[i].startswith("-"):
        a = rest[i]
        i += 1
        if a == "-C":
            where = ctx.join(where, rest[i] if i < len(rest) else None)
            i += 1
        elif a == "-c" or a.startswith(("--exec-path", "--config-env")):
            raise Opaque
        elif a in ("--git-dir", "--work-tree", "--namespace", "--super-prefix"):
            i += 1
    sub, options = (rest[i], rest[i + 1:]) if i < len(rest) else ("", [])
    if sub and sub not in GIT_READ:
        raise Opaque
    for j, a in enumerate(options):
        if a == "--":
            break
        if a.startswith("--output="):
            ctx.write(a[len("--output="):], where)
        elif a == "--output":
            ctx.write(options[j + 1] if j + 1 < len(options) else None, where)
        elif a == "--ext-diff" or a.startswith(("-O", "--open-files-in-pager")):
            raise Opaque  # a program git runs


_SED_FLAGS = ("null-data", "zero-terminated", "quiet", "silent", "regexp-extended",
              "separate", "sandbox", "unbuffered", "posix", "debug", "follow-symlinks",
              "binary", "help", "version")
#: the options sed has, but ``-f``/``--file`` (a script in a file: opaque)
_SED_OPTIONS = frozenset({"-n", "-r", "-s", "-u", "-E", "-z", "-e", "-l", "-i",
                          "--expression", "--line-length", "--in-place",
                          *(f"--{flag}" for flag in _SED_FLAGS)})


def _sed(args: Args, ctx: Ctx) -> None:
    """``sed -i`` rewrites its files; its script's ``w`` commands and flags write theirs."""
    opts, files = getopt(known(args), "elf", ("expression", "file", "line-length"),
                         ("in-place",), attached="i", flags=_SED_FLAGS)
    if any(key not in _SED_OPTIONS for key, _ in opts):
        raise Opaque  # -f FILE, or an option sed does not have
    scripts = [value or "" for value in given(opts, "-e", "--expression")]
    if not scripts and files:
        scripts.append(files.pop(0) or "")
    written = sed_writes("\n".join(scripts))
    if given(opts, "--sandbox"):
        return  # w, r and e are refused: sed writes nothing
    for path in written:
        ctx.write(path)
    for file in files if given(opts, "-i", "--in-place") else ():
        ctx.write(file)


def _perl(args: Args, ctx: Ctx) -> None:
    """``perl -i``: the files it rewrites; any other perl can write anything."""
    rest = known(args)
    in_place, has_script, files, i = False, False, [], 0
    while i < len(rest):
        a = rest[i]
        i += 1
        if a == "--":
            files.extend(rest[i:])
            break
        if a.startswith("-") and len(a) > 1:
            letters = re.split("[eE]", a[1:])[0]
            if len(letters) < len(a) - 1:
                has_script = True
                i += 1
            in_place = in_place or "i" in letters
        else:
            files.append(a)
    if not in_place:
        raise Opaque
    for path in files if has_script else files[1:]:
        ctx.write(path)


_AWK_FLAGS = frozenset(("-b", "-c", "-C", "-g", "-h", "-M", "-n", "-N", "-O", "-P", "-r",
                        "-s", "-t", "-V", "--posix", "--traditional", "--re-interval",
                        "--characters-as-bytes", "--non-decimal-data", "--bignum"))


def _awk(args: Args, ctx: Ctx) -> None:
    """An awk program with no ``>``, ``|`` or ``system`` in it writes nothing (one that
    compares with ``>`` is read as one that may write: opaque)."""
    rest = known(args)
    programs: list[str] = []
    sandbox = False
    i = 0
    while i < len(rest) and rest[i].startswith("-") and rest[i] != "-":
        a = rest[i]
        i += 1
        if a == "--":
            break
        if a[:2] in ("-F", "-v"):
            i += len(a) == 2
        elif a == "-e" or a.startswith("--source"):
            programs.append(a.partition("=")[2] or (rest[i] if i < len(rest) else ""))
            i += "=" not in a
        elif a in ("-S", "--sandbox"):
            sandbox = True
        elif a not in _AWK_FLAGS:
            raise Opaque  # -f FILE, -i, -o FILE, -p, -d: a file read or written
    if not programs:
        programs.append(rest[i] if i < len(rest) else "")
    if not sandbox and any(c in p for p in programs for c in (">", "|", "system")):
        raise Opaque


def _yq(args: Args, ctx: Ctx) -> None:
    """``yq -i EXPRESSION FILE...`` rewrites its files (``yq -i FILE`` its one)."""
    rest = known(args)
    if not any(a in ("--inplace", "--in-place") or re.fullmatch(r"-[A-Za-z]*i[A-Za-z]*", a)
               for a in rest):
        return
    operands = [a for a in rest if not a.startswith("-")]
    for path in operands[1:] if len(operands) > 1 else operands:
        ctx.write(path)


def _copy(values: str, longs: tuple[str, ...], optional: tuple[str, ...],
          install: bool = False) -> Handler:
    """cp, mv, install, ln: their destination, or each source in the target directory."""
    def handler(args: Args, ctx: Ctx) -> None:
        opts, ops = getopt(args, values, longs, optional)
        if given(opts, "--strip-program"):
            raise Opaque
        if install and given(opts, "-d", "--directory"):  # the directories it makes
            for path in ops:
                ctx.write(path)
            return
        target = (given(opts, "-t", "--target-directory") or [None])[-1]
        into: bool | None = True
        sources = ops
        if target is None:
            if len(ops) < 2:
                return
            *sources, target = ops
            into = False if given(opts, "-T", "--no-target-directory") else (
                True if len(sources) > 1 else None)
        for source in sources:
            ctx.copy(target, source, into)
    return handler


def _chmod(args: Args, ctx: Ctx) -> None:
    """chmod, chown, chgrp: the files after the mode or owner (``chmod -w f`` too)."""
    operands: list[str] = []
    reference = recursive = ended = False
    for a in known(args):
        if ended or a == "-" or not a.startswith("-"):
            operands.append(a)
        elif a == "--":
            ended = True
        elif a.startswith("--"):
            recursive = recursive or a == "--recursive"
            reference = reference or a.startswith("--reference")
        elif re.fullmatch(r"-[cfvRHLP]+", a):
            recursive = recursive or "R" in a
        else:
            operands.append(a)  # a mode: -w
    if recursive:
        raise Opaque  # every file below: not on the command line
    for path in operands[0 if reference else 1:]:
        ctx.write(path)


def _dd(args: Args, ctx: Ctx) -> None:
    for a in known(args):
        if a.startswith("of="):
            ctx.write(a[3:])


def _shred(args: Args, ctx: Ctx) -> None:
    opts, ops = getopt(args, "ns", ("iterations", "size", "random-source"), ("remove",))
    if not given(opts, "-u", "--remove"):
        for path in ops:
            ctx.write(path)


def _mktemp(args: Args, ctx: Ctx) -> None:
    opts, ops = getopt(args, "p", (), ("tmpdir", "suffix"))
    if ops or given(opts, "-p", "--tmpdir"):
        raise Opaque  # a file of a random name, where the command says


PROGRAMS: dict[str, Handler] = {
    **{name: _nothing for name in READERS},
    "sort": _sort, "uniq": _uniq, "xxd": _xxd, "tree": _tree, "find": _find, "git": _git,
    "sed": _sed, "gsed": _sed, "perl": _perl, "yq": _yq,
    "awk": _awk, "gawk": _awk, "mawk": _awk, "nawk": _awk,
    "rg": _guarded(r"--pre(=|$)"),
    "less": _guarded(r"-[A-Za-z]*[oO]|--log-file|--LOG-FILE"),
    "file": _guarded(r"-[A-Za-z]*C|--compile"),
    "tee": _operands("", (), ("output-error",)),
    "touch": _operands("drt", ("date", "reference", "time")),
    "mkdir": _operands("m", ("mode",), ("context",)),
    "truncate": _operands("sr", ("size", "reference")),
    "cp": _copy("St", ("target-directory", "suffix", "sparse", "no-preserve"),
                ("backup", "reflink", "preserve", "context", "update")),
    "mv": _copy("St", ("target-directory", "suffix"), ("backup", "update", "context")),
    "ln": _copy("St", ("target-directory", "suffix"), ("backup",)),
    "install": _copy("gmoSt", ("group", "mode", "owner", "suffix", "target-directory",
                               "strip-program"), ("backup", "context"), install=True),
    "chmod": _chmod, "chown": _chmod, "chgrp": _chmod,
    "dd": _dd, "shred": _shred, "mktemp": _mktemp,
    **RUNNERS,
}
