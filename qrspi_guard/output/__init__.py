"""Report formats: a registry of renderers from a CheckResult to text.

Adding a format touches one module and one line of :data:`FORMATS`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

from qrspi_guard.records import record

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.contract.diagnostics import Diagnostic
    from qrspi_guard.engine import CheckResult


@record(frozen=True)
class ReportOptions:
    strict: bool = False
    #: only what fails (errors, and warnings with *strict*) and the summary, every format
    quiet: bool = False
    color: bool = False
    #: the check's wall time in seconds (JUnit's `time`), when the caller measured it
    elapsed: float = 0.0


class Renderer(Protocol):
    def __call__(self, result: CheckResult, options: ReportOptions) -> str: ...


#: format name -> module in this package defining ``render``
FORMATS: dict[str, str] = {
    "text": "text",
    "json": "json_format",
    "github": "github",
    "sarif": "sarif",
    "junit": "junit",
}


#: a file name's extension -> the format ``check --output FILE`` writes to it when
#: ``--output-format`` is not given (any other extension: ``--format``)
EXTENSIONS: dict[str, str] = {
    ".json": "json",
    ".sarif": "sarif",
    ".xml": "junit",
    ".txt": "text",
}


def format_for_file(path: str) -> str | None:
    """The format *path*'s extension names (case-insensitive), if it names one."""
    import os

    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"{__name__}.{FORMATS[name]}")
    return module.render  # type: ignore[no-any-return]


def fails(d: Diagnostic, strict: bool) -> bool:
    """Whether *d* fails the run: an error, or a warning under ``--strict``."""
    return d.level == "error" or (strict and d.level == "warning")


def visible(d: Diagnostic, options: ReportOptions) -> bool:
    """Whether a format shows *d*: everything, or with ``--quiet`` only what fails."""
    return not options.quiet or fails(d, options.strict)


def summary_counts(result: CheckResult) -> dict[str, int]:
    counts = {
        "rounds": len(result.rounds),
        "files": result.files,
        "errors": result.count("error"),
        "warnings": result.count("warning"),
        "infos": result.count("info"),
    }
    if result.baseline is not None:
        counts["in_baseline"], counts["fixed"] = result.baseline
    return counts
