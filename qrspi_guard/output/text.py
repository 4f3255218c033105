"""`path:line: level cause: message` lines and a summary line, for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.output import ReportOptions, summary_counts, visible
from qrspi_guard.textsafe import one_line, path_at_line_start
from qrspi_guard.voice import plural

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_RESET = "\x1b[0m"


def line(d: Diagnostic, color: bool = False) -> str:
    """One diagnostic's line. The path starts the line, so a path that would read as a
    GitHub Actions workflow command (``::error ...``) is shown as ``./::error ...``."""
    where = path_at_line_start(d.path or ".")
    if d.line:
        where += f":{d.line}"
    level: str = d.level
    if color:
        level = f"{_COLORS[d.level]}{level}{_RESET}"
    return f"{where}: {level} {d.cause}: {one_line(d.message)}"


def counts(rounds: int, files: int, errors: int, warnings: int) -> str:
    """``9 rounds, 48 files: 6 errors, 0 warnings``: the head of every summary line
    (check's, and the overview's in status, the step summary and the report)."""
    return (f"{plural(rounds, 'round')}, {plural(files, 'file')}: "
            f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")


def summary(result: CheckResult) -> str:
    c = summary_counts(result)
    text = counts(c["rounds"], c["files"], c["errors"], c["warnings"])
    if c["infos"]:
        text += f", {c['infos']} info"
    if result.not_in_round:
        text += (f" ({plural(len(result.not_in_round), 'path')} not in a review round "
                 "ignored)")
    if result.baseline is not None:
        text += f" ({result.baseline[0]} in baseline, {result.baseline[1]} fixed)"
    return text


def render(result: CheckResult, options: ReportOptions) -> str:
    out = [line(d, options.color) for d in result.diagnostics if visible(d, options)]
    out.append(summary(result))
    return "\n".join(out) + "\n"
