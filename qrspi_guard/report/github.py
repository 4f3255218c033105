"""GitHub Actions workflow commands, escaped so a finding can never inject one.

GitHub shows only 10 error annotations per step, so every diagnostic also goes into
a Markdown table appended to ``$GITHUB_STEP_SUMMARY`` (see :func:`step_summary`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qrspi_guard.diagnostics import Diagnostic
from qrspi_guard.report import ReportOptions
from qrspi_guard.report.text import summary
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult

ANNOTATION_LIMIT = 10
_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic) -> str:
    props = [f"file={escape_property(one_line(d.path))}"] if d.path else []
    if d.line:
        props.append(f"line={d.line}")
    props.append(f"title={escape_property(d.cause)}")
    # one_line first: no control characters survive, then GitHub's own escaping
    return f"::{_COMMAND[d.level]} {','.join(props)}::{escape_data(one_line(d.message))}"


def render(result: CheckResult, options: ReportOptions) -> str:
    lines = []
    errors = 0
    for d in result.diagnostics:
        if options.quiet and d.level != "error":
            continue
        if d.level == "error":
            errors += 1
        lines.append(command(d))
    if errors > ANNOTATION_LIMIT:
        lines.append(f"::notice title=qrspi-guard::GitHub shows only {ANNOTATION_LIMIT} error "
                     f"annotations per step; {errors - ANNOTATION_LIMIT} more are in the job "
                     "log and the step summary")
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def _md(s: str) -> str:
    return one_line(s).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def step_summary(result: CheckResult) -> str:
    """A Markdown table of every diagnostic, for ``$GITHUB_STEP_SUMMARY``."""
    errors = result.count("error")
    out = ["## qrspi-guard", "", summary(result), ""]
    if errors > ANNOTATION_LIMIT:
        out += [f"GitHub annotated only {ANNOTATION_LIMIT} of {errors} errors; all are below.",
                ""]
    if result.diagnostics:
        out += ["| level | cause | path | line | message |", "|---|---|---|---|---|"]
        for d in result.diagnostics:
            out.append(f"| {d.level} | `{d.cause}` | {_md(d.path)} | {d.line or ''} | "
                       f"{_md(d.message)} |")
    return "\n".join(out) + "\n"
