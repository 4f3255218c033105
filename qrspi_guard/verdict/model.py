"""The verdict's vocabulary: expected categories, verdicts, statuses, exit codes, limits,
the result type, and the escaping every note goes through."""


from __future__ import annotations

import re

from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

#: The categories the analyzer is expected to cover, in the order they are reported.
EXPECTED_CATEGORIES: tuple[str, ...] = ("null_check", "error_handling", "naming")
ISSUE_SEVERITIES: tuple[str, ...] = ("high", "medium", "low")
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


_SURROGATE = re.compile(r"[\ud800-\udfff]")


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


# --------------------------------------------------------------------------- escaping


def safe_line(text: str) -> str:
    """One printable line: textsafe's escaping plus lone surrogates (unencodable)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", one_line(text))


def note_field(text: str, limit: int = FIELD_LIMIT) -> str:
    """Untrusted text for a note: one line, cut to *limit*, ``;`` escaped."""
    cut = text if len(text) <= limit else text[:limit] + "…"
    return safe_line(cut).replace(";", "\\x3b")
