"""The sentinels' rules: a clean sentinel (round-contract §6) and a visual-fidelity skip
sentinel (generations.md §5), which stand for a reviewer's output."""

from __future__ import annotations

from typing import Any

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.layout import FileName
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.rules.facts import FileFacts, Place
from qrspi_guard.rules.fields import field_reporters, round_field, round_pins, shown, unknown_keys

#: visual-fidelity skip sentinel (generations.md §5)
VF_SKIP_REASONS: tuple[str, ...] = (
    "visual_fidelity_required_false", "missing_visual_fidelity_check",
    "empty_wireframe_paths", "empty_screenshot_paths",
)


def judge_clean(doc: fm.Document, fname: FileName, place: Place, d: Any,
                 out: list[Diagnostic]) -> None:
    data, lines = doc.data, doc.key_lines
    missing, wrong = field_reporters(doc, d, out, "clean sentinel field")

    reviewer = data.get("reviewer")
    if "reviewer" not in data:
        missing("missing_reviewer", "reviewer")
    elif not isinstance(reviewer, str) or not reviewer.strip():
        wrong("missing_reviewer", "reviewer", f"reviewer must be a non-empty string, found "
              f"{shown(reviewer)}")
    elif reviewer != fname.tag:
        wrong("reviewer_tag_mismatch", "reviewer",
              f"reviewer {shown(reviewer)} differs from the file's tag {fname.tag}")
    if "round" in data or not place.gen.clean_round_optional:
        field_round = round_field(doc, "round", missing, wrong)
        round_pins(place.round, field_round, None, doc, d, out)
    if "findings" in data:
        if doc.raw.get("findings") != "0":
            wrong("clean_nonzero_findings", "findings",
                  f"a clean sentinel must say findings: 0, found {shown(data['findings'])}")
    else:
        out.append(d("clean_noncanonical", "clean sentinel has no findings: 0 (the fixture "
                     "variant shape); write reviewer, round, findings: 0", line=1))
    unknown_keys(data, lines, place.gen.contract.allowed_clean_keys(), "a clean sentinel",
                  d, out)
    if doc.body.strip():
        out.append(d("clean_has_body", "a clean sentinel has frontmatter only; text follows it",
                     line=doc.body_line))


def judge_vf_skip(doc: fm.Document, fname: FileName, facts: FileFacts, d: Any,
                   out: list[Diagnostic]) -> None:
    """It stands for the visual-fidelity reviewer's output when it gives a known
    `skip_reason` and a boolean (or absent) `path_filtered` (generations.md §5)."""
    data, lines = doc.data, doc.key_lines
    reason = data.get("skip_reason")
    problem = None
    if "skip_reason" not in data:
        problem = ("has no skip_reason", "skip_reason")
    elif not isinstance(reason, str) or reason not in VF_SKIP_REASONS:
        problem = (f"skip_reason {shown(reason)} is not one of {', '.join(VF_SKIP_REASONS)}",
                   "skip_reason")
    elif "path_filtered" in data and not isinstance(data["path_filtered"], bool):
        problem = (f"path_filtered {shown(data['path_filtered'])} is neither true nor false",
                   "path_filtered")
    if problem is None:
        facts.stands_for_output = True
        return
    message, key = problem
    out.append(d("vf_sentinel_invalid", f"the skip sentinel {message}, so it does not stand "
                 f"for {fname.tag}'s output", field=key,
                 line=lines.get(key, doc.body_line - 1), value=data.get(key)))
