"""The analyzer-findings reviewer (spec ``verdict.md``, seed 000): findings.json -> verdict.

Data flows one way: :mod:`.read` (the only I/O, read-only) gives bytes or ``None``;
:mod:`.review` (:func:`evaluate`) turns them into a :class:`VerdictResult` (pure, no
printing); :mod:`.render` turns a result into output and reads the text block back as
an orchestrator would (:func:`parse_block`); :mod:`.model` holds the vocabulary.

Everything taken from the findings file is untrusted. Untrusted text only ever reaches
a note through :func:`.model.note_field`, which keeps it on one line (controls, Unicode line
separators, bidi overrides and lone surrogates escaped) and escapes ``;`` so the notes,
joined with ``"; "``, can always be split back apart.
"""

from __future__ import annotations

from qrspi_guard.verdict.model import (
    APPROVED,
    APPROVED_WITH_CONCERNS,
    BLOCKED,
    DONE,
    DONE_WITH_CONCERNS,
    EXIT_BLOCKED,
    EXIT_CODES,
    EXPECTED_CATEGORIES,
    FIELD_LIMIT,
    ISSUE_SEVERITIES,
    MAX_BYTES,
    MAX_NOTES,
    REJECTED,
    REQUIRED_FIELDS,
    UNUSUAL,
    VERDICTS,
    FindingsUnreadable,
    VerdictResult,
)
from qrspi_guard.verdict.read import read_findings, review_path
from qrspi_guard.verdict.render import (
    BlockParseError,
    ParsedBlock,
    format_score,
    parse_block,
    render_json,
    render_lines,
    render_text,
    to_json_dict,
)
from qrspi_guard.verdict.review import (
    decide,
    evaluate,
    invalid_json_message,
    not_found_message,
    score_from_penalties,
    status_for,
    too_large_message,
    unreadable_message,
    wrong_shape_message,
)

__all__ = [
    "APPROVED", "APPROVED_WITH_CONCERNS", "BLOCKED", "DONE", "DONE_WITH_CONCERNS",
    "EXIT_BLOCKED", "EXIT_CODES", "EXPECTED_CATEGORIES", "FIELD_LIMIT", "ISSUE_SEVERITIES",
    "MAX_BYTES", "MAX_NOTES", "REJECTED", "REQUIRED_FIELDS", "UNUSUAL", "VERDICTS",
    "BlockParseError", "FindingsUnreadable", "ParsedBlock", "VerdictResult", "decide",
    "evaluate", "format_score", "invalid_json_message", "not_found_message", "parse_block",
    "read_findings", "render_json", "render_lines", "render_text", "review_path",
    "score_from_penalties", "status_for", "to_json_dict", "too_large_message",
    "unreadable_message", "wrong_shape_message",
]
