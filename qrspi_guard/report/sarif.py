"""SARIF 2.1.0: one rule per cause of the catalogue."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from qrspi_guard import __version__
from qrspi_guard.causes import CATALOGUE
from qrspi_guard.report import ReportOptions
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def rules() -> list[dict[str, Any]]:
    return [
        {
            "id": c.name,
            "name": c.name,
            "shortDescription": {"text": c.meaning},
            "help": {"text": c.fix},
            "defaultConfiguration": {"level": _LEVEL[c.level]},
        }
        for c in CATALOGUE.values()
    ]


def render(result: CheckResult, options: ReportOptions) -> str:
    index = {name: i for i, name in enumerate(CATALOGUE)}
    results = []
    for d in result.diagnostics:
        uri = quote(d.path.replace("\\", "/"), safe="/-._~")  # a URI reference, §3.10
        location: dict[str, Any] = {"artifactLocation": {"uri": uri}}
        if d.line:
            location["region"] = {"startLine": d.line}
        results.append({
            "ruleId": d.cause,
            "ruleIndex": index[d.cause],
            "level": _LEVEL[d.level],
            "message": {"text": one_line(d.message)},
            "locations": [{"physicalLocation": location}],
        })
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "qrspi-guard",
                "version": __version__,
                "informationUri": "https://github.com/qrspi/qrspi-guard",
                "rules": rules(),
            }},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
