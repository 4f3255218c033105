"""`qrspi-guard check`: one-shot validation and CI gate (cli.md).

A thin shell: the options become one :class:`qrspi_guard.gate.CheckRequest`, one call
(:func:`qrspi_guard.gate.run`) judges, fixes, renders and writes, and what comes back is
printed and is the exit code. Failures are raised as
:class:`~qrspi_guard.errors.GuardError` and become one line and exit 2 in
:func:`qrspi_guard.cli.main`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

import click

from qrspi_guard.cli.options import (
    build_overrides,
    given,
    override_options,
    selection_options,
    settings_file_option,
)
from qrspi_guard.cli.process import fast_exit
from qrspi_guard.output import FORMATS
from qrspi_guard.settings.declared import help_of

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.gate import Note

#: the most read from standard input for --stdin-filename (a finding is at most 1 MiB)
STDIN_LIMIT = 16 * 1024 * 1024


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


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text",
              help=help_of("format"))
@click.option("--strict/--no-strict", default=False, help=help_of("strict"))
@override_options
@selection_options
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when errors are reported (2 still means could not run).")
@click.option("--statistics", is_flag=True,
              help="Print the number of diagnostics per cause instead of each one.")
@click.option("--show-settings", is_flag=True,
              help="Print the resolved settings and where each came from, and exit.")
@click.option("--isolated", is_flag=True, help="Read no project configuration file.")
@settings_file_option
@click.option("--write-status", is_flag=True,
              help="Write round-NN-guard.json beside each round checked.")
@click.option("--fix", is_flag=True, help="Normalise trailing newlines (the only fix).")
@click.option("--output", "output", type=click.Path(dir_okay=False),
              help="Also write the report to FILE, atomically (see --output-format).")
@click.option("--output-format", "output_format", type=click.Choice(list(FORMATS)),
              help="The format written to --output, while stdout keeps --format. Without "
              "it, FILE gets --format (json for text) and stdout gets text.")
@click.option("--baseline", "baseline_file", metavar="FILE",
              help="Leave out the diagnostics recorded in FILE (see --write-baseline); "
              "replaces the config file's baseline.")
@click.option("--write-baseline", metavar="FILE",
              help="Record every diagnostic of today's tree in FILE and exit 0.")
@click.option("--stdin-filename", metavar="PATH",
              help="With PATH '-': judge standard input as the file at PATH (editors).")
@click.option("--quiet", "-q", is_flag=True,
              help="Only what fails (and the summary), in every format.")
@click.option("--color", "color_choice", type=click.Choice(["auto", "always", "never"]),
              default="auto", show_default=True,
              help="Colour the text output (auto: on a terminal, unless NO_COLOR; "
              "FORCE_COLOR forces it).")
@click.option("--no-color", is_flag=True, help="Same as --color never.")
@click.pass_context
def check(ctx: click.Context, paths: tuple[str, ...], fmt: str, strict: bool,
          step: str | None, second_reviewer: bool | None, verifier: bool | None,
          require_sidecars: bool, expect: str | None, config_file: str | None,
          protocol: str, round_no: int | None, select: tuple[str, ...],
          extend_select: tuple[str, ...], ignore: tuple[str, ...], exit_zero: bool,
          statistics: bool, show_settings: bool, isolated: bool,
          settings_file: str | None, write_status: bool,
          fix: bool, output: str | None, output_format: str | None,
          baseline_file: str | None, write_baseline: str | None,
          stdin_filename: str | None, quiet: bool,
          color_choice: str, no_color: bool) -> None:
    """Validate review rounds under PATH (default: .) and exit 0, 1 (halt) or 2.

    \b
    Examples:
      qrspi-guard check docs/qrspi/2026-05-17-auth-rework
      qrspi-guard check reviews/design/round-03 --format github
      qrspi-guard check . --format sarif --output guard.sarif
      qrspi-guard check . --format github --output guard.sarif --output-format sarif
      qrspi-guard check . --ignore fnum_gap,trailing_newline --statistics
      qrspi-guard check . --write-baseline qrspi-guard-baseline.json
      qrspi-guard check . --baseline qrspi-guard-baseline.json
      qrspi-guard check --stdin-filename reviews/design/round-03/quality-claude.finding-F01.md -
    """
    from qrspi_guard.gate import CheckRequest, run
    from qrspi_guard.settings import CommandLine

    started = time.monotonic()
    _tolerant_stdout()
    cli = CommandLine(
        format=fmt if given(ctx, "fmt") else None,
        strict=strict if given(ctx, "strict") else None,
        select=select or None, extend_select=extend_select, ignore=ignore,
        protocol=protocol if given(ctx, "protocol") else None, isolated=isolated,
        settings_file=settings_file)
    base = build_overrides(step, second_reviewer, verifier, require_sidecars, expect,
                           config_file, protocol, round_no)
    request = CheckRequest(
        paths=paths, cli=cli, base=base, show_settings=show_settings,
        statistics=statistics, write_status=write_status, fix=fix, output=output,
        output_format=output_format, baseline_file=baseline_file,
        write_baseline=write_baseline, stdin_filename=stdin_filename, quiet=quiet,
        exit_zero=exit_zero,
        color=not no_color and use_color(color_choice, os.environ, _isatty(sys.stdout)),
        step_summary=os.environ.get("GITHUB_STEP_SUMMARY") or None, stdin=_read_stdin,
        started=started)
    outcome = run(request, _say)
    click.echo(outcome.text, nl=False, color=outcome.color)  # click would strip colour
    if outcome.error is not None:
        raise outcome.error
    fast_exit(outcome.exit_code)


def _say(note: Note) -> None:
    """One line on standard error, in the guard's form."""
    if note.level == "progress":
        click.echo(note.text, err=True)
    elif note.level == "said":
        click.echo(f"qrspi-guard: {note.text}", err=True)
    else:
        click.echo(f"qrspi-guard: {note.level}: {note.text}", err=True)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _tolerant_stdout() -> None:
    """Text that a terminal's encoding cannot show is backslash-escaped, never a crash
    (the guard's own output is escaped already; this covers a non-UTF-8 locale)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="backslashreplace")
        except (ValueError, OSError):
            pass


def _read_stdin() -> bytes:
    from qrspi_guard.errors import InputError
    from qrspi_guard.parse.capped import read_stream

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("standard input is closed")
    try:
        data = read_stream(stream, STDIN_LIMIT)
    except OSError as exc:
        raise InputError(f"cannot read standard input: {exc.strerror or exc}") from None
    if data is None:
        raise InputError(f"standard input is larger than {STDIN_LIMIT} bytes")
    return data

