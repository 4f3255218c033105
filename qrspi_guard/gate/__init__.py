"""The gate: ``check``'s run, from one request to everything the command writes and says.

The command line (:mod:`qrspi_guard.cli.check`) turns its options into a
:class:`CheckRequest`, makes this one call (:func:`run`), prints the :class:`CheckRun`
it gets back and exits with its code. Everything between happens here, each part in the
layer that owns it: the judges of the paths' project configurations
(:mod:`qrspi_guard.judge`), ``--fix`` and the baseline, the report in each format on
standard output and in ``--output`` (:mod:`qrspi_guard.output`), the step summary
(:mod:`qrspi_guard.overview.summary`) and the status files
(:func:`qrspi_guard.output.status.write_statuses`). The data goes down once and the
result comes up once.

It writes files but prints nothing and never exits: what is to be said on standard
error is handed, as it happens, to the caller's *say* as :class:`Note` s, and a failure
that makes the run exit 2 after its report comes back as :attr:`CheckRun.error`. Bad
requests raise :class:`~qrspi_guard.errors.UsageError` before any work.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.errors import GuardError, OutputError, UsageError
from qrspi_guard.output import ReportOptions
from qrspi_guard.records import field, record
from qrspi_guard.settings.commandline import CommandLine
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import no_rounds, plural

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.generations import Thresholds
    from qrspi_guard.engine.results import CheckResult
    from qrspi_guard.judge import Judge
    from qrspi_guard.output.baseline import Baseline


@record(frozen=True)
class CheckRequest:
    """What ``check`` was asked to do (its options, parsed)."""

    paths: tuple[str, ...] = ()
    cli: CommandLine = field(default_factory=CommandLine)
    base: Overrides = field(default_factory=Overrides)
    show_settings: bool = False
    statistics: bool = False
    write_status: bool = False
    fix: bool = False
    output: str | None = None
    output_format: str | None = None
    baseline_file: str | None = None
    write_baseline: str | None = None
    stdin_filename: str | None = None
    quiet: bool = False
    exit_zero: bool = False
    #: colour wanted where the format is text (the terminal and NO_COLOR decided it)
    color: bool = False
    #: ``$GITHUB_STEP_SUMMARY``, appended to when the format is github
    step_summary: str | None = None
    #: standard input's bytes, read when judged (``--stdin-filename PATH -``)
    stdin: Callable[[], bytes] | None = None
    #: when the command started (time.monotonic), for JUnit's time
    started: float | None = None


@record(frozen=True)
class Note:
    """One line for standard error: *level* ``error`` or ``warning`` (the guard's
    error-line form), ``said`` (the guard says it, without a level) or ``progress``
    (as it is: ``fixed trailing newline: PATH``)."""

    level: Literal["error", "warning", "said", "progress"]
    text: str


@record
class CheckRun:
    """What the run leaves for the command line to print and exit with."""

    text: str = ""  #: standard output
    color: bool = False  #: *text* holds colour (click would strip it off a terminal)
    exit_code: int = 0
    #: raised after the report is printed (exit 2): a file --fix or --write-status
    #: could not write
    error: GuardError | None = None


Say = Callable[[Note], None]


def run(req: CheckRequest, say: Say) -> CheckRun:
    """Judge, fix, render, write and decide, as ``check`` does (cli.md); every line
    for standard error goes to *say* when it is known."""
    from qrspi_guard.judge import judges_for

    started = time.monotonic() if req.started is None else req.started
    from_stdin = "-" in req.paths
    judged = (req.stdin_filename,) if req.stdin_filename is not None and from_stdin \
        else req.paths
    # each PATH is judged under the project configuration found from it upward (cli.md
    # "Where configuration is found"); the first PATH's also gives format and strict
    judges = judges_for([p for p in judged if p != "-"], req.cli, req.base)
    settings = judges[0][0].settings
    if req.show_settings:
        from qrspi_guard.settings.resolution import show_groups

        return CheckRun(show_groups([(j.settings, g) for j, g in judges],
                                    settings.format == "json"))
    fmt, strict = settings.format, settings.strict
    _refuse(req, fmt, from_stdin)
    baseline = _baseline(settings.baseline, req)
    out = CheckRun()
    fix_failures = _fix(judges, req.quiet, say) if req.fix else 0
    if req.stdin_filename is not None:
        assert req.stdin is not None
        result = judges[0][0].buffer(req.stdin_filename, req.stdin())
    else:
        result = _judge(judges, req.paths, say)
    as_is = result  # status files describe the rounds as they are, baseline or not
    if req.write_baseline is not None:
        _write_baseline(req.write_baseline, result, say)
        if req.write_status:
            out.error = _write_statuses(as_is, say)
        return out
    if baseline is not None:
        from qrspi_guard.output.baseline import Scope, apply_baseline

        result, _ = apply_baseline(result, baseline, Scope(result, req.paths))
    out.color = fmt == "text" and req.color
    out.text = _report(req, result, fmt, strict, out.color, time.monotonic() - started)
    if fmt == "github" and req.step_summary:
        _step_summary(req.step_summary, result, req.output,
                      judges[0][0].overrides.thresholds,
                      ReportOptions(strict=strict, quiet=req.quiet), say)
    if req.write_status:
        out.error = _write_statuses(as_is, say)
    if fix_failures and out.error is None:
        out.error = OutputError(f"{plural(fix_failures, 'file')} could not be fixed (see "
                                "above); each is left as it was")
    out.exit_code = 0 if req.exit_zero else (1 if result.failed(strict) else 0)
    return out


def _refuse(req: CheckRequest, fmt: str, from_stdin: bool) -> None:
    """Options that cannot go together, refused before any work."""
    from qrspi_guard.output.statistics import FORMATS

    if req.statistics and fmt not in FORMATS:
        raise UsageError(f"--statistics prints text or json, not {fmt}")
    if req.output_format is not None and req.output is None:
        raise UsageError("--output-format needs --output FILE")
    file_fmt = file_format(req, fmt)
    if req.statistics and file_fmt not in (None, *FORMATS):
        raise UsageError(f"--statistics writes text or json, not {file_fmt} (to --output)")
    if from_stdin or req.stdin_filename is not None:
        if req.paths not in (("-",), ()) or req.stdin_filename is None:
            raise UsageError("judge standard input with: check --stdin-filename PATH -")
        if req.fix or req.write_status:
            raise UsageError("--fix and --write-status do not apply to standard input")


def _baseline(setting: str | None, req: CheckRequest) -> Baseline | None:
    """The baseline to apply (``--baseline``, else the project setting), read before
    any work; none when ``--write-baseline`` writes one."""
    if req.write_baseline is not None:
        if req.baseline_file is not None:
            raise UsageError("--write-baseline writes a baseline; do not give --baseline "
                             "with it")
        if req.output is not None or req.statistics or req.stdin_filename is not None:
            raise UsageError("--write-baseline writes only the baseline: no --output, "
                             "--statistics or --stdin-filename with it")
        return None
    chosen = req.baseline_file if req.baseline_file is not None else setting
    if chosen is None:  # no baseline: nothing of it imported (start-up time)
        return None
    from qrspi_guard.output.baseline import load

    return load(chosen)


def _fix(judges: Sequence[tuple[Judge, list[str]]], quiet: bool, say: Say) -> int:
    """``--fix`` under each judge (where ``trailing_newline`` is selected); the files
    fixed and those that could not be are said. Returns how many could not be."""
    from qrspi_guard.output.fix import FixFailure, fix_trailing_newlines

    failures = 0
    for judge, group in judges:
        selected = judge.selection

        def wanted(path: str, selected: object = selected) -> bool:
            return bool(selected.allows_at("trailing_newline", path))  # type: ignore[attr-defined]

        for outcome in fix_trailing_newlines(group or ("."), judge.overrides, wanted):
            if isinstance(outcome, FixFailure):
                failures += 1
                say(Note("error", f"cannot fix {one_line(outcome.path)}: "
                                  f"{outcome.reason}; it is left as it was"))
            elif not quiet:
                say(Note("progress", f"fixed trailing newline: {one_line(outcome.path)}"))
    return failures


def _judge(judges: Sequence[tuple[Judge, list[str]]], paths: Sequence[str],
           say: Say) -> CheckResult:
    """Every judge's rounds as one result; no round at all is warned about."""
    from qrspi_guard.judge import merge

    result = merge([judge.paths(group) for judge, group in judges])
    if not (result.rounds or result.files or result.diagnostics or result.not_in_round):
        say(Note("warning", no_rounds(", ".join(one_line(p) for p in paths) or ".")))
    return result


