"""Per-file rules: one file's bytes, name and place -> facts and diagnostics.

These apply as soon as a file settles; nothing here looks at other files. The contract
(enums, keys, patterns) comes from the place's generation (:attr:`Place.gen`), never
from a copy of it.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from qrspi_guard import frontmatter as fm
from qrspi_guard.contract.generations import DEFAULT_GENERATION, FAN_IN, FindingContract, Generation
from qrspi_guard.diagnostics import Diagnostic, describe, diag, untrusted
from qrspi_guard.layout import TASK_ONLY_KINDS, FileName, Kind, bounded_number, normalise_step
from qrspi_guard.records import field, record
from qrspi_guard.rules.sidecars import fanin_field, fanin_score, frontmatter_lines, judge_sidecar

_FEEDBACK_REF_RE = re.compile(r"(?:\./)?feedback/[^/\s]+\.md")
_FEEDBACK_MENTION_RE = re.compile(r"(?<![\w./-])(?:\./)?feedback/[\w.-]+\.md")
_RANGE_SUFFIX_RE = re.compile(r":L?[0-9]+(?:-L?[0-9]+)?$")
#: visual-fidelity skip sentinel (generations.md §5)
VF_SKIP_REASONS: tuple[str, ...] = (
    "visual_fidelity_required_false", "missing_visual_fidelity_check",
    "empty_wireframe_paths", "empty_screenshot_paths",
)


@record(frozen=True)
class Place:
    """Where a file is: its display path, its round's step and number, and the protocol
    generation the round is judged by."""

    path: str
    step: str | None  #: step directory name, e.g. `design`, `integration`, `task-03`
    round: int | None
    is_task: bool = False
    gen: Generation = DEFAULT_GENERATION
    #: read each finding's `change_type:` line as the fan-in does (a verified fan-in
    #: round: its recount needs it)
    fanin_fields: bool = False


@record
class FileFacts:
    """What the round rules need to know about one file."""

    name: str
    kind: Kind
    tag: str | None = None
    fnum: int | None = None
    suffix: str | None = None  #: a sidecar's `.score.*` suffix
    finding_id: str | None = None
    change_type: str | None = None  #: the valid change_type, else None
    escalated: bool = False  #: cites feedback/*.md
    score: int | None = None  #: sidecar: the readable score 0..100, else None
    verify_failed: bool = False  #: sidecar: VERIFY_FAILED / verifier_status: failed
    parsed: bool = False
    #: finding: the first `change_type:` line as verifier-fan-in.sh reads it ("" when
    #: absent or empty); None when not read (:attr:`Place.fanin_fields` off)
    fanin_change_type: str | None = None
    #: `<stem>.score.md`: the score as verifier-fan-in.sh reads it from the raw bytes (None
    #: when it would halt the finding, or when not read)
    fanin_score: int | None = None
    stands_for_output: bool = False  #: a valid visual-fidelity skip sentinel


@record
class FileReport:
    facts: FileFacts
    diagnostics: list[Diagnostic] = field(default_factory=list)


def judge_file(fname: FileName, data: bytes, place: Place) -> FileReport:
    """Judge one round-directory file's bytes. Never raises on any input."""
    facts = FileFacts(fname.name, fname.kind, fname.tag, fname.fnum, fname.suffix)
    report = FileReport(facts)
    d = partial(diag, file=fname.name, path=place.path, step=place.step, round=place.round)
    out = report.diagnostics
    if place.fanin_fields:
        if fname.kind is Kind.FINDING:
            facts.fanin_change_type = fanin_change_type(data)
        elif fname.name.endswith(FAN_IN_SUFFIX):
            facts.fanin_score = fanin_score_of(data)
    decoded = fm.decode(data)
    if isinstance(decoded, fm.ByteFailure):
        out.append(d(decoded.cause, decoded.message, line=decoded.line))
        return report
    if decoded.had_bom:
        out.append(d("utf8_bom", "file starts with a UTF-8 byte-order mark", line=1))
    if decoded.had_crlf:
        out.append(d("crlf_line_endings", "file has CR LF line endings; use LF", line=1))
    if fname.kind is Kind.SIDECAR:
        got = judge_sidecar(decoded.text, fname.suffix, d, out)
        facts.score, facts.verify_failed = got.score, got.verify_failed
        facts.parsed = True
        return report
    text = decoded.text
    if text and not (text.endswith("\n") and not text.endswith("\n\n")):
        what = "no final newline" if not text.endswith("\n") else "more than one final newline"
        out.append(d("trailing_newline", f"file must end with exactly one newline ({what})",
                      line=text.count("\n") + 1))
    doc = fm.parse(text)
    if isinstance(doc, fm.ParseFailure):
        if fname.kind is Kind.VF_SKIP:
            out.append(d("vf_sentinel_invalid", f"the skip sentinel cannot be read "
                         f"({doc.message}), so it does not stand for {fname.tag}'s output",
                         line=doc.line))
            return report
        out.append(d(doc.cause, doc.message, line=doc.line))
        return report
    facts.parsed = True
    for key, line in doc.duplicates:
        out.append(d("duplicate_key", f"key {untrusted(key)!s} appears more than once",
                      line=line, field=untrusted(key)))
    if fname.kind in (Kind.FINDING, Kind.VF_BYPASS):
        _judge_finding(doc, fname, place, facts, d, out)
    elif fname.kind is Kind.VF_SKIP:
        _judge_vf_skip(doc, fname, facts, d, out)
    else:
        _judge_clean(doc, fname, place, d, out)
    return report


