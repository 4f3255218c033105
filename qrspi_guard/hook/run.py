"""`qrspi-guard hook` as a process: argv and stdin in, an answer and an exit code out.

This is the fast route :func:`qrspi_guard.cli.main` takes for ``hook`` (``--help``,
``install`` and ``uninstall`` go through click): it parses its few options itself, so
a call that is not about a review round imports neither click nor pydantic nor YAML,
nor, when it allows, the answers' forms (:mod:`qrspi_guard.hook.respond`).

A broken guard must never stop a run: every failure of the hook itself (bad stdin, an
unreadable file) is one line on stderr and exit 0, unless ``--fail-closed``. Nor is it
ever silently off: an option it cannot use (a bad one on its own command line, which
click would turn into exit 2 and so block every write; a ``--settings`` file it cannot
read) is left out, the call judged with the defaults, and the user told once
(:mod:`qrspi_guard.hook.told`).
"""

from __future__ import annotations

import sys

from qrspi_guard.hook.payload import HookFailure, Refused
from qrspi_guard.hook.runtimes import EVENTS
from qrspi_guard.hook.runtimes import NAMES as RUNTIMES

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, NoReturn

#: ``--output-format``: the exit-2 form, or the runtime's JSON object
#: (:mod:`qrspi_guard.hook.respond`)
FORMATS = ("text", "json")


class Answer:
    """What the hook prints and how it exits."""

    __slots__ = ("stdout", "stderr", "code", "reason")

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0,
                 reason: str = "") -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code
        self.reason = reason  #: a JSON block's reason, for when stdout cannot take it

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Answer) and (self.stdout, self.stderr, self.code) == (
            other.stdout, other.stderr, other.code)

    def __repr__(self) -> str:
        return f"Answer({self.stdout!r}, {self.stderr!r}, {self.code})"


#: option -> its choices (None: a flag; (): any value)
OPTIONS: dict[str, tuple[str, ...] | None] = {
    "--event": EVENTS, "--runtime": RUNTIMES, "--output-format": FORMATS,
    "--fail-closed": None, "--settings": (),
}


class Options:
    """The hook's command line, parsed."""

    __slots__ = ("event", "runtime", "output_format", "fail_closed", "settings")

    def __init__(self, event: str | None = None, runtime: str | None = None,
                 output_format: str = "text", fail_closed: bool = False,
                 settings: str | None = None) -> None:
        self.event = event
        self.runtime = runtime
        self.output_format = output_format
        self.fail_closed = fail_closed
        #: ``--settings FILE``: the project configuration, instead of the one found
        self.settings = settings


def parse(argv: list[str]) -> tuple[Options, str | None]:
    """The options, and what is wrong with the command line (None when nothing). What
    can be read is read even when something else is wrong, so that a failure still
    answers in the form asked for."""
    opts = Options(fail_closed="--fail-closed" in argv)
    problem: str | None = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        i += 1
        if name not in OPTIONS:
            what = "no such option" if arg.startswith("-") else "unexpected argument"
            problem = problem or f"{what}: {arg}"
            continue
        choices = OPTIONS[name]
        if choices is None:
            if eq:
                problem = problem or f"option {name} does not take a value"
            continue
        if not eq:
            if i >= len(argv):
                problem = problem or f"option {name} requires an argument"
                continue
            value = argv[i]
            i += 1
        if choices and value not in choices:
            problem = problem or (f"invalid value for {name}: {value!r} is not one of "
                                  + ", ".join(repr(c) for c in choices))
            continue
        setattr(opts, name[2:].replace("-", "_"), value)
    return opts, problem


#: the plugin's launcher (integrations/) sets this to its own version; a guard of another
#: version exits with :data:`NOT_THIS_VERSION` before it reads stdin, and the launcher
#: looks further (versions must match: a plugin never runs another guard unawares)
LAUNCHER_VERSION = "QRSPI_GUARD_PLUGIN_VERSION"
NOT_THIS_VERSION = 86


