"""`{"diagnostics": [...], "rounds": [...], "summary": {...}}` for machines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.output import ReportOptions, summary_counts, visible
from qrspi_guard.parse import jsondoc

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult


def diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    out = d.to_dict()
    out["path"] = d.path
    if d.step is not None:
        out["step"] = d.step
    if d.round is not None:
        out["round"] = d.round
    return out


def document(result: CheckResult, options: ReportOptions) -> dict[str, Any]:
    return {
        "diagnostics": [diagnostic_dict(d) for d in result.diagnostics if visible(d, options)],
        "rounds": [
            {
                "path": r.ref.round_dir,
                "step": r.ref.step,
                "round": r.ref.round,
                "status": r.status,
                "protocol": r.protocol,
                "config_source": r.config_source,
                "files": r.files,
                "expected_tags": r.expected_tags,
                "reported_tags": r.reported_tags,
                "awaiting": r.awaiting,
                "errors": sum(1 for d in r.all_diagnostics if d.level == "error"),
                "warnings": sum(1 for d in r.all_diagnostics if d.level == "warning"),
            }
            for r in result.rounds
        ],
        "summary": {**summary_counts(result), "failed": result.failed(options.strict)},
    }


def render(result: CheckResult, options: ReportOptions) -> str:
    """Paths are kept lossless: a name that is not valid UTF-8 is written with Python's
    surrogate escapes (``"\\udcff"``), which ``os.fsencode`` maps back to its bytes."""
    return jsondoc.dumps(document(result, options), indent=2, ensure_ascii=True) + "\n"