FAN_IN_SUFFIX = FAN_IN.sidecar.suffix


def fanin_score_of(data: bytes) -> int | None:
    """A `.score.md` file's score as verifier-fan-in.sh reads it: from the raw lines (a BOM,
    CR or bytes that are not UTF-8 included), whatever the per-file rules say of it."""
    return fanin_score(data.decode("utf-8", "replace"))


def fanin_change_type(data: bytes) -> str:
    """A finding's `change_type:` as verifier-fan-in.sh reads it: its awk sees the raw
    lines (a BOM or CR included), the first `---` line opens the frontmatter."""
    lines = frontmatter_lines(data.decode("utf-8", "replace"))
    got = fanin_field(lines, "change_type") if lines is not None else None
    return got[0] if got is not None else ""


# -- findings -----------------------------------------------------------------------


def _field_reporters(doc: fm.Document, d: Any, out: list[Diagnostic],
                     noun: str) -> tuple[Any, Any]:
    """`missing(cause, key)` (pointing at the closing fence) and `wrong(cause, key, msg)`
    (pointing at the key's line, carrying its value)."""

    def missing(cause: str, key: str, extra: str = "") -> None:
        out.append(d(cause, f"{noun} {key} is missing{extra}", field=key,
                     line=doc.body_line - 1))

    def wrong(cause: str, key: str, message: str) -> None:
        out.append(d(cause, message, field=key, line=doc.key_lines.get(key),
                     value=doc.data.get(key)))

    return missing, wrong


