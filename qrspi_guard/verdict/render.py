"""The verdict's outputs (text block, JSON) and the block read back as an orchestrator
reads it."""

from __future__ import annotations

from typing import Any

from qrspi_guard.parse import jsondoc
from qrspi_guard.records import record
from qrspi_guard.verdict.model import (
    BLOCKED,
    DONE,
    DONE_WITH_CONCERNS,
    VERDICTS,
    VerdictResult,
    safe_line,
)

_KEYS = ("REVIEWER VERDICT", "COMPLETENESS_SCORE", "MISSING_CATEGORIES", "REVIEWER_NOTES")


def format_score(score: float) -> str:
    """``1.0``, ``0.9``, ``0.85``, ``0.7``, ``0.0``: two decimals at most, no float noise."""
    return repr(round(score, 2))


def render_lines(result: VerdictResult) -> list[str]:
    """The output lines: the four block lines and the status line, or one BLOCKED line."""
    if result.status == BLOCKED or result.verdict is None or result.completeness_score is None:
        return [f"{BLOCKED}: {safe_line(result.message or '')}"]
    return [
        f"REVIEWER VERDICT: {result.verdict}",
        f"COMPLETENESS_SCORE: {format_score(result.completeness_score)}",
        f"MISSING_CATEGORIES: {', '.join(result.missing_categories) or 'none'}",
        f"REVIEWER_NOTES: {'; '.join(safe_line(n) for n in result.reviewer_notes) or 'none'}",
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
    return jsondoc.dumps(to_json_dict(result), ensure_ascii=True) + "\n"


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
