"""The finding schema's rules (round-contract §3-§5): one parsed finding -> diagnostics
and the facts the round rules need (tag, change_type, escalation)."""

from __future__ import annotations

import re
from typing import Any

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.digits import bounded_number
from qrspi_guard.contract.generations import FindingContract
from qrspi_guard.contract.generations.fan_in import fanin_field, frontmatter_lines
from qrspi_guard.contract.layout import (
    FileName,
    Kind,
    normalise_step,
)
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.rules.facts import FileFacts, Place
from qrspi_guard.rules.fields import (
    describe_list,
    enum_field,
    field_reporters,
    round_field,
    round_pins,
    shown,
    unknown_keys,
)

_FEEDBACK_REF_RE = re.compile(r"(?:\./)?feedback/[^/\s]+\.md")


_FEEDBACK_MENTION_RE = re.compile(r"(?<![\w./-])(?:\./)?feedback/[\w.-]+\.md")


_RANGE_SUFFIX_RE = re.compile(r":L?[0-9]+(?:-L?[0-9]+)?$")

#: The fields upstream's line-based readers take from a finding's lines (the fan-in's
#: awk reads finding_id and routes by change_type), with the causes their own rules
#: report: (absent, wrong).
LINE_READ_FIELDS = {"change_type": ("missing_change_type", "change_type_out_of_enum"),
                    "finding_id": ("missing_finding_id", "finding_id_malformed")}


def line_mismatches(text: str, data: dict[Any, Any]) -> list[tuple[str, tuple[str, int] | None]]:
    """(field, what a line reader reads: (value, line) or None for no line) for each of
    :data:`LINE_READ_FIELDS` whose YAML string value a line reader would read otherwise
    (a trailing comment, a tag, escapes, a `? key` entry, a quoted key)."""
    lines = frontmatter_lines(text)
    out: list[tuple[str, tuple[str, int] | None]] = []
    for key in LINE_READ_FIELDS:
        value = data.get(key)
        if not isinstance(value, str):
            continue
        got = fanin_field(lines, key) if lines is not None else None
        if got is None or got[0] != value:
            out.append((key, got))
    return out


def line_reading(text: str, doc: fm.Document, d: Any, out: list[Diagnostic]) -> None:
    """Report each routing field that YAML and the line readers read differently, under
    the field's own cause (unless its rule already reported it)."""
    reported = {x.cause for x in out}
    twice = {key for key, _ in doc.duplicates}  # already a halt: `duplicate_key`
    for key, got in line_mismatches(text, doc.data):
        absent, wrong = LINE_READ_FIELDS[key]
        if absent in reported or wrong in reported or key in twice:
            continue
        shown_value = shown(doc.data[key])
        if got is None:
            out.append(d(absent, f"{key} is {shown_value} to YAML, but no line starts with "
                         f"`{key}:`, so the protocol's line-based readers (upstream's fan-in "
                         f"reads it with awk) find none; write it as a plain `{key}: value` "
                         "line", line=doc.key_lines.get(key), field=key))
        else:
            out.append(d(wrong, f"{key} is {shown_value} to YAML but {shown(got[0])} to "
                         "the protocol's line-based readers (upstream's fan-in reads it with "
                         "awk); write the bare value, with no comment, tag or escape",
                         line=got[1], field=key))


#: a visible ASCII character: the common case of a message, found without unicodedata
_VISIBLE_ASCII = re.compile(r"[!-~]")


def has_message(body: str) -> bool:
    """The body holds prose: at least one visible character (a letter, digit,
    punctuation or symbol). Whitespace, control and format characters (zero-width
    spaces and joiners, word joiners, a BOM, soft hyphens) and lone combining marks do
    not make a message. Cost: one pass over the body."""
    rest = body.lstrip()
    if rest and "!" <= rest[0] <= "~":  # prose: its first character is visible
        return True
    if _VISIBLE_ASCII.search(rest) is not None:
        return True
    if rest.isascii():
        return False
    import unicodedata

    return any(unicodedata.category(ch)[0] in "LNPS" for ch in rest if ord(ch) > 0x7F)

def judge_finding(doc: fm.Document, fname: FileName, place: Place, facts: FileFacts,
                   d: Any, out: list[Diagnostic]) -> None:
    data, lines = doc.data, doc.key_lines
    contract = place.gen.contract
    missing, wrong = field_reporters(doc, d, out, "required field")
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
                  f"finding_id {shown(fid)} does not match {shape}{too_big}")
        else:
            facts.finding_id = fid
            id_round, id_fnum = numbers
    # severity, change_type
    if enum_field(data, lines, "severity", contract.severities, "missing_severity",
                  "severity_out_of_enum", missing, wrong):
        facts.severity = data["severity"]
    if "change_type" not in data and "category" in data:
        missing("missing_change_type", "change_type",
                f"; found category: {shown(data['category'])}, which is not accepted "
                "(rename it to change_type:)")
    elif enum_field(data, lines, "change_type", contract.change_types, "missing_change_type",
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
                  f"referenced_files must be a list of strings, found {describe_list(value)}")
        else:
            refs = value
            for entry in refs:
                problem = reference_problem(entry, contract)
                if problem:
                    out.append(d("referenced_files_malformed",
                                 f"referenced_files entry {shown(entry)} {problem}",
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
            wrong(cause, key, f"{key} must be a non-empty string, found {shown(value)}")
    # round
    field_round = (None if bypass and "round" not in data
                   else round_field(doc, "round", missing, wrong))
    # body
    if not has_message(doc.body):
        out.append(d("missing_message", "the finding has no message: the body after the "
                     "frontmatter is blank (no visible character)", line=doc.body_line))
    else:
        _combined(doc, contract.boundary, d, out)
    # cross-field pins
    reviewer = data.get("reviewer")
    if isinstance(reviewer, str) and reviewer.strip() and reviewer != fname.tag:
        wrong("reviewer_tag_mismatch", "reviewer",
              f"reviewer {shown(reviewer)} differs from the file's tag {fname.tag}")
    round_pins(place.round, field_round, id_round, doc, d, out)
    if id_fnum is not None and fname.fnum is not None and id_fnum != fname.fnum:
        out.append(d("fnum_mismatch", f"file name says F{fname.fnum:02d} but finding_id says "
                     f"{shown(data['finding_id'])}", field="finding_id",
                     line=lines.get("finding_id")))
    artifact = data.get("artifact")
    if isinstance(artifact, str) and artifact.strip() and place.step:
        allowed = artifact_names(place)
        if normalise_step(artifact) not in allowed:
            wrong("artifact_step_mismatch", "artifact",
                  f"artifact {shown(artifact)} differs from the step "
                  f"({' or '.join(sorted(allowed))})")
    said_category = ("category",) if "change_type" not in data else ()
    unknown_keys(data, lines, contract.allowed_finding_keys() + said_category,
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


def _combined(doc: fm.Document, boundary: str, d: Any, out: list[Diagnostic]) -> None:
    for offset, line in enumerate(doc.body.split("\n")):
        if line.startswith("finding_id:") or line == boundary:
            out.append(d("combined_findings", "more than one finding in this file: "
                         f"body line {shown(line)} starts another; write one finding per file",
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
