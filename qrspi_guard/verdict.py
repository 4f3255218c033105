"""The analyzer-findings reviewer (spec ``verdict.md``, seed 000): findings.json -> verdict.

Data flows one way: :func:`read_findings` (the only I/O, read-only) gives bytes or
``None``; :func:`evaluate` turns them into a :class:`VerdictResult` (pure, no printing);
:func:`render_text` / :func:`render_json` turn a result into output; :func:`parse_block`
reads the text block back as an orchestrator would.

Everything taken from the findings file is untrusted. Untrusted text only ever reaches
a note through :func:`_field`, which keeps it on one line (controls, Unicode line
separators, bidi overrides and lone surrogates escaped) and escapes ``;`` so the notes,
joined with ``"; "``, can always be split back apart.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import Any

from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

#: The categories the analyzer is expected to cover, in the order they are reported.
EXPECTED_CATEGORIES: tuple[str, ...] = ("null_check", "error_handling", "naming")
SEVERITIES: tuple[str, ...] = ("high", "medium", "low")
REQUIRED_FIELDS: tuple[str, ...] = ("category", "severity", "location", "description")

#: (category, severity) pairs that are unusual: a note, never a score change.
UNUSUAL: frozenset[tuple[str, str]] = frozenset(
    {("null_check", "low"), ("error_handling", "high"), ("naming", "high")}
)

APPROVED = "approved"
APPROVED_WITH_CONCERNS = "approved_with_concerns"
REJECTED = "rejected"
VERDICTS: tuple[str, ...] = (APPROVED, APPROVED_WITH_CONCERNS, REJECTED)

DONE = "DONE"
DONE_WITH_CONCERNS = "DONE_WITH_CONCERNS"
BLOCKED = "BLOCKED"

#: Exit code per verdict; BLOCKED is 4 and bad arguments (click) are 2.
EXIT_CODES: dict[str, int] = {APPROVED: 0, APPROVED_WITH_CONCERNS: 1, REJECTED: 3}
EXIT_BLOCKED = 4

#: Findings files larger than this are refused (BLOCKED) without being parsed.
MAX_BYTES = 8 * 1024 * 1024
#: At most this many notes are kept; the rest are summarised in one last note.
MAX_NOTES = 200
#: Untrusted text quoted in a note is cut to this many characters.
FIELD_LIMIT = 80
#: Integer literals longer than this are not converted (Python refuses > 4300 digits).
_MAX_INT_DIGITS = 1000

# Score arithmetic is done in hundredths, so 1.0 - 0.1 - 0.2 is exactly 0.7.
_FULL = 100
_COUNT_PENALTY = 10
_ALL_MISSING_PENALTY = 20

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_KEYS = ("REVIEWER VERDICT", "COMPLETENESS_SCORE", "MISSING_CATEGORIES", "REVIEWER_NOTES")


@record(frozen=True)
class VerdictResult:
    """The outcome of reviewing one findings file.

    When ``status`` is ``BLOCKED``, ``message`` says why and ``verdict`` and
    ``completeness_score`` are ``None``; otherwise ``message`` is ``None``.
    ``reviewer_notes`` are already safe to print (one line each, no ``;``).
    """

    findings_path: str
    status: str
    verdict: str | None = None
    completeness_score: float | None = None
    missing_categories: tuple[str, ...] = ()
    reviewer_notes: tuple[str, ...] = ()
    message: str | None = None

    @property
    def exit_code(self) -> int:
        if self.status == BLOCKED or self.verdict is None:
            return EXIT_BLOCKED
        return EXIT_CODES[self.verdict]


class FindingsUnreadable(Exception):
    """The findings path exists but cannot be read as a file; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _BigInt:
    """A JSON integer too long to convert: certainly not a plausible issue count."""

    def __init__(self, digits: str) -> None:
        self.digits = digits.lstrip("-")


# --------------------------------------------------------------------------- escaping


def _line(text: str) -> str:
    """One printable line: textsafe's escaping plus lone surrogates (unencodable)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", one_line(text))


def _field(text: str, limit: int = FIELD_LIMIT) -> str:
    """Untrusted text for a note: one line, cut to *limit*, ``;`` escaped."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return _line(cut).replace(";", "\\x3b")


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, _BigInt)):
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


