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
from typing import TYPE_CHECKING

import click

from qrspi_guard.cli.conventions import (
    Choice,
    color_options,
    colored,
    reached,
    say,
    say_error,
    say_warning,
    tolerant_stdout,
)
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


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=Choice(list(FORMATS)), default="text",
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
              help="Also write the report to FILE, atomically, in the format FILE's "
              "extension names (.json json, .sarif sarif, .xml junit, .txt text; any "
              "other: --format); stdout gets text. See --output-format.")
@click.option("--output-format", "output_format", type=Choice(list(FORMATS)),
              help="The format written to --output, whatever FILE's extension, while "
              "stdout keeps --format.")
@click.option("--baseline", "baseline_file", metavar="FILE",
              help="Leave out the diagnostics recorded in FILE (see --write-baseline); "
              "replaces the config file's baseline.")
@click.option("--write-baseline", metavar="FILE",
              help="Record every diagnostic of today's tree in FILE and exit 0.")
@click.option("--stdin-filename", metavar="PATH",
              help="With PATH '-': judge standard input as the file at PATH (editors).")
@click.option("--quiet", "-q", is_flag=True,
              help="Only what fails (and the summary), in every format.")
@color_options
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
    tolerant_stdout()
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
        color=colored(color_choice, no_color),
        step_summary=os.environ.get("GITHUB_STEP_SUMMARY") or None, stdin=_read_stdin,
        started=started)
    outcome = run(request, _say)
    # the verdict is reached before it is printed: a closed pipe ends the run with it
    reached(outcome.exit_code)
    click.echo(outcome.text, nl=False, color=outcome.color)  # click would strip colour
    if outcome.error is not None:
        raise outcome.error
    fast_exit(outcome.exit_code)


def _say(note: Note) -> None:
    """One line on standard error, in the guard's one form."""
    if note.level == "progress":
        click.echo(note.text, err=True)
    elif note.level == "said":
        say(note.text)
    elif note.level == "warning":
        say_warning(note.text)
    else:
        say_error(note.text)


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

