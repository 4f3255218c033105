"""Files the orchestrator writes into or beside a round, which the round rules read
(generations.md §4, §5): the commit anchor, the scope set, the verifier-disabled
marker, the task dispatch manifest, and the verifier's own result files.

Each function takes bytes the engine has already read (never a path) and returns
what the rules need plus the problem, if any; the engine turns problems into
diagnostics with the file's place.
"""

from __future__ import annotations

import re
from typing import Any

from qrspi_guard.contract.digits import bounded_number
from qrspi_guard.contract.generations import CONTRACT
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.parse import jsondoc
from qrspi_guard.records import field, record
from qrspi_guard.rules.verifier import Audit, parse_audit

_ANCHOR_RE = re.compile(rb"[0-9a-f]{40}\n")


@record(frozen=True)
class Problem:
    """Why a bookkeeping file is malformed, and where in it."""

    message: str
    line: int | None = None
    field: str | None = None
    #: "warning" where the file's upstream consumer still accepts it (the cause is
    #: then reported as a warning, never a halt: generations.md §4 and the notes in
    #: the README's decisions); None: the catalogue's level
    level: str | None = None


# -- round-NN-commit.txt ---------------------------------------------------------------


def commit_anchor(data: bytes, per_task: bool = False) -> tuple[str | None, Problem | None]:
    """The round commit's SHA, or why the anchor is malformed.

    The contract's shape is exactly 40 lowercase hex digits and one newline. Anything
    else is an error unless the file's upstream consumer accepts it, then a warning:
    per-task rounds are read by `round-prepare.sh` (Python's
    ``re.match(rb"^[0-9a-f]{40}\n$")``, which also takes a second newline), artifact
    rounds by `review-prep.sh` (whitespace stripped, 7 to 64 lowercase hex digits).
    The SHA is returned whenever a consumer accepts it."""
    if _ANCHOR_RE.fullmatch(data):
        return data[:40].decode("ascii"), None
    shown = data[:60].decode("utf-8", "replace")
    said = f"expected 40 lowercase hex digits and one newline, found {shown!r}" + (
        "..." if len(data) > 60 else "")
    if not data:
        return None, Problem("the anchor is empty (expected 40 lowercase hex digits and a "
                             "newline)", 1)
    if per_task:
        if re.match(rb"[0-9a-f]{40}\n\Z", data[:-1]) and data.endswith(b"\n"):
            return data[:40].decode("ascii"), Problem(said + "; round-prepare.sh still "
                                                      "reads it", 1, level="warning")
        return None, Problem(said + " (round-prepare.sh halts on it)", 1)
    loose = artifact_anchor_sha(data)
    if loose is not None:
        return loose, Problem(said + "; review-prep.sh still reads it", 1, level="warning")
    return None, Problem(said + " (review-prep.sh refuses it)", 1)


#: what ``tr -d '[:space:]'`` removes in the C locale
_ANCHOR_SPACE = b" \t\n\r\v\f"
_ARTIFACT_SHA_RE = re.compile(rb"[0-9a-f]{7,64}")


def artifact_anchor_sha(data: bytes) -> str | None:
    """The SHA an artifact step's anchor names as `review-prep.sh` reads it (every
    white-space byte removed, then 7 to 64 lowercase hex digits), or None. The one
    definition of that shape: the anchor rule above and ``qrspi-guard review-prep``
    both use it."""
    stripped = data.translate(None, _ANCHOR_SPACE)
    if _ARTIFACT_SHA_RE.fullmatch(stripped):
        return stripped.decode("ascii")
    return None


# -- round-NN-scope-set.txt ------------------------------------------------------------