# --------------------------------------------------------------------------- loading


def read_findings(path: str, max_bytes: int = MAX_BYTES) -> bytes | None:
    """Read the findings file: its bytes, or ``None`` when nothing is at *path*.

    Reads at most ``max_bytes + 1`` bytes (so an oversized file is detected without
    reading it whole). Raises :class:`FindingsUnreadable` for a directory, a FIFO or
    device, or an OS error. Never writes.
    """
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:  # ValueError: embedded NUL in the path
        raise FindingsUnreadable(_os_reason(exc)) from None
    _require_regular(st.st_mode)  # a FIFO or device is never opened
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FindingsUnreadable(_os_reason(exc)) from None
    try:
        with os.fdopen(fd, "rb") as fh:
            _require_regular(os.fstat(fh.fileno()).st_mode)  # swapped since the stat?
            return fh.read(max_bytes + 1)
    except OSError as exc:
        raise FindingsUnreadable(_os_reason(exc)) from None


def _require_regular(mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise FindingsUnreadable("it is a directory")
    if not stat.S_ISREG(mode):
        raise FindingsUnreadable("it is not a regular file")


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, ValueError):
        return "invalid path"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return type(exc).__name__


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse_int(digits: str) -> int | _BigInt:
    if len(digits) > _MAX_INT_DIGITS:
        return _BigInt(digits)
    return int(digits)


def _decode(data: bytes) -> Any:
    """Strict JSON: UTF-8 (one leading BOM allowed), no NaN/Infinity. Raises ValueError."""
    text = data.decode("utf-8")  # UnicodeDecodeError is a ValueError
    if text.startswith("\ufeff"):
        text = text[1:]
    return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int)


# --------------------------------------------------------------------------- messages


def _blocked(path: str, message: str) -> VerdictResult:
    return VerdictResult(findings_path=path, status=BLOCKED, message=message)


def not_found_message(path: str) -> str:
    return f"Analyzer findings not found at {_line(path)}. The analyzer step may have failed."


def invalid_json_message(path: str) -> str:
    return f"Analyzer findings at {_line(path)} are not valid JSON. Re-run the analyzer step."


def wrong_shape_message(path: str, what: str) -> str:
    return (
        f"Analyzer findings at {_line(path)} have the wrong shape: {what}. "
        "Re-run the analyzer step."
    )


def too_large_message(path: str, max_bytes: int = MAX_BYTES) -> str:
    return (
        f"Analyzer findings at {_line(path)} are too large (over {max_bytes} bytes). "
        "Re-run the analyzer step."
    )


def unreadable_message(path: str, reason: str) -> str:
    return (
        f"Analyzer findings at {_line(path)} could not be read ({_line(reason)}). "
        "The analyzer step may have failed."
    )


# --------------------------------------------------------------------------- rules


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
        return _blocked(findings_path, not_found_message(findings_path))
    if len(data) > max_bytes:
        return _blocked(findings_path, too_large_message(findings_path, max_bytes))
    try:
        doc = _decode(data)
    except (ValueError, RecursionError):
        return _blocked(findings_path, invalid_json_message(findings_path))
    if not isinstance(doc, dict):
        what = f"the top level is {_article(_type_name(doc))}, not an object"
        return _blocked(findings_path, wrong_shape_message(findings_path, what))
    if "issues" not in doc:
        what = '"issues" is missing'
        return _blocked(findings_path, wrong_shape_message(findings_path, what))
    issues = doc["issues"]
    if not isinstance(issues, list):
        what = f'"issues" is {_article(_type_name(issues))}, not an array'
        return _blocked(findings_path, wrong_shape_message(findings_path, what))
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
    elif isinstance(raw_count, _BigInt):
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
                notes.append(f'{label}: unknown category "{_field(category)}"')
        if severity is not None and severity not in SEVERITIES:
            notes.append(f'{label}: unknown severity "{_field(severity)}"')
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


