"""Programs that run their arguments: never read-only, each is what it runs.

``env``, ``command``, ``builtin``, ``exec``, ``nice``, ``nohup``, ``time``,
``timeout``, ``stdbuf``, ``setsid``, ``sudo`` and ``doas`` run the command their
arguments name once their own options are read: that command is judged in their
place (``env -C DIR`` runs it in DIR). ``xargs`` and ``find -exec`` add arguments
nobody can read here: they write nothing only when the command they run is a reader.
``sh -c``, ``bash -c`` (and the other shells) run a command line, read like the
outer one; with no ``-c`` and no script file, the here-document or here-string they
read is that command line. ``eval`` and ``trap`` run their arguments joined as a
command line in the same shell. An option these programs do not have, a command
line that is not known (``sh -c "$X"``), a script file: opaque.
"""

from __future__ import annotations

from qrspi_guard.hook.bash.options import Args, Opaque

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from qrspi_guard.hook.shellwrites import Ctx

SHELLS = ("sh", "bash", "dash", "ksh", "mksh", "zsh", "ash")


def _skip(args: Args, flags: tuple[str, ...] = (), values: tuple[str, ...] = (),
          attached: str = "") -> tuple[int, list[tuple[str, str | None]]]:
    """Where a runner's own options end (the index of the command it runs), and those
    options. *flags* take no value, *values* take the next argument (or ``=VALUE``),
    short options in *attached* may carry it attached (``-n10``). Anything else that
    starts with ``-`` is an option this runner does not have: opaque."""
    i = 0
    opts: list[tuple[str, str | None]] = []
    while i < len(args):
        a = args[i]
        if a is None:
            raise Opaque
        if a == "--":
            return i + 1, opts
        if not a.startswith("-") or a == "-":
            return i, opts
        i += 1
        name, eq, value = a.partition("=")
        if a in flags or (eq and name in values):
            opts.append((name, value if eq else None))
        elif a in values:
            opts.append((a, args[i] if i < len(args) else None))
            i += 1
        elif len(a) > 2 and a[1] in attached and not a.startswith("--"):
            opts.append((a[:2], a[2:]))
        else:
            raise Opaque
    return i, opts


def _env(args: Args, ctx: Ctx) -> None:
    i, opts = _skip(args, ("-i", "-", "--ignore-environment", "-0", "--null", "-v", "--debug",
                           "--list-signal-handling", "--ignore-signal", "--default-signal",
                           "--block-signal"),
                    ("-u", "--unset", "-C", "--chdir"), attached="uC")
    while i < len(args):  # NAME=VALUE words set the command's environment
        word = args[i]
        if word is None or "=" not in word:
            break
        i += 1
    chdir = [v for k, v in opts if k in ("-C", "--chdir")]
    if None in chdir:
        raise Opaque
    if i < len(args):
        ctx.run(args[i:], chdir=chdir[-1] if chdir else None, same_shell=False)


def _command(args: Args, ctx: Ctx) -> None:
    i, opts = _skip(args, ("-p", "-v", "-V", "-pv", "-pV"))
    if any("v" in k or "V" in k for k, _ in opts) or i >= len(args):
        return  # prints where the command is
    ctx.run(args[i:], same_shell=True)


def _builtin(args: Args, ctx: Ctx) -> None:
    if args:
        ctx.run(args, same_shell=True)


def _exec(args: Args, ctx: Ctx) -> None:
    i, _ = _skip(args, ("-c", "-l", "-cl", "-lc"), ("-a",))
    if i < len(args):
        ctx.run(args[i:], same_shell=True)


def _runner(flags: tuple[str, ...] = (), values: tuple[str, ...] = (), attached: str = "",
            operands: int = 0) -> Callable[[Args, Ctx], None]:
    """A runner: its options, *operands* words of its own (``timeout``'s duration),
    then the command it runs."""
    def handler(args: Args, ctx: Ctx) -> None:
        i, _ = _skip(args, flags, values, attached)
        i += operands
        if i < len(args):
            ctx.run(args[i:], same_shell=False)
    return handler


