"""Accept a valid finding or clean sentinel without building its diagnostics.

:func:`fast_report` answers only when it is certain that
:func:`qrspi_guard.rules.files.judge_file` would find nothing wrong with the file, and
then returns the same facts; in every other case it returns ``None`` and the caller
runs ``judge_file``, which computes the line numbers and messages. So messages and
lines are made only for files that fail. ``tests/test_equivalence.py`` pins the whole
output with this path on and off.
"""

from __future__ import annotations

import re

from qrspi_guard import fastparse
from qrspi_guard.frontmatter import BOM, MAX_BYTES, split
from qrspi_guard.layout import FileName, Kind, normalise_step
from qrspi_guard.rules.files import (
    _BOUNDARY,
    FileFacts,
    FileReport,
    Place,
    _artifact_names,
    _reference_problem,
)
from qrspi_guard.schema import CHANGE_TYPES, CLEAN_KEYS, FINDING_ID_RE, FINDING_KEYS, SEVERITIES

_FINDING_KEYS = frozenset(FINDING_KEYS)
#: References that `_reference_problem` certainly accepts (a `..` is left to it).
_SAFE_REF = re.compile(r"[A-Za-z0-9_./-]+(?::(?:[0-9]+(?:-[0-9]+)?|L[0-9]+(?:-L[0-9]+)?))?")
_CLEAN_KEYS = frozenset(CLEAN_KEYS)
_REF = r"[A-Za-z_/][A-Za-z0-9_./-]*(?::(?:[0-9]+(?:-[0-9]+)?|L[0-9]+(?:-L[0-9]+)?))?"
#: The protocol's own shape of a finding, in its key order: one regular expression
#: reads it. Every value here is a plain scalar that reads as a string, except round
#: (a decimal integer) and the words checked below (an artifact or reference `no` is
#: a bool to YAML 1.1).
_CANON_FINDING = re.compile(
    r"finding_id: (R([1-9][0-9]{0,8})-F([0-9]{1,9}))\n"
    r"severity: (?:low|medium|high)\n"
    r"change_type: (style|clarity|correctness|scope|intent)\n"
    rf"referenced_files: \[((?:{_REF})(?:, {_REF})*)?\]\n"
    r"artifact: ([a-z][a-z0-9-]*)\n"
    r"round: ([1-9][0-9]{0,8})\n"
    r"reviewer: ([a-z0-9-]+)\n")


def _text(data: bytes) -> str | None:
    """The decoded text when no byte-level or trailing-newline rule can fire."""
    if (len(data) > MAX_BYTES or data.startswith(BOM) or b"\r" in data
            or not data.endswith(b"\n") or data.endswith(b"\n\n")):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_ARTIFACTS: dict[tuple[str, bool], frozenset[str]] = {}


def _artifact_ok(artifact: str, place: Place) -> bool:
    """The artifact rule's test (`_artifact_names`), remembered per step."""
    step = place.step
    if not step:
        return True
    key = (step, place.is_task)
    allowed = _ARTIFACTS.get(key)
    if allowed is None:
        allowed = _ARTIFACTS[key] = frozenset(_artifact_names(place))
    return normalise_step(artifact) in allowed


def _round(raw: str | None, dir_round: int | None) -> int | None:
    """The round field read as the rules read it, when it agrees with the directory."""
    if raw is None or not (raw.isascii() and raw.isdigit()):
        return None
    n = int(raw)
    if n < 1 or (dir_round is not None and n != dir_round):
        return None
    return n


def fast_report(fname: FileName, data: bytes, place: Place) -> FileReport | None:
    """The report of a file that passes every per-file rule, or None (ask judge_file)."""
    kind = fname.kind
    if kind is not Kind.FINDING and kind is not Kind.CLEAN:
        return None
    text = _text(data)
    if text is None:
        return None
    if kind is Kind.FINDING and text.startswith("---\n"):
        # `split`, for frontmatter that is not empty and closed by a `---` line
        close = text.find("\n---\n", 3)
        if close > 3:
            m = _CANON_FINDING.fullmatch(text, 4, close + 1)
            if m is not None:
                return _canonical_finding(m, fname, place, text[close + 5:])
    parts = split(text)
    if parts is None:
        return None
    got = fastparse.parse(parts[0])
    if got is None:
        return None
    values, _, raw, duplicates = got
    body = parts[1]
    if duplicates:
        return None
    reviewer = values.get("reviewer")
    if type(reviewer) is not str or reviewer != fname.tag or not reviewer.strip():
        return None
    field_round = _round(raw.get("round"), place.round)
    if field_round is None:
        return None
    if kind is Kind.CLEAN:
        if (len(values) != 3 or not _CLEAN_KEYS.issuperset(values) or raw.get("findings") != "0"
                or body.strip()):
            return None
        return FileReport(FileFacts(fname.name, kind, fname.tag, fname.fnum, parsed=True))
    if len(values) != 7 or not _FINDING_KEYS.issuperset(values):
        return None
    fid = values["finding_id"]
    m = FINDING_ID_RE.fullmatch(fid) if type(fid) is str else None
    if m is None or int(m.group(1)) != field_round or int(m.group(2)) != fname.fnum:
        return None
    severity, change_type = values["severity"], values["change_type"]
    if type(severity) is not str or severity not in SEVERITIES:
        return None
    if type(change_type) is not str or change_type not in CHANGE_TYPES:
        return None
    refs = values["referenced_files"]
    if type(refs) is not list:
        return None
    for entry in refs:
        if type(entry) is not str or "feedback/" in entry:
            return None
        if ".." in entry or _SAFE_REF.fullmatch(entry) is None:
            if _reference_problem(entry):
                return None
    artifact = values["artifact"]
    if type(artifact) is not str or not artifact.strip():
        return None
    if not _artifact_ok(artifact, place):
        return None
    if (not body.strip() or "feedback/" in body or "finding_id:" in body
            or _BOUNDARY in body):
        return None
    return FileReport(FileFacts(fname.name, kind, fname.tag, fname.fnum, finding_id=fid,
                                change_type=change_type, parsed=True))


def _canonical_finding(m: re.Match[str], fname: FileName, place: Place,
                       body: str) -> FileReport | None:
    fid, id_round, id_fnum, change_type, refs, artifact, rnd, reviewer = m.groups()
    if reviewer != fname.tag or int(id_fnum) != fname.fnum or id_round != rnd:
        return None
    if place.round is not None and int(rnd) != place.round:
        return None
    if place.step:
        if not _artifact_ok(artifact, place):
            return None
    elif fastparse.resolve(artifact) is not artifact:
        return None
    if refs:
        if ".." in refs or "feedback/" in refs:
            return None
        for entry in refs.split(", "):
            if fastparse.resolve(entry) is not entry:
                return None
    if (not body or body.isspace() or "feedback/" in body or "finding_id:" in body
            or _BOUNDARY in body):
        return None
    return FileReport(FileFacts(fname.name, Kind.FINDING, fname.tag, fname.fnum,
                                finding_id=fid, change_type=change_type, parsed=True))
