"""Report formats: a registry of renderers from a CheckResult to text.

Adding a format touches one module and one line of :data:`FORMATS`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

from qrspi_guard.records import record

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult


@record(frozen=True)
class ReportOptions:
    strict: bool = False
    quiet: bool = False
    color: bool = False


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


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"{__name__}.{FORMATS[name]}")
    return module.render  # type: ignore[no-any-return]


def summary_counts(result: CheckResult) -> dict[str, int]:
    return {
        "rounds": len(result.rounds),
        "files": result.files,
        "errors": result.count("error"),
        "warnings": result.count("warning"),
        "infos": result.count("info"),
    }
