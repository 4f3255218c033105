"""The command line's conventions, in one place (cli.md "Conventions every command
shares"). Every command follows them; :func:`qrspi_guard.cli.main` applies the ones
about failures, so a command only raises or returns.

- **The error line**: ``qrspi-guard COMMAND: error: WHAT`` (:mod:`qrspi_guard.voice`),
  one line on stderr, for every command; a drop-in's message that upstream's suite pins
  keeps its words after that prefix.
- **Exit codes**: 0 ok; 1 the command's verdict failed (each command says what fails);
  2 it could not run (a bad argument, a missing path, an output that cannot be
  written), except the drop-ins, whose bad-argument code is their upstream script's
  (:data:`BAD_ARGUMENT`), and ``hook``, whose 2 blocks a tool call. An interrupt is
  128 + the signal (Ctrl-C 130, SIGTERM 143), except ``watch``, which stops cleanly
  with 0.
- **A closed pipe** on stdout (``| head -1``) is not a failure to run: the command
  stops quietly and exits with the verdict it had reached (:func:`reached`). A full
  disk or another write error on stdout is one line and exit 2.
- **Did you mean**: a mistyped subcommand (:class:`Group`), option
  (:func:`usage_line`) or choice value (:class:`Choice`) names the nearest known one.
- **Colour**: :func:`use_color`, one rule for every command that colours.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import click

from qrspi_guard import voice
from qrspi_guard.textsafe import one_line

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CANNOT_RUN = 2
EXIT_INTERRUPTED = 130
#: a drop-in's exit code for a bad argument: its upstream script's (loop.md)
BAD_ARGUMENT: dict[str, int] = {"fan-in": 2, "await": 1, "prepare": 1, "review-prep": 1}

#: the command being run (set by :func:`begin`) and the verdict it has reached
_run: dict[str, Any] = {"command": None, "verdict": EXIT_OK}


def begin(command: str | None) -> None:
    """A new run of *command* (None: the group itself, or an unknown command)."""
    _run["command"] = command
    _run["verdict"] = EXIT_OK


def command() -> str | None:
    return _run["command"]  # type: ignore[no-any-return]


def reached(code: int) -> int:
    """Record the exit code the command has decided on before it writes its result, so
    a closed pipe ends the run with it; returns *code*."""
    _run["verdict"] = code
    return code


def verdict() -> int:
    return _run["verdict"]  # type: ignore[no-any-return]


def bad_argument() -> int:
    """The running command's exit code for a bad argument."""
    return BAD_ARGUMENT.get(command() or "", EXIT_CANNOT_RUN)


# -- lines on stderr -------------------------------------------------------------------


def error_line(what: str) -> str:
    return voice.error_line(command(), one_line(what))


def say_error(what: str) -> None:
    click.echo(error_line(what), err=True)


def say_warning(what: str) -> None:
    click.echo(voice.warning_line(command(), one_line(what)), err=True)


def say(what: str) -> None:
    """A note: ``qrspi-guard COMMAND: WHAT``."""
    click.echo(voice.line(command(), one_line(what)), err=True)


def shown(word: str) -> str:
    """A word the user typed, quoted for a message (escaped, bounded)."""
    return repr(one_line(word, 80))


def usage_line(exc: click.UsageError) -> str:
    """The one line for a usage error: click's words, an unknown option with the
    nearest known one, and where the help is."""
    if isinstance(exc, click.NoSuchOption):
        what = (f"no such option {shown(exc.option_name)}"
                f"{voice.did_you_mean(exc.option_name, exc.possibilities or ())}")
    else:
        what = one_line(exc.format_message())
    where = exc.ctx.command_path if exc.ctx is not None else voice.PROG
    return error_line(f"{what} (see '{where} --help')")


def no_rounds_warning(paths: Iterable[str]) -> None:
    """A run that found no round to judge says so (it still exits 0, as ruff does when it
    finds no Python file)."""
    say_warning(voice.no_rounds(", ".join(one_line(p) for p in paths) or "."))


# -- did you mean ----------------------------------------------------------------------

if TYPE_CHECKING:  # click >= 8.2's Choice is generic; click 8.1's is not subscriptable
    _Choice = click.Choice[str]
else:
    _Choice = click.Choice


class Choice(_Choice):
    """click's Choice, whose refusal names the nearest choice."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            hint = voice.did_you_mean(str(value), [str(c) for c in self.choices])
            if not hint:
                raise
            self.fail(exc.message.rstrip(".") + hint, param, ctx)


class Group(click.Group):
    """A click group whose unknown subcommand names the nearest one."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            name = args[0] if args else ""
            if not name or name.startswith("-") or self.get_command(ctx, name) is not None:
                raise
            hint = voice.did_you_mean(name, self.list_commands(ctx))
            raise click.UsageError(f"no such command {shown(name)}{hint}", ctx) from None


# -- colour and the terminal -----------------------------------------------------------


def use_color(choice: str, env: Mapping[str, str], isatty: bool) -> bool:
    """``--color always|never`` win; with ``auto``, a non-empty ``NO_COLOR`` turns colour
    off, else a non-empty ``FORCE_COLOR`` turns it on, else colour on a terminal only
    (CPython's own rule: NO_COLOR wins over FORCE_COLOR)."""
    if choice != "auto":
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return isatty


def isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def color_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--color auto|always|never`` and ``--no-color``; read them with :func:`colored`."""
    f = click.option("--no-color", is_flag=True, help="Same as --color never.")(f)
    return click.option("--color", "color_choice", type=Choice(["auto", "always", "never"]),
                        default="auto", show_default=True,
                        help="Colour (auto: on a terminal, unless NO_COLOR; FORCE_COLOR "
                        "forces it).")(f)


def colored(color_choice: str, no_color: bool) -> bool:
    """Whether stdout gets colour under ``--color``/``--no-color`` and the environment."""
    return not no_color and use_color(color_choice, os.environ, isatty(sys.stdout))


def tolerant_stdout() -> None:
    """Text that a terminal's encoding cannot show is backslash-escaped, never a crash
    (the guard's own output is escaped already; this covers a non-UTF-8 locale)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass
