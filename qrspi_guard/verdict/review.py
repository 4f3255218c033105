"""The verdict's rules (spec rules 4-9): findings bytes -> a VerdictResult. Pure: strict
JSON decoding (no NaN, huge integers kept as digits), then the rules."""

from __future__ import annotations

from typing import Any

from qrspi_guard.parse import jsondoc
from qrspi_guard.verdict.model import (
    APPROVED,
    APPROVED_WITH_CONCERNS,
    BLOCKED,
    DONE,
    DONE_WITH_CONCERNS,
    EXPECTED_CATEGORIES,
    ISSUE_SEVERITIES,
    MAX_BYTES,
    MAX_NOTES,
    REJECTED,
    REQUIRED_FIELDS,
    UNUSUAL,
    VerdictResult,
    note_field,
    safe_line,
)

#: Integer literals longer than this are not converted (Python refuses > 4300 digits).
_MAX_INT_DIGITS = 1000


class BigInt:
    """A JSON integer too long to convert: certainly not a plausible issue count."""

    def __init__(self, digits: str) -> None:
        self.digits = digits.lstrip("-")


def _parse_int(digits: str) -> int | BigInt:
    if len(digits) > _MAX_INT_DIGITS:
        return BigInt(digits)
    return int(digits)


def decode_json(data: bytes) -> Any:
    """The JSON reader's rules (:mod:`qrspi_guard.parse.jsondoc`), one leading BOM
    allowed, huge integers kept as digits. Raises ValueError."""
    return jsondoc.loads(data, parse_int=_parse_int, bom=True)


_FULL = 100


_COUNT_PENALTY = 10


_ALL_MISSING_PENALTY = 20


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, BigInt)):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__  # pragma: no cover - json yields only the above


def blocked(path: str, message: str) -> VerdictResult:
    return VerdictResult(findings_path=path, status=BLOCKED, message=message)


def not_found_message(path: str) -> str:
    return f"Analyzer findings not found at {safe_line(path)}. The analyzer step may have failed."


def invalid_json_message(path: str) -> str:
    return f"Analyzer findings at {safe_line(path)} are not valid JSON. Re-run the analyzer step."


def wrong_shape_message(path: str, what: str) -> str:
    return (
        f"Analyzer findings at {safe_line(path)} have the wrong shape: {what}. "
        "Re-run the analyzer step."
    )


def too_large_message(path: str, max_bytes: int = MAX_BYTES) -> str:
    return (
        f"Analyzer findings at {safe_line(path)} are too large (over {max_bytes} bytes). "
        "Re-run the analyzer step."
    )


def unreadable_message(path: str, reason: str) -> str:
    return (
        f"Analyzer findings at {safe_line(path)} could not be read ({safe_line(reason)}). "
        "The analyzer step may have failed."
    )


def score_from_penalties(hundredths: int) -> float:
    """Start at 1.0, subtract *hundredths*/100, clamp at 0.0; exact to two decimals."""
    return max(0, _FULL - hundredths) / 100


def decide(score: float, structural_failure: bool, has_notes: bool) -> str:
    """Spec rule 9. The score is compared after rounding to two decimals."""
    s = round(score, 2)
    if structural_failure or s < 0.6:
        return REJECTED
    if s >= 0.85 and not has_notes:
        return APPROVED
    return APPROVED_WITH_CONCERNS


def status_for(verdict: str) -> str:
    """DONE for approved; DONE_WITH_CONCERNS otherwise (rejected included, per the seed)."""
    return DONE if verdict == APPROVED else DONE_WITH_CONCERNS


def _present(issue: dict[str, Any], key: str) -> bool:
    value = issue.get(key)
    return isinstance(value, str) and value.strip() != ""


def evaluate(findings_path: str, data: bytes | None, max_bytes: int = MAX_BYTES) -> VerdictResult:
    """Review findings *data* (``None``: the file is missing). Pure; never raises."""
    if data is None:
        return blocked(findings_path, not_found_message(findings_path))
    if len(data) > max_bytes:
        return blocked(findings_path, too_large_message(findings_path, max_bytes))
    try:
        doc = decode_json(data)
    except ValueError:
        return blocked(findings_path, invalid_json_message(findings_path))
    if not isinstance(doc, dict):
        what = f"the top level is {_article(_type_name(doc))}, not an object"
        return blocked(findings_path, wrong_shape_message(findings_path, what))
    if "issues" not in doc:
        what = '"issues" is missing'
        return blocked(findings_path, wrong_shape_message(findings_path, what))
    issues = doc["issues"]
    if not isinstance(issues, list):
        what = f'"issues" is {_article(_type_name(issues))}, not an array'
        return blocked(findings_path, wrong_shape_message(findings_path, what))
    return _review(findings_path, doc, issues)


def _article(type_name: str) -> str:
    return ("an " if type_name[0] in "aeiou" else "a ") + type_name


def _review(path: str, doc: dict[str, Any], issues: list[Any]) -> VerdictResult:
    notes: list[str] = []
    penalty = 0
    structural = False

    # Rule 4: issue_count must be an integer (bool is not) equal to len(issues).
    raw_count = doc.get("issue_count")
    count: int
    if "issue_count" not in doc:
        notes.append("issue_count is missing")
        penalty += _COUNT_PENALTY
        structural = True
        count = len(issues)
    elif isinstance(raw_count, BigInt):
        notes.append(
            f"issue_count (an integer of {len(raw_count.digits)} digits) does not match "
            f"the {len(issues)} issues listed"
        )
        penalty += _COUNT_PENALTY
        structural = True
        count = len(issues) + 1  # certainly > 0 and != len(issues)
    elif not isinstance(raw_count, int) or isinstance(raw_count, bool):
        notes.append(f"issue_count is not an integer (got {_type_name(raw_count)})")
        penalty += _COUNT_PENALTY
        structural = True
        count = len(issues)
    else:
        count = raw_count
        if count != len(issues):
            notes.append(f"issue_count {count} does not match the {len(issues)} issues listed")
            penalty += _COUNT_PENALTY
            structural = True

    # Rules 5-7, issue by issue.
    covered: set[str] = set()
    for index, issue in enumerate(issues):
        label = f"issue {index}"
        if not isinstance(issue, dict):
            notes.append(f"{label}: not an object (got {_type_name(issue)})")
            structural = True
            continue
        absent = [key for key in REQUIRED_FIELDS if not _present(issue, key)]
        if absent:
            notes.append(f"{label}: incomplete, missing or not a string: {', '.join(absent)}")
            structural = True
        category = issue["category"] if _present(issue, "category") else None
        severity = issue["severity"] if _present(issue, "severity") else None
        if category is not None:
            if category in EXPECTED_CATEGORIES:
                covered.add(category)
            else:
                notes.append(f'{label}: unknown category "{note_field(category)}"')
        if severity is not None and severity not in ISSUE_SEVERITIES:
            notes.append(f'{label}: unknown severity "{note_field(severity)}"')
        if (category, severity) in UNUSUAL:
            notes.append(f"{label}: {category} finding with {severity} severity is unusual")

    # Rule 6: coverage, and the all-missing penalty.
    missing = tuple(c for c in EXPECTED_CATEGORIES if c not in covered)
    if len(missing) == len(EXPECTED_CATEGORIES) and count > 0:
        notes.append("all expected categories are missing although issues were reported")
        penalty += _ALL_MISSING_PENALTY

    if len(notes) > MAX_NOTES:
        omitted = len(notes) - (MAX_NOTES - 1)
        notes = notes[: MAX_NOTES - 1] + [f"{omitted} more notes omitted"]

    score = score_from_penalties(penalty)
    verdict = decide(score, structural, bool(notes))
    return VerdictResult(
        findings_path=path,
        status=status_for(verdict),
        verdict=verdict,
        completeness_score=score,
        missing_categories=missing,
        reviewer_notes=tuple(notes),
    )


