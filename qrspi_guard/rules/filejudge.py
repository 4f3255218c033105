"""Per-file rules: one file's bytes, name and place -> facts and diagnostics.

These apply as soon as a file settles; nothing here looks at other files. The contract
(enums, keys, patterns) comes from the place's generation (:attr:`Place.gen`), never
from a copy of it.
"""

from __future__ import annotations

from functools import partial

from qrspi_guard.contract.diagnostics import Diagnostic, diag, untrusted
from qrspi_guard.contract.generations.fan_in import (
    FAN_IN,
    fanin_field,
    fanin_score,
    frontmatter_lines,
)
from qrspi_guard.contract.layout import (
    TASK_ONLY_KINDS,
    FileName,
    Kind,
)
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.rules.facts import FileFacts, FileReport, Place
from qrspi_guard.rules.fields import shown
from qrspi_guard.rules.finding import judge_finding, line_reading
from qrspi_guard.rules.sentinels import judge_clean, judge_vf_skip
from qrspi_guard.rules.sidecars import judge_sidecar


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
        judge_finding(doc, fname, place, facts, d, out)
        if fname.kind is Kind.FINDING:
            line_reading(text, doc, d, out)
    elif fname.kind is Kind.VF_SKIP:
        judge_vf_skip(doc, fname, facts, d, out)
    else:
        judge_clean(doc, fname, place, d, out)
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


# -- clean sentinels ----------------------------------------------------------------


# -- visual-fidelity skip sentinel (tasks) ---------------------------------------------


# -- names --------------------------------------------------------------------------


def name_rule(fname: FileName, place: Place) -> Diagnostic | None:
    """What a round-directory entry's name alone says (§2), or None when it is fine.

    Sidecars named for the other generation are a round-level matter
    (:mod:`qrspi_guard.rules.rounds`): which suffix is right depends on the round.
    """
    d = partial(diag, file=fname.name, path=place.path, step=place.step, round=place.round)
    kind = fname.kind
    if kind is Kind.BAD_TAG:
        return d("bad_tag_name", f"tag {shown(fname.tag)} does not match the tag grammar "
                 f"of lower-case letters, digits and hyphens ({place.gen.contract.tag_schema})")
    if kind is Kind.BAD_FINDING_NAME:
        return d("bad_finding_filename", f"{shown(fname.name)} is not <tag>.finding-F<NN>.md "
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
        return d("unknown_file_in_round_dir", f"{shown(fname.name)} is not a finding, clean "
                 f"sentinel or verifier sidecar{why}; a round holds reviewer output only")
    return None