def _judge_finding(doc: fm.Document, fname: FileName, place: Place, facts: FileFacts,
                   d: Any, out: list[Diagnostic]) -> None:
    data, lines = doc.data, doc.key_lines
    contract = place.gen.contract
    missing, wrong = _field_reporters(doc, d, out, "required field")
    bypass = fname.kind is Kind.VF_BYPASS

    # finding_id
    id_round = id_fnum = None
    if "finding_id" not in data:
        missing("missing_finding_id", "finding_id")
    else:
        fid = data["finding_id"]
        id_re = contract.bypass_id_re if bypass else contract.finding_id_re
        m = id_re.fullmatch(fid) if isinstance(fid, str) else None
        numbers = (bounded_number(m.group(1)), bounded_number(m.group(2))) if m else None
        if numbers is None or None in numbers:
            shape = "R<round>-bypass-<NN>" if bypass else "R<round>-F<NN> (e.g. R3-F02)"
            too_big = " (a number of over a thousand digits)" if m else ""
            wrong("finding_id_malformed", "finding_id",
                  f"finding_id {_shown(fid)} does not match {shape}{too_big}")
        else:
            facts.finding_id = fid
            id_round, id_fnum = numbers
    # severity, change_type
    _enum(data, lines, "severity", contract.severities, "missing_severity",
          "severity_out_of_enum", missing, wrong)
    if "change_type" not in data and "category" in data:
        missing("missing_change_type", "change_type",
                f"; found category: {_shown(data['category'])}, which is not accepted "
                "(rename it to change_type:)")
    elif _enum(data, lines, "change_type", contract.change_types, "missing_change_type",
               "change_type_out_of_enum", missing, wrong):
        facts.change_type = data["change_type"]
    # referenced_files
    refs: list[str] = []
    if "referenced_files" not in data:
        missing("missing_referenced_files", "referenced_files")
    else:
        value = data["referenced_files"]
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            wrong("referenced_files_not_list", "referenced_files",
                  f"referenced_files must be a list of strings, found {_describe_list(value)}")
        else:
            refs = value
            for entry in refs:
                problem = reference_problem(entry, contract)
                if problem:
                    out.append(d("referenced_files_malformed",
                                 f"referenced_files entry {_shown(entry)} {problem}",
                                 field="referenced_files", line=lines.get("referenced_files"),
                                 value=entry))
    # artifact, reviewer
    # (a bypass record carries the five schema fields; its audit fields, when the
    # orchestrator writes them, are checked like a finding's)
    for key, cause in (("artifact", "missing_artifact"), ("reviewer", "missing_reviewer")):
        value = data.get(key)
        if key not in data:
            if not bypass:
                missing(cause, key)
        elif not isinstance(value, str) or not value.strip():
            wrong(cause, key, f"{key} must be a non-empty string, found {_shown(value)}")
    # round
    field_round = (None if bypass and "round" not in data
                   else _round_field(doc, "round", missing, wrong))
    # body
    if not doc.body.strip():
        out.append(d("missing_message", "the finding has no message: the body after the "
                     "frontmatter is blank", line=doc.body_line))
    else:
        _combined(doc, contract.boundary, d, out)
    # cross-field pins
    reviewer = data.get("reviewer")
    if isinstance(reviewer, str) and reviewer.strip() and reviewer != fname.tag:
        wrong("reviewer_tag_mismatch", "reviewer",
              f"reviewer {_shown(reviewer)} differs from the file's tag {fname.tag}")
    _round_pins(place.round, field_round, id_round, doc, d, out)
    if id_fnum is not None and fname.fnum is not None and id_fnum != fname.fnum:
        out.append(d("fnum_mismatch", f"file name says F{fname.fnum:02d} but finding_id says "
                     f"{_shown(data['finding_id'])}", field="finding_id",
                     line=lines.get("finding_id")))
    artifact = data.get("artifact")
    if isinstance(artifact, str) and artifact.strip() and place.step:
        allowed = artifact_names(place)
        if normalise_step(artifact) not in allowed:
            wrong("artifact_step_mismatch", "artifact",
                  f"artifact {_shown(artifact)} differs from the step "
                  f"({' or '.join(sorted(allowed))})")
    said_category = ("category",) if "change_type" not in data else ()
    _unknown_keys(data, lines, contract.allowed_finding_keys() + said_category,
                  "the finding contract", d, out)
    # escalation (§6): only what the reviewer wrote, never the cited file's text
    cites = any(_FEEDBACK_REF_RE.fullmatch(_strip_ref(r)) for r in refs)
    if cites or _FEEDBACK_MENTION_RE.search(doc.body):
        facts.escalated = True
        if facts.change_type is not None and facts.change_type != "intent":
            out.append(d("escalation_required",
                         f"finding cites feedback/*.md, so its effective change_type is intent, "
                         f"but it is tagged {facts.change_type}", field="change_type",
                         line=lines.get("change_type")))


def _unknown_keys(data: dict[Any, Any], lines: dict[str, int], allowed: tuple[str, ...],
                  what: str, d: Any, out: list[Diagnostic]) -> None:
    for key in data:
        if key not in allowed:
            line = lines.get(key) if isinstance(key, str) else None
            out.append(d("unknown_frontmatter_key", f"key {_shown(key)} is not part of {what}",
                         field=untrusted(key), line=line))


