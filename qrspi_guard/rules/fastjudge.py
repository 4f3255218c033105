"""Accept a valid finding, clean sentinel or fan-in sidecar without building messages.

:func:`fast_report` answers only when it is certain that
:func:`qrspi_guard.rules.filejudge.judge_file` would find nothing wrong with the file, and
then returns the same facts; in every other case it returns ``None`` and the caller
runs ``judge_file``. Its patterns are derived from the place's contract value
(:func:`patterns`), never restated: a narrowed enum narrows them too.

``QRSPI_GUARD_VERIFY_FASTPATH=1`` re-judges every file the fast path accepts with the
full rules and raises :class:`FastPathDivergence` on any difference (the test suite
runs in this mode); ``tests/test_equivalence.py`` pins whole outputs with the fast
path on and off.
"""

from __future__ import annotations

import os
import re

from qrspi_guard.contract.generations import FindingContract
from qrspi_guard.contract.generations.fan_in import FAN_IN
from qrspi_guard.contract.layout import FileName, Kind, normalise_step
from qrspi_guard.parse import fastparse, yamlscalar
from qrspi_guard.parse.frontmatter import BOM, split
from qrspi_guard.parse.yamlscalar import Lazy
from qrspi_guard.records import record
from qrspi_guard.rules.facts import FileFacts, FileReport, Place
from qrspi_guard.rules.filejudge import fanin_change_type, judge_file
from qrspi_guard.rules.finding import (
    LINE_READ_FIELDS,
    artifact_names,
    has_message,
    reference_problem,
)

#: set in the environment, every accepted file is re-judged by the full rules
VERIFY = os.environ.get("QRSPI_GUARD_VERIFY_FASTPATH", "") not in ("", "0")


class FastPathDivergence(AssertionError):
    """The fast path accepted a file that the full rules judge differently (a bug)."""


_REF = r"[A-Za-z_/][A-Za-z0-9_./-]*(?::(?:[0-9]+(?:-[0-9]+)?|L[0-9]+(?:-L[0-9]+)?))?"
#: References that `reference_problem` certainly accepts (a `..` is left to it).
_SAFE_REF = re.compile(r"[A-Za-z0-9_./-]+(?::(?:[0-9]+(?:-[0-9]+)?|L[0-9]+(?:-L[0-9]+)?))?")
#: One value pattern per required finding key, in the protocol's own shape: every
#: value here is a plain scalar that reads as a string, except round (a decimal
#: integer); words YAML 1.1 reads otherwise (an artifact `no`) are checked after.
_CANON_VALUE = {
    "finding_id": r"(R([1-9][0-9]{0,8})-F([0-9]{1,9}))",
    "referenced_files": rf"\[((?:{_REF})(?:, {_REF})*)?\]",
    "artifact": r"([a-z][a-z0-9-]*)",
    "round": r"([1-9][0-9]{0,8})",
    "reviewer": r"([a-z0-9-]+)",
}


@record(frozen=True)
class Patterns:
    """What the fast path matches, derived from one :class:`FindingContract`."""

    canonical: re.Pattern[str] | None  #: the protocol's own finding shape, or None
    #: groups of finding_id, its R and F numbers, change_type, referenced_files,
    #: artifact, round, reviewer and severity in :attr:`canonical`
    groups: tuple[int, ...]
    required: frozenset[str]
    allowed: frozenset[str]
    clean_required: frozenset[str]
    clean_allowed: frozenset[str]
    severities: frozenset[str]
    change_types: frozenset[str]


_PATTERNS: dict[int, tuple[FindingContract, Patterns]] = {}


def patterns(contract: FindingContract) -> Patterns:
    """The fast path's patterns for *contract*, computed once per contract object (looked
    up by identity: hashing a contract on every file would cost more than matching)."""
    got = _PATTERNS.get(id(contract))
    if got is None or got[0] is not contract:
        got = _PATTERNS[id(contract)] = (contract, _derive(contract))
    return got[1]


def _derive(contract: FindingContract) -> Patterns:
    values = dict(_CANON_VALUE)
    values["severity"] = "(" + "|".join(map(re.escape, contract.severities)) + ")"
    values["change_type"] = "(" + "|".join(map(re.escape, contract.change_types)) + ")"
    canonical = None
    at: dict[str, int] = {}
    groups: tuple[int, ...] = ()
    if all(k in values for k in contract.finding_keys):
        parts, group = [], 1
        for key in contract.finding_keys:
            parts.append(f"{re.escape(key)}: {values[key]}\n")
            at[key] = group
            group += re.compile(values[key]).groups
        # then the audit keys a reviewer may add (`actual_model: claude-sonnet-4.6`), each
        # a plain word YAML reads without a corner (no digit first: no date, no number)
        for key in contract.audit_keys:
            parts.append(f"(?:{re.escape(key)}: [A-Za-z][A-Za-z0-9._/+-]*\n)?")
        canonical = re.compile("".join(parts))
        fid = at["finding_id"]
        groups = (fid, fid + 1, fid + 2, at["change_type"], at["referenced_files"],
                  at["artifact"], at["round"], at["reviewer"], at["severity"])
    return Patterns(canonical, groups, frozenset(contract.finding_keys),
                    frozenset(contract.allowed_finding_keys()),
                    frozenset(contract.clean_keys),
                    frozenset(contract.clean_keys + contract.audit_keys),
                    frozenset(contract.severities), frozenset(contract.change_types))


#: a fan-in sidecar in the verifier's own shape (generations.md §2)
_FANIN_SIDECAR = re.compile(
    r"---\n(?:verifier_status: passed\n)?score: ([0-9]{1,3})\n"
    r"(?:(?:actual_model|defect_class|reason|verifier): [^\n]*\n)*---\n")


def _text(data: bytes, contract: FindingContract) -> str | None:
    """The decoded text when no byte-level or trailing-newline rule can fire."""
    if (len(data) > contract.max_bytes or data.startswith(BOM) or b"\r" in data
            or not data.endswith(b"\n") or data.endswith(b"\n\n")):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_ARTIFACTS: dict[tuple[str, bool], frozenset[str]] = {}


def _artifact_ok(artifact: str, place: Place) -> bool:
    """The artifact rule's test (`artifact_names`), remembered per step."""
    step = place.step
    if not step:
        return True
    key = (step, place.is_task)
    allowed = _ARTIFACTS.get(key)
    if allowed is None:
        allowed = _ARTIFACTS[key] = frozenset(artifact_names(place))
    return normalise_step(artifact) in allowed


def _round(raw: str | None, dir_round: int | None) -> int | None:
    """The round field read as the rules read it, when it agrees with the directory."""
    if raw is None or not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
        return None
    n = int(raw)
    if n < 1 or (dir_round is not None and n != dir_round):
        return None
    return n


def fast_report(fname: FileName, data: bytes, place: Place) -> FileReport | None:
    """The report of a file that passes every per-file rule, or None (ask judge_file)."""
    report = _fast(fname, data, place)
    if VERIFY and report is not None:
        _verify(fname, data, place, report)
    return report


def _verify(fname: FileName, data: bytes, place: Place, report: FileReport) -> None:
    full = judge_file(fname, data, place)
    if full.diagnostics or full.facts != report.facts:
        causes = [d.cause for d in full.diagnostics]
        raise FastPathDivergence(f"fast path accepted {fname.name} but the full rules say "
                                 f"{causes or 'other facts'}: {full.facts} != {report.facts}")


def _fast(fname: FileName, data: bytes, place: Place) -> FileReport | None:
    kind = fname.kind
    contract = place.gen.contract
    if kind is Kind.SIDECAR:
        if fname.suffix != FAN_IN.sidecar.suffix:
            return None
        report = _fanin_sidecar(fname, data)
        if report is not None and place.fanin_fields:
            report.facts.fanin_score = report.facts.score  # the fan-in reads the same line
        return report
    if kind is not Kind.FINDING and kind is not Kind.CLEAN:
        return None
    text = _text(data, contract)
    if text is None:
        return None
    pats = patterns(contract)
    # `split`, for frontmatter that is not empty and closed by a `---` line
    close = text.find("\n---\n", 3) if text.startswith("---\n") else -1
    if close > 3:
        if kind is Kind.FINDING and pats.canonical is not None:
            m = pats.canonical.fullmatch(text, 4, close + 1)
            if m is not None:
                return _canonical_finding(m, pats, fname, place, text[close + 5:], data)
        head, body = text[4:close + 1], text[close + 5:]
    else:
        parts = split(text)
        if parts is None:
            return None
        head, body = parts[0], parts[1]
    got = fastparse.parse(head)
    if got is None:
        return None
    values, _, raw, duplicates = got
    if duplicates:
        return None
    reviewer = values.get("reviewer")
    if type(reviewer) is not str or reviewer != fname.tag or not reviewer.strip():
        return None
    if kind is Kind.CLEAN:
        return _clean(fname, values, raw, body, pats, place)
    field_round = _round(raw.get("round"), place.round)
    if field_round is None:
        return None
    if not pats.required.issubset(values) or not pats.allowed.issuperset(values):
        return None
    fid = values["finding_id"]
    m = contract.finding_id_re.fullmatch(fid) if type(fid) is str else None
    if (m is None or len(m.group(1)) > 9 or len(m.group(2)) > 9
            or int(m.group(1)) != field_round or int(m.group(2)) != fname.fnum):
        return None
    severity, change_type = values["severity"], values["change_type"]
    if type(severity) is not str or severity not in pats.severities:
        return None
    if type(change_type) is not str or change_type not in pats.change_types:
        return None
    refs = values["referenced_files"]
    if type(refs) is not list:
        return None
    for entry in refs:
        if type(entry) is not str or "feedback/" in entry:
            return None
        if ".." in entry or _SAFE_REF.fullmatch(entry) is None:
            if reference_problem(entry, contract):
                return None
    artifact = values["artifact"]
    if type(artifact) is not str or not artifact.strip():
        return None
    if not _artifact_ok(artifact, place):
        return None
    if not _body_ok(body, contract):
        return None
    if "#" in head and _COMMENTED.search(head) is not None:
        return None
    return FileReport(FileFacts(
        fname.name, kind, fname.tag, fname.fnum, finding_id=fid, change_type=change_type,
        severity=severity, parsed=True,
        fanin_change_type=fanin_change_type(data) if place.fanin_fields else None))


