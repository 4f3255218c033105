"""`qrspi-guard check`: one-shot validation and CI gate (cli.md).

A thin shell: each PATH gets the :class:`qrspi_guard.judge.Judge` of the project
configuration found from it upward (the command line over that file over the
environment), the judges judge (the rule selection applied inside), a reporter renders,
and :mod:`qrspi_guard.output.files` writes. Failures are raised as
:class:`~qrspi_guard.errors.GuardError` and become one line and exit 2 in
:func:`qrspi_guard.cli.main`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from qrspi_guard.cli.conventions import (
    Choice,
    color_options,
    colored,
    no_rounds_warning,
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
from qrspi_guard.output import FORMATS, ReportOptions, format_for_file
from qrspi_guard.settings.declared import help_of
from qrspi_guard.voice import plural

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.engine import CheckResult
    from qrspi_guard.output.baseline import Baseline

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
    import time

    from qrspi_guard.errors import OutputError, UsageError
    from qrspi_guard.judge import judges_for, merge
    from qrspi_guard.output import renderer
    from qrspi_guard.settings import CommandLine
    from qrspi_guard.textsafe import one_line

    started = time.monotonic()
    tolerant_stdout()
    from_stdin = "-" in paths
    base = build_overrides(step, second_reviewer, verifier, require_sidecars, expect,
                           config_file, protocol, round_no)
    # each PATH is judged under the project configuration found from it upward (cli.md
    # "Where configuration is found"); the first PATH's also gives format and strict
    cli = CommandLine(
        format=fmt if given(ctx, "fmt") else None,
        strict=strict if given(ctx, "strict") else None,
        select=select or None, extend_select=extend_select, ignore=ignore,
        protocol=protocol if given(ctx, "protocol") else None, isolated=isolated,
        settings_file=settings_file)
    judged = (stdin_filename,) if stdin_filename is not None and from_stdin else paths
    judges = judges_for([p for p in judged if p != "-"], cli, base)
    settings = judges[0][0].settings
    if show_settings:
        click.echo(_show(judges, settings.format == "json"), nl=False)
        return
    fmt, strict = settings.format, settings.strict
    if statistics and fmt not in ("text", "json"):
        raise UsageError(f"--statistics prints text or json, not {fmt}")
    if output_format is not None and output is None:  # refused before any work
        raise UsageError("--output-format needs --output FILE")
    # --output FILE's format: --output-format, else FILE's extension, else --format
    file_fmt = (output_format or format_for_file(output) or fmt) if output else None
    if statistics and file_fmt not in (None, "text", "json"):
        raise UsageError(f"--statistics writes text or json, not {file_fmt} (to --output)")
    if from_stdin or stdin_filename is not None:
        if paths not in (("-",), ()) or stdin_filename is None:
            raise UsageError("judge standard input with: check --stdin-filename PATH -")
        if fix or write_status:
            raise UsageError("--fix and --write-status do not apply to standard input")
    baseline = _baseline(settings.baseline, baseline_file, write_baseline,
                         output is not None or statistics or stdin_filename is not None)
    fix_failures = []
    if fix:
        from qrspi_guard.output.fix import FixFailure, fix_trailing_newlines

        for judge, group in judges:
            selected = judge.selection

            def wanted(path: str, selected: Any = selected) -> bool:
                return bool(selected.allows_at("trailing_newline", path))  # where reported

            for outcome in fix_trailing_newlines(group or ("."), judge.overrides, wanted):
                if isinstance(outcome, FixFailure):
                    fix_failures.append(outcome)
                    say_error(f"cannot fix {one_line(outcome.path)}: {outcome.reason}; it "
                              "is left as it was")
                elif not quiet:
                    click.echo(f"fixed trailing newline: {one_line(outcome.path)}", err=True)
    if stdin_filename is not None:
        result = judges[0][0].buffer(stdin_filename, _read_stdin())
    else:
        result = merge([judge.paths(group) for judge, group in judges])
        if not (result.rounds or result.files or result.diagnostics or result.not_in_round):
            no_rounds_warning(paths)
    as_is = result  # status files describe the rounds as they are, baseline or not
    if write_baseline is not None:
        _write_baseline(write_baseline, result)
        if write_status:
            _write_statuses(as_is)
        fast_exit(0)
    if baseline is not None:
        from qrspi_guard.output.baseline import Scope, apply_baseline

        result, _ = apply_baseline(result, baseline, Scope(result, paths))
    color = fmt == "text" and colored(color_choice, no_color)
    elapsed = time.monotonic() - started
    options = ReportOptions(strict=strict, quiet=quiet, color=color, elapsed=elapsed)
    text = _statistics(result, fmt, options) if statistics else renderer(fmt)(result, options)
    if output is not None:
        from qrspi_guard.output.files import write_output

        plain = ReportOptions(strict=strict, quiet=quiet, elapsed=elapsed)  # no colour
        assert file_fmt is not None
        machine = (_statistics(result, file_fmt, plain) if statistics
                   else renderer(file_fmt)(result, plain))
        if output_format is None and not statistics and fmt != "text":
            text = renderer("text")(result, options)
        write_output(output, machine)
    # the verdict is reached before it is printed: a closed pipe ends the run with it
    code = reached(0 if exit_zero else (1 if result.failed(strict) else 0))
    click.echo(text, nl=False, color=color)  # click would strip colour off a terminal
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        _step_summary(os.environ["GITHUB_STEP_SUMMARY"], result, output,
                      judges[0][0].overrides.thresholds)
    if write_status:
        _write_statuses(as_is)
    if fix_failures:
        raise OutputError(f"{plural(len(fix_failures), 'file')} could not be fixed (see "
                          "above); each is left as it was")
    fast_exit(code)


def _baseline(setting: str | None, given_file: str | None, write_file: str | None,
              other_output: bool) -> Baseline | None:
    """The baseline to apply (``--baseline``, else the project setting), read before
    any work; none when ``--write-baseline`` writes one."""
    from qrspi_guard.errors import UsageError

    if write_file is not None:
        if given_file is not None:
            raise UsageError("--write-baseline writes a baseline; do not give --baseline "
                             "with it")
        if other_output:
            raise UsageError("--write-baseline writes only the baseline: no --output, "
                             "--statistics or --stdin-filename with it")
        return None
    chosen = given_file if given_file is not None else setting
    if chosen is None:  # no baseline: nothing of it imported (start-up time)
        return None
    from qrspi_guard.output.baseline import load

    return load(chosen)


def _write_baseline(path: str, result: CheckResult) -> None:
    from qrspi_guard.output.baseline import render, root_for
    from qrspi_guard.output.files import write_output
    from qrspi_guard.textsafe import one_line

    write_output(path, render(result.diagnostics, root_for(path)))
    n = len(result.diagnostics)
    say(f"wrote {plural(n, 'baseline entry', 'baseline entries')} to {one_line(path)}")


def _show(judges: list[tuple[Any, list[str]]], as_json: bool) -> str:
    """``--show-settings``: the settings each PATH is judged under, naming the file
    actually read (one block per configuration when PATHs fall under several)."""
    if len(judges) == 1:
        return str(judges[0][0].settings.show(as_json=as_json))
    if as_json:
        from qrspi_guard.parse import jsondoc

        return jsondoc.dumps([{"paths": group, **judge.settings.as_dict()}
                           for judge, group in judges], indent=2, ensure_ascii=True) + "\n"
    from qrspi_guard.textsafe import one_line

    blocks = [f"# {', '.join(one_line(p) for p in group)}\n{judge.settings.show()}"
              for judge, group in judges]
    return "\n".join(blocks)


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


def _statistics(result: object, fmt: str, options: ReportOptions) -> str:
    from qrspi_guard.output.text import summary
    from qrspi_guard.parse import jsondoc
    from qrspi_guard.settings import statistics

    rows = statistics(result.diagnostics)  # type: ignore[attr-defined]
    if fmt == "json":
        return jsondoc.dumps([{"cause": c, "level": lv, "count": n} for c, lv, n in rows],
                          indent=2) + "\n"
    width = max((len(str(n)) for _, _, n in rows), default=1)
    cause_width = max((len(c) for c, _, _ in rows), default=0)
    lines = [f"{n:>{width}}  {c:<{cause_width}}  {lv}" for c, lv, n in rows]
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def _step_summary(path: str, result: Any, output: str | None, thresholds: Any) -> None:
    """Append the run overview (report.md) and the Markdown table of every diagnostic to
    ``$GITHUB_STEP_SUMMARY``, within what is left of GitHub's 1 MiB (the overview gets
    what the table leaves, at least half). A failure is a warning: the gate's verdict
    does not depend on it."""
    from qrspi_guard.errors import OutputError
    from qrspi_guard.output.files import append_summary, size_of
    from qrspi_guard.output.github import SUMMARY_LIMIT, step_summary
    from qrspi_guard.overview.build import overview
    from qrspi_guard.overview.markdown import render as overview_markdown

    room = max(SUMMARY_LIMIT - size_of(path), 2048)
    table = len(step_summary(result, room, output).encode())
    sections = overview_markdown(overview(result, thresholds), room - min(table, room // 2),
                                 heading=False)
    sections = sections.split("\n", 2)[2] if sections.count("\n") >= 2 else ""
    used = len(sections.encode()) + 64
    try:
        append_summary(path, step_summary(result, max(room - used, 2048), output, sections))
    except OutputError as exc:
        say_warning(f"step summary: {exc}")


def _write_statuses(result: object) -> None:
    """Every round's status file; a round whose file cannot be written keeps its old
    one (and no temp file), the others are still written, and the run is exit 2."""
    from qrspi_guard.errors import OutputError
    from qrspi_guard.output.status import write_status as write_one
    from qrspi_guard.textsafe import one_line

    failed = 0
    for r in result.rounds:  # type: ignore[attr-defined]
        try:
            write_one(r)
        except OSError as exc:
            failed += 1
            say_error(f"cannot write the status file of {one_line(r.ref.round_dir)}: "
                      f"{exc.strerror or exc}; the previous one is unchanged")
    if failed:
        raise OutputError(f"{plural(failed, 'status file')} could not be written (see "
                          "above)")