def _enum(data: dict[Any, Any], lines: dict[str, int], key: str, allowed: tuple[str, ...],
          missing_cause: str, wrong_cause: str, missing: Any, wrong: Any) -> bool:
    if key not in data:
        missing(missing_cause, key)
        return False
    value = data[key]
    if isinstance(value, str) and value in allowed:
        return True
    wrong(wrong_cause, key, f"{key} {_shown(value)} is not one of {', '.join(allowed)}")
    return False


def _round_field(doc: fm.Document, key: str, missing: Any, wrong: Any) -> int | None:
    """`round` read as a base-10 integer from the raw scalar text (08 is 8, 010 is 10)."""
    if key not in doc.data:
        missing("missing_round", key)
        return None
    raw = doc.raw.get(key)
    number = bounded_number(raw) if raw is not None else None
    if number is not None and number >= 1:
        return number
    wrong("round_not_integer", key,
          f"{key} {_shown(raw if raw is not None else doc.data[key])} is not an integer >= 1")
    return None


def _round_pins(dir_round: int | None, field_round: int | None, id_round: int | None,
                doc: fm.Document, d: Any, out: list[Diagnostic]) -> None:
    known = {name: n for name, n in (("directory", dir_round), ("round field", field_round),
                                     ("finding_id", id_round)) if n is not None}
    if len(set(known.values())) > 1:
        said = ", ".join(f"{k} says {v}" for k, v in known.items())
        line_key = "round" if field_round is not None and field_round != dir_round else "finding_id"
        out.append(d("round_mismatch", f"round numbers disagree: {said}", field=line_key,
                     line=doc.key_lines.get(line_key)))


def _combined(doc: fm.Document, boundary: str, d: Any, out: list[Diagnostic]) -> None:
    for offset, line in enumerate(doc.body.split("\n")):
        if line.startswith("finding_id:") or line == boundary:
            out.append(d("combined_findings", "more than one finding in this file: "
                         f"body line {_shown(line)} starts another; write one finding per file",
                         line=doc.body_line + offset))
            return


def artifact_names(place: Place) -> set[str]:
    step = place.step or ""
    if place.is_task:
        m = re.fullmatch(r"task-0*([0-9]+)", step)
        return {step, f"task-{int(m.group(1))}"} if m else {step}
    return {normalise_step(step)}


def _strip_ref(entry: str) -> str:
    entry = _RANGE_SUFFIX_RE.sub("", entry)
    return entry[2:] if entry.startswith("./") else entry


def reference_problem(entry: str, contract: FindingContract) -> str | None:
    if not entry or any(ch.isspace() for ch in entry):
        return "is empty or contains whitespace"
    path, sep, suffix = entry.rpartition(":")
    if sep:
        if not contract.reference_range_re.fullmatch(suffix):
            return "has a range suffix other than :N, :N-M, :LN, :LN-LM"
        if not path:
            return "has no path"
    else:
        path = entry
    if ".." in path.replace("\\", "/").split("/"):
        return "has a `..` segment"
    return None


def _shown(value: Any) -> str:
    """A finding's value, quoted for a message: escaped and cut."""
    return f"'{untrusted(value)}'" if isinstance(value, str) else untrusted(describe(value))


def _describe_list(value: Any) -> str:
    if isinstance(value, list):
        bad = next(x for x in value if not isinstance(x, str))
        return f"a list with a non-string item ({untrusted(describe(bad))})"
    return _shown(value)


# -- clean sentinels ----------------------------------------------------------------