def review_path(path: str, max_bytes: int = MAX_BYTES) -> VerdictResult:
    """Read and review the findings file at *path*. Read-only; never raises."""
    try:
        data = read_findings(path, max_bytes)
    except FindingsUnreadable as exc:
        return _blocked(path, unreadable_message(path, exc.reason))
    return evaluate(path, data, max_bytes)


# --------------------------------------------------------------------------- rendering


def format_score(score: float) -> str:
    """``1.0``, ``0.9``, ``0.85``, ``0.7``, ``0.0``: two decimals at most, no float noise."""
    return repr(round(score, 2))


def render_lines(result: VerdictResult) -> list[str]:
    """The output lines: the four block lines and the status line, or one BLOCKED line."""
    if result.status == BLOCKED or result.verdict is None or result.completeness_score is None:
        return [f"{BLOCKED}: {_line(result.message or '')}"]
    return [
        f"REVIEWER VERDICT: {result.verdict}",
        f"COMPLETENESS_SCORE: {format_score(result.completeness_score)}",
        f"MISSING_CATEGORIES: {', '.join(result.missing_categories) or 'none'}",
        f"REVIEWER_NOTES: {'; '.join(_line(n) for n in result.reviewer_notes) or 'none'}",
        result.status,
    ]


def render_text(result: VerdictResult) -> str:
    """The text output, newline-terminated."""
    return "\n".join(render_lines(result)) + "\n"


def to_json_dict(result: VerdictResult) -> dict[str, Any]:
    """The verdict object. For BLOCKED, verdict/score/categories/notes are null."""
    blocked = result.status == BLOCKED
    return {
        "findings_path": result.findings_path,
        "verdict": None if blocked else result.verdict,
        "completeness_score": None if blocked else result.completeness_score,
        "missing_categories": None if blocked else list(result.missing_categories),
        "reviewer_notes": None if blocked else list(result.reviewer_notes),
        "status": result.status,
        "message": result.message,
    }


def render_json(result: VerdictResult) -> str:
    """The verdict object as one line of ASCII JSON, newline-terminated."""
    return json.dumps(to_json_dict(result), ensure_ascii=True) + "\n"


# --------------------------------------------------------------------------- parsing


@record(frozen=True)
class ParsedBlock:
    """What an orchestrator reads back from the text output."""

    status: str
    verdict: str | None = None
    completeness_score: float | None = None
    missing_categories: tuple[str, ...] = ()
    reviewer_notes: tuple[str, ...] = ()
    message: str | None = None


class BlockParseError(ValueError):
    """The text is not a verdict block (nor a BLOCKED line)."""


def parse_block(text: str) -> ParsedBlock:
    """Parse the verdict output line by line, as an orchestrator would.

    Accepts exactly the four ``KEY: value`` lines followed by the status line, or a
    single ``BLOCKED: message`` line. Raises :class:`BlockParseError` otherwise.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) == 1 and lines[0].startswith(f"{BLOCKED}: "):
        return ParsedBlock(status=BLOCKED, message=lines[0][len(BLOCKED) + 2 :])
    if len(lines) != len(_KEYS) + 1:
        raise BlockParseError(f"expected {len(_KEYS) + 1} lines, got {len(lines)}")
    values: list[str] = []
    for key, line in zip(_KEYS, lines[: len(_KEYS)], strict=True):
        prefix = f"{key}: "
        if not line.startswith(prefix):
            raise BlockParseError(f"expected a {key} line")
        values.append(line[len(prefix) :])
    verdict, score_text, missing_text, notes_text = values
    status = lines[-1]
    if verdict not in VERDICTS:
        raise BlockParseError("unknown verdict")
    if status not in (DONE, DONE_WITH_CONCERNS):
        raise BlockParseError("unknown status")
    try:
        score = float(score_text)
    except ValueError:
        raise BlockParseError("score is not a number") from None
    missing = () if missing_text == "none" else tuple(missing_text.split(", "))
    notes = () if notes_text == "none" else tuple(notes_text.split("; "))
    return ParsedBlock(
        status=status,
        verdict=verdict,
        completeness_score=score,
        missing_categories=missing,
        reviewer_notes=notes,
    )
