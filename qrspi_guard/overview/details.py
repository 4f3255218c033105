"""What a judged round's findings say, for display: id, severity, change_type, the
verifier's score, and whether the verifier kept or dropped each.

Read with the project's own parser (:mod:`qrspi_guard.parse`); nothing here judges a
file (the verdict is the judge's). Kept and dropped use the generation's thresholds,
as its verifier fan-in does (:mod:`qrspi_guard.contract.generations`). Every value is
made one safe, bounded line.
"""

from __future__ import annotations

import os
from typing import Any

from qrspi_guard.contract.generations import GENERATIONS, Generation, Thresholds
from qrspi_guard.contract.layout import Kind, classify_cached
from qrspi_guard.overview.model import FindingView
from qrspi_guard.parse.frontmatter import ByteFailure, Document, decode, load_yaml, parse
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.textsafe import one_line

#: the longest value shown from a finding's frontmatter
SHOWN = 80


def _text(value: Any) -> str | None:
    return one_line(value, SHOWN) if isinstance(value, str) and value else None


def _fields(path: str, whole_yaml: bool = False) -> dict[Any, Any] | None:
    data = read_bytes(path)
    if isinstance(data, ReadFailure):
        return None
    text = decode(data)
    if isinstance(text, ByteFailure):
        return None
    doc = parse(text.text)
    if not isinstance(doc, Document) and whole_yaml:
        doc = load_yaml(text.text)
    return doc.data if isinstance(doc, Document) else None


def _score(path: str) -> int | None:
    data = _fields(path, whole_yaml=path.endswith(".yml"))
    if data is None:
        return None
    value = data.get("score")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        return None
    return value


def findings(round_dir: str, names: list[str], protocol: str,
             thresholds: Thresholds | None = None) -> list[FindingView]:
    """The finding files among *names* (a judged round's file names), in name order."""
    gen: Generation = GENERATIONS.get(protocol) or GENERATIONS["fan-in"]
    limits = thresholds or gen.thresholds
    present = set(names)
    out = []
    for name in sorted(names):
        fname = classify_cached(name)
        if fname.kind is not Kind.FINDING or fname.tag is None:
            continue
        data = _fields(os.path.join(round_dir, name)) or {}
        view = FindingView(name, fname.tag, _text(data.get("finding_id")),
                           _text(data.get("severity")), _text(data.get("change_type")))
        sidecar = name[:-len(".md")] + gen.sidecar.suffix
        if sidecar in present:
            view.score = _score(os.path.join(round_dir, sidecar))
        if view.score is not None:
            floor = limits.for_change_type(view.change_type)
            dropped = (gen.zero_score_drops and view.score == 0) or (
                floor is not None and view.score < floor
                and not (gen.escalation_keeps and "feedback/" in str(data)))
            view.verdict = "dropped" if dropped else "kept"
        out.append(view)
    return out