def scope_set(data: bytes) -> tuple[list[str], Problem | None]:
    """The scope set's tags (`#` comment lines first, then one tag per line: a path, a
    `## Heading` or `<full>`), or its first problem. CR LF and whitespace-padded tags
    are errors (the convergence rule compares bytes); a blank line or a missing final
    newline is a warning (`round-prepare.sh` drops blank lines before comparing)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], Problem(f"byte {exc.start} is not valid UTF-8", 1)
    if not text:
        return [], None  # a valid empty set
    if "\r" in text:
        cr_line = text.count("\n", 0, text.index("\r")) + 1
        return [], Problem("CR LF line endings (the convergence rule compares bytes)", cr_line)
    tags: list[str] = []
    soft: Problem | None = None
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    for number, line in enumerate(lines, start=1):
        if line.startswith("#") and not line.startswith("##"):
            continue  # a comment
        if not line.strip():
            soft = soft or Problem("a blank tag line", number, level="warning")
            continue
        if line != line.strip():
            return [], Problem(f"tag line {line[:80]!r} has surrounding whitespace", number)
        tags.append(line)
    if soft is None and not text.endswith("\n"):
        soft = Problem("no final newline", len(lines), level="warning")
    return tags, soft


# -- round-NN-verifier-disabled.md ---------------------------------------------------


def verifier_marker(data: bytes, round_no: int | None) -> Problem | None:
    """None when the marker waives the verifier for round *round_no*: frontmatter with a
    non-blank `reason`, `round` equal to the round and a non-blank `created_by`
    (implement), or `timestamp`, `reason` and an integer `finding_count` (apply-fix
    failure menu). Otherwise why it is treated as absent."""
    if not data:
        return Problem("the marker is empty (zero bytes)", 1)
    doc = _frontmatter(data)
    if isinstance(doc, Problem):
        return doc
    values = doc.data
    if not _text(values.get("reason")):
        return Problem("the marker has no non-blank reason", doc.key_lines.get("reason", 1),
                       "reason")
    implement = _implement_problem(doc, values, round_no)
    if implement is None:
        return None
    menu = _menu_problem(doc, values)
    if menu is None:
        return None
    # neither schema holds: say what the marker seems to be missing
    return implement if ("created_by" in values or "round" in values) else menu


def _implement_problem(doc: fm.Document, values: dict[str, Any],
                       round_no: int | None) -> Problem | None:
    """The implement skill's schema: `round` equal to the round, a non-blank
    `created_by` (and the `reason` checked by the caller)."""
    raw = doc.raw.get("round")
    number = bounded_number(raw) if raw is not None else None
    if "round" not in values:
        return Problem("the marker has no round (implement schema) and no timestamp and "
                       "finding_count (failure-menu schema)", 1, "round")
    if number is None or number != round_no:
        return Problem(f"the marker's round ({_short(values.get('round'))}) is not this "
                       f"round ({round_no})", doc.key_lines.get("round"), "round")
    if not _text(values.get("created_by")):
        return Problem("the marker has no non-blank created_by",
                       doc.key_lines.get("created_by", 1), "created_by")
    return None


def _menu_problem(doc: fm.Document, values: dict[str, Any]) -> Problem | None:
    """The apply-fix failure menu's schema: `timestamp`, an integer `finding_count`."""
    if not _text(values.get("timestamp")) and not _is_timestamp(values.get("timestamp")):
        return Problem("the marker has neither round and created_by nor a timestamp",
                       doc.key_lines.get("timestamp", 1), "timestamp")
    count = values.get("finding_count")
    if not (isinstance(count, int) and not isinstance(count, bool)):
        return Problem(f"the marker's finding_count ({_short(count)}) is not an integer",
                       doc.key_lines.get("finding_count", 1), "finding_count")
    return None


def _is_timestamp(value: Any) -> bool:
    import datetime

    return isinstance(value, datetime.date)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _frontmatter(data: bytes) -> fm.Document | Problem:
    decoded = fm.decode(data)
    if isinstance(decoded, fm.ByteFailure):
        return Problem(decoded.message, decoded.line)
    doc = fm.parse(decoded.text)
    if isinstance(doc, fm.ParseFailure):
        return Problem(doc.message, doc.line)
    return doc


def _short(value: Any) -> str:
    from qrspi_guard.contract.diagnostics import untrusted

    return untrusted(value)[:60]


# -- .dispatch-manifest.json ------------------------------------------------------------


def dispatch_manifest(data: bytes) -> tuple[tuple[str, ...] | None, Problem | None]:
    """The tags a task round expects: every entry's `tag`, whatever its `status`."""
    doc = load_json(data)
    if isinstance(doc, Problem):
        return None, doc
    if not isinstance(doc, list):
        return None, Problem("the manifest is not a JSON array")
    tags: list[str] = []
    for i, entry in enumerate(doc):
        tag = entry.get("tag") if isinstance(entry, dict) else None
        if not isinstance(tag, str) or not CONTRACT.tag_re.fullmatch(tag):
            what = "not an object" if not isinstance(entry, dict) else (
                "has no tag" if tag is None else f"has tag {_short(tag)}, not a reviewer tag")
            return None, Problem(f"entry {i} {what}")
        if tag not in tags:
            tags.append(tag)
    return tuple(tags), None


# -- the verifier's result files ------------------------------------------------------


def load_json(data: bytes) -> Any:
    """Parsed JSON, or a Problem: the one JSON reader's rules
    (:mod:`qrspi_guard.parse.jsondoc`), never a RecursionError or the int-digits
    ValueError, whatever the bytes."""
    try:
        return jsondoc.loads(data)
    except jsondoc.JsonError as exc:
        return Problem(str(exc))


def fanin_audit(data: bytes) -> Audit:
    doc = load_json(data)
    if isinstance(doc, Problem):
        return Audit(problem=doc.message)
    return parse_audit(doc)


def kept_list(data: bytes) -> tuple[list[str], Problem | None]:
    """`kept-findings.txt`'s lines (one path per line, no header)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], Problem(f"byte {exc.start} is not valid UTF-8")
    if not text:
        return [], None
    return text[:-1].split("\n") if text.endswith("\n") else text.split("\n"), None


@record
class VerifiedTotals:
    totals: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def verified_totals(data: bytes) -> VerifiedTotals:
    """The frontmatter of `round-NN-verified.md`."""
    doc = _frontmatter(data)
    if isinstance(doc, Problem):
        return VerifiedTotals(error=doc.message)
    return VerifiedTotals(totals=doc.data)