def _write_baseline(path: str, result: CheckResult, say: Say) -> None:
    from qrspi_guard.output.baseline import render, root_for
    from qrspi_guard.output.files import write_output

    write_output(path, render(result.diagnostics, root_for(path)))
    n = len(result.diagnostics)
    say(Note("said", f"wrote {plural(n, 'baseline entry', 'baseline entries')} to "
                     f"{one_line(path)}"))


def file_format(req: CheckRequest, fmt: str) -> str | None:
    """``--output FILE``'s format: ``--output-format``, else the one FILE's extension
    names, else *fmt* (``--format``); None without ``--output``."""
    from qrspi_guard.output import format_for_file

    if req.output is None:
        return None
    return req.output_format or format_for_file(req.output) or fmt


def _report(req: CheckRequest, result: CheckResult, fmt: str, strict: bool, color: bool,
            elapsed: float) -> str:
    """Standard output's report, after writing ``--output``'s (in :func:`file_format`;
    stdout then gets text unless ``--output-format`` keeps it ``--format``). Each is
    rendered once."""
    from qrspi_guard.output import renderer
    from qrspi_guard.output.statistics import render as statistics

    def render(as_fmt: str, options: ReportOptions) -> str:
        return statistics(result, as_fmt) if req.statistics else renderer(as_fmt)(result,
                                                                                  options)

    file_fmt = file_format(req, fmt)
    if req.output is not None and file_fmt is not None:
        from qrspi_guard.output.files import write_output

        plain = ReportOptions(strict=strict, quiet=req.quiet, elapsed=elapsed)  # no colour
        write_output(req.output, render(file_fmt, plain))
        if req.output_format is None and not req.statistics:
            fmt = "text"
    return render(fmt, ReportOptions(strict=strict, quiet=req.quiet, color=color,
                                     elapsed=elapsed))


def _step_summary(path: str, result: CheckResult, output: str | None,
                  thresholds: Thresholds | None, options: ReportOptions, say: Say) -> None:
    """The step summary; a failure is a warning: the gate's verdict does not depend on
    it."""
    from qrspi_guard.overview.summary import append_step_summary

    try:
        append_step_summary(path, result, output, thresholds, options)
    except OutputError as exc:
        say(Note("warning", f"step summary: {exc}"))


def _write_statuses(result: CheckResult, say: Say) -> OutputError | None:
    from qrspi_guard.output.status import write_statuses

    failed = write_statuses(result.rounds)
    for round_dir, reason in failed:
        say(Note("error", f"cannot write the status file of {one_line(round_dir)}: "
                          f"{reason}; the previous one is unchanged"))
    if failed:
        return OutputError(f"{plural(len(failed), 'status file')} could not be written (see "
                           "above)")
    return None