def main(argv: list[str]) -> NoReturn:
    """Run the hook on stdin with *argv* (the words after ``hook``) and exit."""
    import os

    wanted = os.environ.get(LAUNCHER_VERSION)
    if wanted is not None:
        from qrspi_guard import __version__

        if wanted != __version__:
            sys.exit(NOT_THIS_VERSION)
    opts, problem = parse(argv)
    execute(opts, None if problem is None else f"its command line ({problem})")


def execute(opts: Options, problem: str | None = None) -> NoReturn:
    """Read the payload on stdin, judge it, print the answer and exit. *problem*: what
    of the command line could not be used (left out: the defaults stand in)."""
    payload: dict[str, Any] | None = None
    result = Answer()
    try:
        from qrspi_guard.hook.payload import load_payload, read_stdin

        payload = load_payload(read_stdin())
        from qrspi_guard.hook.where import triage

        call, target, asks = triage(payload, opts.event, opts.runtime)
        if asks is not None:  # (else about no review round: nothing more to import)
            from qrspi_guard.hook.judging import decide_call

            if opts.settings is not None:
                unusable = _unusable_settings(opts.settings)
                if unusable is not None:
                    problem, opts.settings = problem or unusable, None
            decision = decide_call(call, target, asks, opts.settings)
            if decision.blocks:
                from qrspi_guard.hook.respond import answer

                result = answer(True, _headed(decision.message, problem), opts.output_format,
                                decision.runtime, decision.event)
    except Refused as refused:  # JSON the guard does not read: blocked only near a round
        from qrspi_guard.hook.payload import refusal

        line = refusal(refused)
        if line:
            from qrspi_guard.hook.respond import answer

            result = answer(True, _headed(line, problem), opts.output_format, opts.runtime,
                            opts.event)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:  # a broken guard must not stop a run
        reason = str(exc) if isinstance(exc, HookFailure) else (
            f"internal error: {type(exc).__name__}: {exc}")
        result = _failure(_headed(reason, problem), opts, payload)
    if problem is not None:
        result = _told(result, problem, opts, payload)
    emit(result)


def _headed(message: str, problem: str | None) -> str:
    if problem is None:
        return message
    from qrspi_guard.hook.told import headed

    return headed(message, problem)


def _unusable_settings(path: str) -> str | None:
    """What is wrong with ``--settings FILE`` (None: it can be used)."""
    from qrspi_guard.errors import ConfigFileError
    from qrspi_guard.settings.configfile import load_named

    try:
        load_named(path)
    except ConfigFileError as exc:
        return f"--settings ({exc})"
    return None


def _told(result: Answer, problem: str, opts: Options,
          payload: dict[str, Any] | None) -> Answer:
    from qrspi_guard.hook.payload import runtime_of
    from qrspi_guard.hook.told import first_time, told

    runtime = runtime_of(payload, opts.runtime) if payload is not None else opts.runtime
    return told(result, problem, first_time(payload, runtime, problem))


def _failure(reason: str, opts: Options, payload: dict[str, Any] | None) -> Answer:
    from qrspi_guard.hook.payload import runtime_of
    from qrspi_guard.hook.respond import failure

    runtime, event = opts.runtime, opts.event
    if payload is not None:
        try:
            from qrspi_guard.hook.payload import event_of

            event = event_of(payload, event)
        except HookFailure:
            pass
        runtime = runtime_of(payload, runtime)
    return failure(reason, opts.fail_closed, opts.output_format, runtime, event)


def emit(result: Answer) -> NoReturn:
    """Print *result* and exit with its code. A JSON block that cannot reach stdout
    falls back to the exit-2 form, which every runtime reads as a block."""
    code = result.code
    stderr = result.stderr
    if result.stdout:
        try:
            sys.stdout.write(result.stdout)
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            _silence_stdout()
            stderr = stderr or result.reason
            code = 2
    if stderr:
        try:
            sys.stderr.write(stderr)
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
    sys.exit(code)


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
