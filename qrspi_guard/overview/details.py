"""What a judged round's findings say, for display: id, severity, change_type, the
verifier's score, and whether the verifier kept or dropped each.

Nothing here judges a file (the verdict is the judge's). A finding's fields are read
from its frontmatter lines as the protocol's line-based readers read them (the first
``key:`` line); a value in any other YAML shape (quoted, a flow or block value, an
anchor, a tag) is read with the project's own parser (:mod:`qrspi_guard.parse`). Kept
and dropped use the generation's thresholds, as its verifier fan-in does
(:mod:`qrspi_guard.contract.generations`). Every value is made one safe, bounded line.
Large trees are shared with forked workers (:mod:`qrspi_guard.engine.parallel`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from qrspi_guard.contract.generations import (
    DEFAULT_GENERATION,
    GENERATIONS,
    Generation,
    Thresholds,
)
from qrspi_guard.contract.layout import Kind, classify_cached
from qrspi_guard.overview.model import FindingView
from qrspi_guard.parse.frontmatter import ByteFailure, Document, decode, load_yaml, parse
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.rules.facts import FileFacts
from qrspi_guard.textsafe import one_line

#: the longest value shown from a finding's frontmatter
SHOWN = 80
#: the first `key:` line of each field shown; a value YAML would read otherwise (quoted,
#: flow, anchored, tagged, commented, not printable ASCII) sends the file to the parser


_SHOWN_CACHE: dict[str, str] = {}


def _text(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    got = _SHOWN_CACHE.get(value)
    if got is None:
        got = one_line(value, SHOWN)
        if len(_SHOWN_CACHE) < 4096:
            _SHOWN_CACHE[value] = got
    return got


_BLINE = re.compile(rb"^(finding_id|severity|change_type|score):[ \t]*([^\n]*?)[ \t]*$", re.M)
_BNOT_PLAIN = re.compile(rb"""^$|^[-'"\[{&*!|>%@`?:,#]|\s#|: |[^\x20-\x7e]""")


def _fields(name: str, dir_fd: int | None, whole_yaml: bool = False) -> dict[Any, Any] | None:
    data = read_bytes(name, dir_fd=dir_fd)
    if isinstance(data, ReadFailure):
        return None
    if data.startswith(b"---\n") and b"\r" not in data:
        end = data.find(b"\n---", 3)
        fm = data[4:end + 1] if end != -1 else b""
        found: dict[str, Any] = {}
        plain = b"<<" not in fm
        for key, value in _BLINE.findall(fm):
            name = key.decode()
            if name in found:
                continue
            if _BNOT_PLAIN.search(value):
                plain = False
                break
            found[name] = value.decode()
        if plain and found:
            score = found.get("score")
            if score is not None:
                found["score"] = int(score) if score.isdigit() and len(score) < 4 else score
            return found
    text = decode(data)
    if isinstance(text, ByteFailure):
        return None
    doc = parse(text.text)
    if not isinstance(doc, Document) and whole_yaml:
        doc = load_yaml(text.text)
    return doc.data if isinstance(doc, Document) else None


def _score(name: str, dir_fd: int | None) -> int | None:
    data = _fields(name, dir_fd, whole_yaml=name.endswith(".yml"))
    if data is None:
        return None
    value = data.get("score")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        return None
    return value


def findings(round_dir: str, names: list[str], protocol: str,
             thresholds: Thresholds | None = None) -> list[FindingView]:
    """The finding files among *names* (a judged round's file names), in name order."""
    gen: Generation = GENERATIONS.get(protocol) or DEFAULT_GENERATION
    limits = thresholds or gen.thresholds
    present = set(names)
    suffix = gen.sidecar.suffix
    try:
        dir_fd: int | None = os.open(round_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        dir_fd = None  # the names are read by path then (and fail as they will)
    base = "" if dir_fd is not None else round_dir
    out = []
    try:
        for name in sorted(names):
            fname = classify_cached(name)
            if fname.kind is not Kind.FINDING or fname.tag is None:
                continue
            data = _fields(os.path.join(base, name), dir_fd) or {}
            view = FindingView(name, fname.tag, _text(data.get("finding_id")),
                               _text(data.get("severity")), _text(data.get("change_type")))
            sidecar = name[:-3] + suffix
            if sidecar in present:
                view.score = _score(os.path.join(base, sidecar), dir_fd)
            if view.score is not None:
                floor = limits.for_change_type(view.change_type)
                dropped = (gen.zero_score_drops and view.score == 0) or (
                    floor is not None and view.score < floor
                    and not (gen.escalation_keeps and _escalated(round_dir, name)))
                view.verdict = "dropped" if dropped else "kept"
            out.append(view)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    return out


def _escalated(round_dir: str, name: str) -> bool:
    """Whether the finding cites feedback/*.md (apply-fix keeps it whatever its score)."""
    data = read_bytes(os.path.join(round_dir, name))
    return not isinstance(data, ReadFailure) and b"feedback/" in data


def from_facts(round_dir: str, facts: list[FileFacts], protocol: str,
               thresholds: Thresholds | None = None) -> list[FindingView]:
    """:func:`findings` from the facts the judge kept while judging the round (no file
    is read again, except a finding whose fields were not all valid: it is shown as its
    frontmatter says)."""
    gen: Generation = GENERATIONS.get(protocol) or DEFAULT_GENERATION
    limits = thresholds or gen.thresholds
    scores = {f.name: f.score for f in facts if f.kind is Kind.SIDECAR}
    out: list[FindingView] = []
    unread = []
    for f in sorted(facts, key=lambda f: f.name):
        if f.kind is not Kind.FINDING or f.tag is None:
            continue
        view = FindingView(f.name, f.tag, _text(f.finding_id), _text(f.severity),
                           _text(f.change_type))
        if view.finding_id is None or view.severity is None or view.change_type is None:
            unread.append(len(out))
        view.score = scores.get(f.name[:-3] + gen.sidecar.suffix)
        if view.score is not None:
            floor = limits.for_change_type(f.change_type)
            dropped = (gen.zero_score_drops and view.score == 0) or (
                floor is not None and view.score < floor
                and not (gen.escalation_keeps and f.escalated))
            view.verdict = "dropped" if dropped else "kept"
        out.append(view)
    if unread:
        shown = {v.name: v for v in findings(round_dir, [out[i].name for i in unread],
                                             protocol, thresholds)}
        for i in unread:
            got = shown.get(out[i].name)
            if got is not None:
                out[i].finding_id = out[i].finding_id or got.finding_id
                out[i].severity = out[i].severity or got.severity
                out[i].change_type = out[i].change_type or got.change_type
    return out


def encode(views: list[FindingView]) -> list[tuple[Any, ...]]:
    """*views* as plain tuples, for a worker's pipe."""
    return [(v.name, v.tag, v.finding_id, v.severity, v.change_type, v.score, v.verdict)
            for v in views]


def decode_views(rows: list[tuple[Any, ...]]) -> list[FindingView]:
    return [FindingView(*row) for row in rows]


def every_round(rounds: list[tuple[str, list[str], str]],
                thresholds: Thresholds | None = None) -> list[list[FindingView]]:
    """:func:`findings` of each (round_dir, names, protocol), shared with forked workers
    on a large tree; the same result, in the same order, whatever the number of them."""
    from qrspi_guard.engine.parallel import ordered_map

    def one(i: int) -> list[FindingView]:
        return findings(*rounds[i], thresholds)

    return list(ordered_map(one, len(rounds), encode, lambda i, rows: decode_views(rows)))

