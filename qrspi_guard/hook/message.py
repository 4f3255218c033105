"""The message the agent is shown when the hook blocks: words it can act on.

Every error with its cause, line and field, what was found, what is allowed, the
catalogue's fix and a corrected example line filled in from the file's path. Every
string taken from the payload or the file is passed through
:func:`qrspi_guard.textsafe.one_line`, so it can neither add a line nor send an escape.
The allowed enum values come from :mod:`qrspi_guard.contract.schema`, so they follow the contract.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from qrspi_guard.contract.schema import CHANGE_TYPES, SEVERITIES
from qrspi_guard.hook.where import Target
from qrspi_guard.textsafe import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic

EXPLAIN = "Explain a cause with: qrspi-guard explain <cause>"


class _Context:
    """What the example lines are filled in from."""

    __slots__ = ("step", "round", "tag", "fnum", "clean")

    def __init__(self, step: str, round: int | None, name: str) -> None:
        from qrspi_guard.contract.layout import classify

        fname = classify(name)
        self.step = step
        self.round = round
        self.tag = fname.tag
        self.fnum = fname.fnum
        self.clean = name.endswith(".clean.md")  #: the target is a clean sentinel


def render(target: Target, diags: list[Diagnostic] | tuple[Diagnostic, ...], event: str,
           edit: bool = False) -> str:
    """The text the agent is shown for one file: *edit* for an edit judged before it
    lands, else a whole-file write (pre) or a change already made (post)."""
    ctx = _Context(target.step, target.round, target.name)
    errors = [d for d in diags if d.level == "error"]
    shown = one_line(target.shown, 300)
    where = f"review round {one_line(target.step)}/{os.path.basename(target.round_dir)}"
    if event == "pre":
        what = "edit" if edit else "write"
        head = (f"qrspi-guard refused this {what}: {shown} would halt {where} with "
                f"{len(errors)} error(s).")
        tail = ("Fix every error above, then make the edit again (or write the whole file)."
                if edit else "Fix every error above, then write the whole file again.")
    else:
        head = (f"qrspi-guard: your edit was applied, but {shown} now halts {where} with "
                f"{len(errors)} error(s).")
        tail = "Fix every error above in the file now (edit it again or rewrite it)."
    lines = [head, ""]
    lines.extend(_errors_and_warnings(diags, ctx))
    lines.extend((tail, EXPLAIN))
    return "\n".join(one_line(line) for line in lines) + "\n"


def render_rounds(groups: list[tuple[str, str, list[Diagnostic]]]) -> str:
    """The text for a shell command that left rounds halting: each round's errors,
    grouped by file. *groups*: (round directory, step, diagnostics)."""
    halting = [(r, s, ds) for r, s, ds in groups if any(d.level == "error" for d in ds)]
    total = sum(1 for _, _, ds in halting for d in ds if d.level == "error")
    names = ", ".join(f"{one_line(s)}/{one_line(os.path.basename(r), 60)}"
                      for r, s, _ in halting)
    lines = [f"qrspi-guard: after your command, review round(s) {names} halt with "
             f"{total} error(s).", ""]
    for round_dir, step, diags in halting:
        number = _number(round_dir)
        files = sorted({d.file for d in diags if d.file}, key=str)
        for name in [*files, None]:
            mine = [d for d in diags if d.file == name]
            if not any(d.level == "error" for d in mine):
                continue
            place = f"{one_line(step)}/{one_line(os.path.basename(round_dir), 60)}"
            lines.append(f"In {place}/{one_line(name, 200)}:" if name else f"In {place}:")
            lines.extend(_errors_and_warnings(mine, _Context(step, number, name or "")))
    lines.extend(("Fix every error above in the files now (edit them or rewrite them).",
                  EXPLAIN))
    return "\n".join(one_line(line) for line in lines) + "\n"


def _number(round_dir: str) -> int | None:
    from qrspi_guard.contract.layout import round_number

    return round_number(os.path.basename(round_dir))


def _errors_and_warnings(diags: list[Diagnostic] | tuple[Diagnostic, ...],
                         ctx: _Context) -> list[str]:
    from qrspi_guard.contract.causes import cause as catalogue

    lines: list[str] = []
    for d in diags:
        if d.level == "error":
            lines.extend(_render_one(d, ctx, catalogue(d.cause).fix))
            lines.append("")
    warnings = [d for d in diags if d.level == "warning"]
    if warnings:
        lines.append("Also worth fixing (warnings, not blocking): " + "; ".join(
            f"{d.cause}: {one_line(d.message, 200)}" for d in warnings))
        lines.append("")
    return lines


def _render_one(d: Diagnostic, ctx: _Context, fix: str) -> list[str]:
    at = []
    if d.line is not None:
        at.append(f"line {d.line}")
    if d.field:
        at.append(f"field {one_line(d.field, 60)}")
    out = [f"- {d.cause}" + (f" ({', '.join(at)})" if at else "") + f": "
           f"{one_line(d.message, 300)}"]
    guide = _GUIDE.get(d.cause)
    found = d.value if d.value is not None else (
        "nothing: the field is absent" if d.cause.startswith("missing_") and d.field else None)
    if found is not None:
        out.append(f"    found:   {one_line(found, 200)}")
    if guide is not None and guide[0]:
        out.append(f"    allowed: {guide[0]}")
    out.append(f"    fix:     {fix}")
    example = guide[1](ctx, d) if guide is not None and guide[1] is not None else None
    if example:
        out.append(f"    example: {one_line(example, 200)}")
    return out


def _closest(value: str | None, allowed: tuple[str, ...], default: str) -> str:
    if value:
        import difflib

        match = difflib.get_close_matches(value.strip().lower(), allowed, n=1, cutoff=0.6)
        if match:
            return match[0]
    return default


def _fid(ctx: _Context) -> str:
    return f"R{ctx.round or 1}-F{ctx.fnum or 1:02d}"


def _tag(ctx: _Context) -> str:
    return ctx.tag or "quality-claude"


def _artifact(ctx: _Context) -> str:
    return "integration" if ctx.step in ("integrate", "implement-gate") else ctx.step


def _coexist_example(ctx: _Context) -> str:
    tag = _tag(ctx)
    if ctx.clean:
        return (f"no {tag}.clean.md while {tag} has finding files; delete the finding files "
                "first only if they are stale output of an earlier attempt")
    return f"delete the stale {tag}.clean.md first, then write this finding"


_ROUND = "the round directory's number, e.g. round: 3 for round-03"
_NAMES = "<tag>.finding-F<NN>.md, <tag>.clean.md, <tag>.finding-F<NN>.score.yml"
_SEVERITY = "medium" if "medium" in SEVERITIES else SEVERITIES[0]
_CHANGE = "correctness" if "correctness" in CHANGE_TYPES else CHANGE_TYPES[0]
_Example = Callable[[_Context, Any], str] | None

#: cause -> (what is allowed, a corrected example line)
_GUIDE: dict[str, tuple[str, _Example]] = {
    "missing_finding_id": ("R<round>-F<NN>", lambda c, d: f"finding_id: {_fid(c)}"),
    "finding_id_malformed": ("R<round>-F<NN>", lambda c, d: f"finding_id: {_fid(c)}"),
    "fnum_mismatch": ("the F number of the file name", lambda c, d: f"finding_id: {_fid(c)}"),
    "duplicate_finding_id": ("one finding_id per finding of a tag in a round",
                             lambda c, d: f"finding_id: {_fid(c)}"),
    "missing_severity": (", ".join(SEVERITIES), lambda c, d: f"severity: {_SEVERITY}"),
    "severity_out_of_enum": (", ".join(SEVERITIES), lambda c, d:
                             f"severity: {_closest(d.value, SEVERITIES, _SEVERITY)}"),
    "missing_change_type": (", ".join(CHANGE_TYPES), lambda c, d: f"change_type: {_CHANGE}"),
    "change_type_out_of_enum": (", ".join(CHANGE_TYPES), lambda c, d:
                                f"change_type: {_closest(d.value, CHANGE_TYPES, _CHANGE)}"),
    "escalation_required": ("intent, for a finding citing feedback/*.md",
                            lambda c, d: "change_type: intent"),
    "missing_referenced_files": ("a list of strings, possibly empty",
                                 lambda c, d: "referenced_files: [design.md:L40-L52]"),
    "referenced_files_not_list": ("a list of strings, possibly empty",
                                  lambda c, d: "referenced_files: [design.md:L40-L52]"),
    "missing_artifact": ("the step name", lambda c, d: f"artifact: {_artifact(c)}"),
    "artifact_step_mismatch": ("the step name", lambda c, d: f"artifact: {_artifact(c)}"),
    "missing_round": (_ROUND, lambda c, d: f"round: {c.round or 1}"),
    "round_not_integer": (_ROUND, lambda c, d: f"round: {c.round or 1}"),
    "round_mismatch": ("the same number in the directory, round: and finding_id",
                       lambda c, d: f"round: {c.round or 1}  and  finding_id: {_fid(c)}"),
    "missing_reviewer": ("the tag in the file name",
                         lambda c, d: f"reviewer: {_tag(c)}"),
    "reviewer_tag_mismatch": ("the tag in the file name (you may write only under your own "
                              "tag)", lambda c, d: f"reviewer: {_tag(c)}"),
    "missing_message": ("non-blank prose after the closing ---",
                        lambda c, d: "(after the closing --- and a blank line) What is wrong, "
                        "why it matters, what would fix it."),
    "combined_findings": ("one finding per file", lambda c, d:
                          f"the next finding goes in {_tag(c)}.finding-F"
                          f"{(c.fnum or 1) + 1:02d}.md"),
    "no_frontmatter": ("a first line ---, the fields, a line ---, then the prose",
                       lambda c, d: "---"),
    "malformed_yaml": ("plain `key: value` lines", lambda c, d: f"severity: {_SEVERITY}"),
    "duplicate_key": ("each key once", None),
    "clean_nonzero_findings": ("findings: 0", lambda c, d: "findings: 0"),
    "clean_and_findings_coexist": ("either finding files or one clean sentinel per tag",
                                   lambda c, d: _coexist_example(c)),
    "crlf_line_endings": ("LF line endings only", None),
    "not_utf8": ("UTF-8 text", None),
    "file_too_large": ("at most 1 MiB", None),
    "bad_tag_name": ("lower-case letters, digits and hyphens, e.g. quality-claude",
                     lambda c, d: "quality-claude.finding-F01.md"),
    "bad_finding_filename": ("<tag>.finding-F<NN>.md, two or more digits",
                             lambda c, d: f"{_tag(c)}.finding-F01.md"),
    "unknown_file_in_round_dir": (_NAMES, lambda c, d: f"{_tag(c)}.finding-F01.md"),
    "symlink_in_round_dir": ("regular files only", None),
    "bad_round_dir_name": ("round-NN, two or more digits, >= 01",
                           lambda c, d: f"reviews/{c.step}/round-01/"),
    "sidecar_malformed": ("score: <0..100> or VERIFY_FAILED, and reason: <one sentence>",
                          lambda c, d: "score: 85"),
    "score_out_of_range": ("an integer 0..100 without leading zeros or sign",
                           lambda c, d: "score: 85"),
}
