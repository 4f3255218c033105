"""GitHub Actions workflow commands, escaped so a finding can never inject one.

Every annotation is on a file that exists: a round-level diagnostic is placed as SARIF
places it (:mod:`qrspi_guard.output.locate`).

GitHub keeps only 10 annotations of each type (error, warning, notice) per step; when
more are emitted, a first notice says how many of each type were cut (it comes first so
that it is itself never cut). Every diagnostic also goes into a Markdown table appended
to ``$GITHUB_STEP_SUMMARY`` (see :func:`step_summary`), capped below GitHub's 1 MiB per
step with a line saying how many rows were left out and where the full list is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.output import ReportOptions, visible
from qrspi_guard.output.fingerprint import source_root
from qrspi_guard.output.locate import Locator
from qrspi_guard.output.markdown import code
from qrspi_guard.output.text import summary
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult

ANNOTATION_LIMIT = 10
#: GitHub refuses a step summary over 1 MiB; the guard stays below this many bytes
SUMMARY_LIMIT = 1024 * 1024 - 16 * 1024
_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
_TYPES = (("error", "errors"), ("warning", "warnings"), ("notice", "notices"))


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic, locator: Locator | None = None) -> str:
    """One workflow command. With *locator*, a diagnostic about a directory or a file
    that is not there (a round's silent reviewer, a missing config.md) is placed on a
    file that exists, as SARIF places it (GitHub cannot show an annotation on a
    directory in a pull request), at line 1, and its message names the original place."""
    path, line, message = d.path, d.line, one_line(d.message)
    if locator is not None and d.path:
        target, exact = locator.place(d.path)
        if not exact and target != d.path:
            path, line = _shown(target), 1
            message += f" (at {one_line(d.path)})"
    props = [f"file={escape_property(one_line(path))}"] if path else []
    if line:
        props.append(f"line={line}")
    props.append(f"title={escape_property(d.cause)}")
    # one_line first: no control characters survive, then GitHub's own escaping
    return f"::{_COMMAND[d.level]} {','.join(props)}::{escape_data(message)}"


def _shown(path: str) -> str:
    """A placed file as the other paths are shown: relative to the working directory
    when it is below it."""
    import os

    rel = os.path.relpath(path)
    return path if rel.startswith(os.pardir) else rel


def annotation_counts(result: CheckResult, options: ReportOptions) -> dict[str, int]:
    """How many annotations of each type (error, warning, notice) :func:`render` emits
    for *result*, the notice that says what GitHub cuts not counted."""
    counts = {kind: 0 for kind, _ in _TYPES}
    for d in result.diagnostics:
        if visible(d, options):
            counts[_COMMAND[d.level]] += 1
    return counts


def cut_by_type(counts: dict[str, int]) -> dict[str, tuple[int, int]]:
    """(not shown, emitted) per type that GitHub's 10-per-type limit cuts, in the order
    error, warning, notice; the notice that says so counts as a notice. The one
    reckoning of the annotations and the step summary."""
    counts = {**counts, "notice": counts.get("notice", 0) + 1}
    totals = {kind: counts.get(kind, 0) for kind, _ in _TYPES}
    if all(n <= ANNOTATION_LIMIT for n in totals.values()):
        return {}
    return {kind: (max(n - ANNOTATION_LIMIT, 0), n) for kind, n in totals.items()}


def _n(count: int, kind: str) -> str:
    return f"{count} {dict(_TYPES)[kind] if count != 1 else kind}"


def cut_notice(counts: dict[str, int]) -> str | None:
    """The notice saying how many annotations of each type GitHub will not show (it is
    itself a notice, and counted as one), or None when nothing is cut."""
    cut = cut_by_type(counts)
    if not cut:
        return None
    parts = [_n(gone, kind) for kind, (gone, _) in cut.items()]
    return (f"::notice title=qrspi-guard::GitHub shows only {ANNOTATION_LIMIT} annotations "
            f"of each type per step; not shown as annotations: {', '.join(parts)}. Every "
            "diagnostic is in the job log and the step summary")


def cut_line(counts: dict[str, int]) -> str | None:
    """The step summary's line saying what GitHub's limit kept from being annotated, for
    every type it cut (None when it cut nothing)."""
    cut = cut_by_type(counts)
    parts = [f"{ANNOTATION_LIMIT} of {_n(total, kind)}" for kind, (gone, total) in cut.items()
             if gone]
    if not parts:
        return None
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"GitHub annotated only {listed}; all are below."


def full_list_place(full_list: str | None) -> str:
    """Where, in this job, every diagnostic is: the step's log, and the file
    ``--output`` wrote when there is one."""
    return "this step's log" + (f" and {code(full_list)}" if full_list else "")


def render(result: CheckResult, options: ReportOptions) -> str:
    lines = []
    locator = Locator(source_root())
    for d in result.diagnostics:
        if visible(d, options):
            lines.append(command(d, locator))
    notice = cut_notice(annotation_counts(result, options))
    if notice is not None:
        lines.insert(0, notice)
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def _md(s: str) -> str:
    """Untrusted text for a table cell: an inert code span (:mod:`.markdown`)."""
    return code(s, cell=True)


def step_summary(result: CheckResult, limit: int = SUMMARY_LIMIT,
                 full_list: str | None = None, overview: str = "",
                 options: ReportOptions | None = None) -> str:
    """A Markdown table of every diagnostic, for ``$GITHUB_STEP_SUMMARY``, at most
    *limit* bytes as UTF-8. Rows that do not fit are left out, and a last line says how
    many and where the full list is (the job log, and *full_list* when given).
    *overview* (the run overview's sections, report.md) goes before the table. When
    GitHub's limit cut annotations of any type (as *options* emitted them), a line says
    so."""
    head = ["## qrspi-guard", "", summary(result), ""]
    if overview:
        head += [overview.rstrip("\n"), "", "### Every diagnostic", ""]
    cut = cut_line(annotation_counts(result, options or ReportOptions()))
    if cut is not None:
        head += [cut, ""]
    rows: list[str] = []
    if result.diagnostics:
        head += ["| level | cause | path | line | message |", "|---|---|---|---|---|"]
        rows = [f"| {d.level} | `{d.cause}` | {_md(d.path)} | {d.line or ''} | "
                f"{_md(d.message)} |" for d in result.diagnostics]
    where = full_list_place(full_list)
    size = sum(len(s.encode()) + 1 for s in head)
    # room for the closing line, whatever its numbers
    reserve = len(f"\n{len(rows)} more rows left out to stay under GitHub's 1 MiB step "
                  f"summary limit; the full list is in {where}.\n".encode()) + 8
    kept = 0
    for row in rows:
        n = len(row.encode()) + 1
        if size + n + reserve > limit:
            break
        size += n
        kept += 1
    out = head + rows[:kept]
    if kept < len(rows):
        out += ["", f"{len(rows) - kept} more rows left out to stay under GitHub's 1 MiB "
                f"step summary limit; the full list is in {where}."]
    return "\n".join(out) + "\n"