def _judge_clean(doc: fm.Document, fname: FileName, place: Place, d: Any,
                 out: list[Diagnostic]) -> None:
    data, lines = doc.data, doc.key_lines
    missing, wrong = _field_reporters(doc, d, out, "clean sentinel field")

    reviewer = data.get("reviewer")
    if "reviewer" not in data:
        missing("missing_reviewer", "reviewer")
    elif not isinstance(reviewer, str) or not reviewer.strip():
        wrong("missing_reviewer", "reviewer", f"reviewer must be a non-empty string, found "
              f"{_shown(reviewer)}")
    elif reviewer != fname.tag:
        wrong("reviewer_tag_mismatch", "reviewer",
              f"reviewer {_shown(reviewer)} differs from the file's tag {fname.tag}")
    if "round" in data or not place.gen.clean_round_optional:
        field_round = _round_field(doc, "round", missing, wrong)
        _round_pins(place.round, field_round, None, doc, d, out)
    if "findings" in data:
        if doc.raw.get("findings") != "0":
            wrong("clean_nonzero_findings", "findings",
                  f"a clean sentinel must say findings: 0, found {_shown(data['findings'])}")
    else:
        out.append(d("clean_noncanonical", "clean sentinel has no findings: 0 (the fixture "
                     "variant shape); write reviewer, round, findings: 0", line=1))
    _unknown_keys(data, lines, place.gen.contract.allowed_clean_keys(), "a clean sentinel",
                  d, out)
    if doc.body.strip():
        out.append(d("clean_has_body", "a clean sentinel has frontmatter only; text follows it",
                     line=doc.body_line))


# -- visual-fidelity skip sentinel (tasks) ---------------------------------------------


def _judge_vf_skip(doc: fm.Document, fname: FileName, facts: FileFacts, d: Any,
                   out: list[Diagnostic]) -> None:
    """It stands for the visual-fidelity reviewer's output when it gives a known
    `skip_reason` and a boolean (or absent) `path_filtered` (generations.md §5)."""
    data, lines = doc.data, doc.key_lines
    reason = data.get("skip_reason")
    problem = None
    if "skip_reason" not in data:
        problem = ("has no skip_reason", "skip_reason")
    elif not isinstance(reason, str) or reason not in VF_SKIP_REASONS:
        problem = (f"skip_reason {_shown(reason)} is not one of {', '.join(VF_SKIP_REASONS)}",
                   "skip_reason")
    elif "path_filtered" in data and not isinstance(data["path_filtered"], bool):
        problem = (f"path_filtered {_shown(data['path_filtered'])} is neither true nor false",
                   "path_filtered")
    if problem is None:
        facts.stands_for_output = True
        return
    message, key = problem
    out.append(d("vf_sentinel_invalid", f"the skip sentinel {message}, so it does not stand "
                 f"for {fname.tag}'s output", field=key,
                 line=lines.get(key, doc.body_line - 1), value=data.get(key)))


# -- names --------------------------------------------------------------------------


def name_rule(fname: FileName, place: Place) -> Diagnostic | None:
    """What a round-directory entry's name alone says (§2), or None when it is fine.

    Sidecars named for the other generation are a round-level matter
    (:mod:`qrspi_guard.rules.rounds`): which suffix is right depends on the round.
    """
    d = partial(diag, file=fname.name, path=place.path, step=place.step, round=place.round)
    kind = fname.kind
    if kind is Kind.BAD_TAG:
        return d("bad_tag_name", f"tag {_shown(fname.tag)} does not match the tag grammar "
                 f"of lower-case letters, digits and hyphens ({place.gen.contract.tag_schema})")
    if kind is Kind.BAD_FINDING_NAME:
        return d("bad_finding_filename", f"{_shown(fname.name)} is not <tag>.finding-F<NN>.md "
                 "(nor a sidecar name <tag>.finding-F<NN>.score.md / .score.yml)")
    unknown = (kind is Kind.UNKNOWN
               or (kind in TASK_ONLY_KINDS and not place.is_task)
               or (kind is Kind.ROUND_FILE and fname.fnum != place.round)
               or (kind in (Kind.KEPT_LIST, Kind.FANIN_AUDIT)
                   and fname.name not in place.gen.outputs_inside))
    if unknown:
        why = ""
        if kind in (Kind.KEPT_LIST, Kind.FANIN_AUDIT):
            why = f" (a fan-in output, in a round judged as {place.gen.name})"
        elif kind in TASK_ONLY_KINDS:
            why = " (a visual-fidelity file, which only task rounds hold)"
        elif kind is Kind.ROUND_FILE:
            why = " (it names another round)"
        return d("unknown_file_in_round_dir", f"{_shown(fname.name)} is not a finding, clean "
                 f"sentinel or verifier sidecar{why}; a round holds reviewer output only")
    return None