#: a line the fan-in's awk reads whole (:data:`LINE_READ_FIELDS`) that carries a ``#``
#: (a trailing comment YAML drops and awk keeps): the full rules say what it means. In
#: the subset :mod:`~qrspi_guard.parse.fastparse` accepts, that is the one way YAML and
#: awk can read those fields differently (tags, escapes, `? key` entries, quoted keys,
#: multi-line scalars and duplicate keys are declined before), and a key's line is the
#: one line that starts with `key:` (keys stand at column 0)
_COMMENTED = Lazy("^(?:" + "|".join(LINE_READ_FIELDS) + r"):[^\n#]*#", re.MULTILINE)


def _body_ok(body: str, contract: FindingContract) -> bool:
    return has_message(body) and "feedback/" not in body and "finding_id:" not in body \
        and contract.boundary not in body


def _clean(fname: FileName, values: dict[str, object], raw: dict[str, str | None], body: str,
           pats: Patterns, place: Place) -> FileReport | None:
    if "round" in values or not place.gen.clean_round_optional:
        if _round(raw.get("round"), place.round) is None:
            return None
        required = pats.clean_required
    else:
        required = pats.clean_required - {"round"}
    if (not required.issubset(values) or not pats.clean_allowed.issuperset(values)
            or raw.get("findings") != "0" or body.strip()):
        return None
    return FileReport(FileFacts(fname.name, fname.kind, fname.tag, fname.fnum, parsed=True))


def _canonical_finding(m: re.Match[str], pats: Patterns, fname: FileName, place: Place,
                       body: str, data: bytes) -> FileReport | None:
    fid, id_round, id_fnum, change_type, refs, artifact, rnd, reviewer, severity = \
        m.group(*pats.groups)
    if reviewer != fname.tag or int(id_fnum) != fname.fnum or id_round != rnd:
        return None
    if place.round is not None and int(rnd) != place.round:
        return None
    if place.step:
        if not _artifact_ok(artifact, place):
            return None
    elif yamlscalar.resolve(artifact) is not artifact:
        return None
    if refs:
        if ".." in refs or "feedback/" in refs:
            return None
        for entry in refs.split(", "):
            if yamlscalar.resolve(entry) is not entry:
                return None
    if (not has_message(body) or "feedback/" in body or "finding_id:" in body
            or place.gen.contract.boundary in body):
        return None
    return FileReport(FileFacts(fname.name, Kind.FINDING, fname.tag, fname.fnum,
                                finding_id=fid, change_type=change_type,
                                severity=severity, parsed=True,
                                fanin_change_type=change_type if place.fanin_fields
                                else None))


def _fanin_sidecar(fname: FileName, data: bytes) -> FileReport | None:
    """A `.score.md` sidecar in the verifier's own shape, passed, with a score 0..100."""
    if data.startswith(BOM) or b"\r" in data or not data.startswith(b"---\n"):
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    m = _FANIN_SIDECAR.match(text)
    if m is None or len(data) > FAN_IN.contract.max_bytes:
        return None
    score = int(m.group(1), 10)
    if score > 100:
        return None
    return FileReport(FileFacts(fname.name, Kind.SIDECAR, fname.tag, fname.fnum, fname.suffix,
                                score=score, parsed=True))