def _time(args: Args, ctx: Ctx) -> None:
    """``time`` (GNU's, or the keyword's ``-p``): ``-o FILE`` is written."""
    i, opts = _skip(args, ("-p", "-v", "--verbose", "-a", "--append", "-q", "--quiet",
                           "--portability"), ("-f", "--format", "-o", "--output"))
    for key, value in opts:
        if key in ("-o", "--output"):
            ctx.write(value)
    if i < len(args):
        ctx.run(args[i:], same_shell=False)


def _xargs(args: Args, ctx: Ctx) -> None:
    i, _ = _skip(args, ("-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-p",
                        "--interactive", "-x", "--exit", "-o", "--open-tty", "--show-limits",
                        "-i", "-l", "-e", "--replace", "--max-lines", "--eof"),
                 ("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "-P",
                  "-s", "--max-args", "--max-procs", "--max-chars", "--process-slot-var",
                  "--max-lines", "--replace", "--eof"), attached="adEILnPsile")
    ctx.run_unknown(args[i:] if i < len(args) else ["echo"])


def _shell(args: Args, ctx: Ctx) -> None:
    """``sh -c LINE``; ``sh`` reading its here-document; ``sh FILE`` is opaque."""
    command = stdin = False
    i = 0
    while i < len(args):
        a = args[i]
        if a is None:
            raise Opaque
        i += 1
        if a in ("--", "-"):
            break
        if a in ("--rcfile", "--init-file"):
            i += 1
        elif a.startswith("--"):
            continue
        elif a[:1] in "-+" and len(a) > 1:
            command = command or "c" in a[1:]
            stdin = stdin or "s" in a[1:]
            i += a[1:].count("o") + a[1:].count("O")  # -o NAME: a shell option's name
        else:
            i -= 1
            break
    operands = args[i:]
    if command:
        if not operands:
            raise Opaque
        ctx.script(operands[0], same_shell=False)
    elif operands and not stdin:
        raise Opaque  # a script file
    elif ctx.inputs:
        for text in ctx.inputs:
            ctx.script(text, same_shell=False)
    else:
        raise Opaque  # commands read from a pipe


def _eval(args: Args, ctx: Ctx) -> None:
    if any(a is None for a in args):
        raise Opaque
    ctx.script(" ".join(a for a in args if a is not None), same_shell=True)


def _trap(args: Args, ctx: Ctx) -> None:
    """``trap ACTION SIGNAL...``: the action runs later, in this shell."""
    if len(args) >= 2 and args[0] not in ("-", "-p", "-l", "--"):
        ctx.script(args[0], same_shell=False)


RUNNERS: dict[str, Callable[[Args, Ctx], None]] = {
    "env": _env, "command": _command, "builtin": _builtin, "exec": _exec, "time": _time,
    "nice": _runner((), ("-n", "--adjustment"), attached="n0123456789"),
    "nohup": _runner(),
    "timeout": _runner(("--preserve-status", "--foreground", "-v", "--verbose"),
                       ("-s", "--signal", "-k", "--kill-after"), attached="sk", operands=1),
    "stdbuf": _runner((), ("-i", "-o", "-e", "--input", "--output", "--error"),
                      attached="ioe"),
    "setsid": _runner(("-c", "-f", "-w", "--ctty", "--fork", "--wait")),
    "sudo": _runner(("-A", "-b", "-E", "-H", "-K", "-k", "-n", "-P", "-S", "-N", "-B"),
                    ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user",
                     "--group", "--chdir", "--prompt"), attached="ugCDhprtTU"),
    "doas": _runner(("-n",), ("-u",)),
    "xargs": _xargs, "eval": _eval, "trap": _trap,
    **{name: _shell for name in SHELLS},
}
