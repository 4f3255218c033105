"""The agent hook's core: one tool-use payload in, one decision out (issue 8).

A pure function of the payload and the disk: :func:`decide` returns a
:class:`Decision` (``ignore``: not about a review round; ``allow``: a round file that
passes, warnings at most; ``block``: errors, with a message written for the agent).
The hook's own failures (a malformed payload, an unreadable file) raise
:class:`HookFailure`; the command line turns them into a non-blocking exit.

The hook runs on every write an agent makes, so this module imports only the light
layout grammar at import time. The rules (YAML, the engine) are imported only once a
path is known to be inside ``reviews/<step>/round-NN/`` or
``reviews/tasks/task-NN/round-NN/``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from qrspi_guard.layout import STEPS, TASK_DIR_RE, TASKS_DIR, round_number
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.diagnostics import Diagnostic

Action = Literal["allow", "block", "ignore"]
Event = Literal["pre", "post"]

REVIEWS = "reviews"
#: PreToolUse: tools that carry the whole new file -> (path key, content key)
WRITE_TOOLS: dict[str, tuple[str, str]] = {"Write": ("file_path", "content")}
#: PostToolUse: tools that change a file -> the path key; the file is judged on disk
EDIT_TOOLS: dict[str, str] = {
    "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
_EVENTS: dict[str, Event] = {"PreToolUse": "pre", "PostToolUse": "post"}
#: tag rules that a single write can break, judged for the written file's tag only
TAG_CAUSES = frozenset({"duplicate_finding_id", "clean_and_findings_coexist"})


class HookFailure(Exception):
    """The hook itself cannot work (bad payload, unreadable file): never the agent's fault."""


@dataclass(frozen=True)
class Target:
    """Where a tool call writes, resolved, and which round that is."""

    shown: str  #: the path as the payload gave it (escaped before printing)
    path: str  #: the resolved absolute path
    round_dir: str  #: the resolved round directory
    name: str  #: the entry's name inside the round directory
    step: str
    round: int | None  #: None for a `round*` directory that is not `round-NN`
    is_task: bool
    nested: bool = False  #: the write lands below a subdirectory `name` of the round
    symlink: bool = False  #: the entry itself is a symbolic link inside the round


@dataclass(frozen=True)
class Decision:
    """What the hook says about one tool call."""

    action: Action
    message: str = ""  #: for ``block``: what the agent is shown
    diagnostics: tuple[Diagnostic, ...] = ()  #: errors and warnings about the target
    target: Target | None = None
    event: Event | None = None

    @property
    def blocks(self) -> bool:
        return self.action == "block"


@dataclass
class _Context:
    """What the example lines are filled in from."""

    step: str
    round: int | None
    tag: str | None
    fnum: int | None
    clean: bool = False  #: the target is a clean sentinel


# -- payload ---------------------------------------------------------------------------


def load_payload(raw: bytes | str) -> dict[str, Any]:
    """The JSON object on stdin, or :class:`HookFailure`."""
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise HookFailure(f"stdin is not JSON ({one_line(str(exc), 120)})") from None
    if not isinstance(payload, dict):
        raise HookFailure("stdin is JSON but not an object")
    return payload


def event_of(payload: dict[str, Any], event: str | None = None) -> Event:
    """`pre` or `post`: the command line's ``--event`` wins over ``hook_event_name``."""
    if event in ("pre", "post"):
        return event  # type: ignore[return-value]
    named = payload.get("hook_event_name")
    if isinstance(named, str) and named in _EVENTS:
        return _EVENTS[named]
    raise HookFailure(f"cannot tell a pre-write from a post-edit call (hook_event_name "
                      f"{one_line(repr(named), 60)}); pass --event pre or --event post")


def decide(payload: dict[str, Any], event: str | None = None) -> Decision:
    """Judge one tool call. Raises :class:`HookFailure` for the hook's own failures."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        raise HookFailure("payload has no tool_name")
    ev = event_of(payload, event)
    if ev == "pre":
        if tool not in WRITE_TOOLS:
            return Decision("ignore", event=ev)
        path_key, content_key = WRITE_TOOLS[tool]
    else:
        if tool not in EDIT_TOOLS:
            return Decision("ignore", event=ev)
        path_key, content_key = EDIT_TOOLS[tool], ""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise HookFailure(f"{one_line(tool, 40)} payload has no tool_input object")
    file_path = tool_input.get(path_key)
    if not isinstance(file_path, str) or not file_path or "\x00" in file_path:
        raise HookFailure(f"{one_line(tool, 40)} tool_input has no usable {path_key}")
    cwd = payload.get("cwd")
    target = locate(file_path, cwd if isinstance(cwd, str) else None)
    if target is None:
        return Decision("ignore", target=None, event=ev)
    if target.round is None or target.nested or target.symlink:
        diags = layout_diagnostics(target)
    else:
        if ev == "pre":
            content = tool_input.get(content_key)
            if not isinstance(content, str):
                raise HookFailure(f"{one_line(tool, 40)} tool_input has no string {content_key}")
            data = content.encode("utf-8", "surrogatepass")
        else:
            data = _read_for_name(target)
        diags = judge(target, data)
    errors = [d for d in diags if d.level == "error"]
    if not errors:
        return Decision("allow", diagnostics=tuple(diags), target=target, event=ev)
    return Decision("block", render(target, diags, ev), tuple(diags), target, ev)


# -- where the write lands ----------------------------------------------------------------


def locate(file_path: str, cwd: str | None = None) -> Target | None:
    """The round a path writes into, after resolving `cwd`, symbolic links and `..`."""
    given = file_path
    if not os.path.isabs(file_path):
        file_path = os.path.join(cwd or os.getcwd(), file_path)
    head, name = os.path.split(file_path)
    if name in ("", ".", ".."):
        return _position(given, os.path.realpath(file_path))
    parent = os.path.realpath(head or os.sep)
    candidate = os.path.join(parent, name)
    if os.path.islink(candidate):
        inside = _position(given, candidate)
        if inside is not None and not inside.nested and not name.startswith("."):
            return replace(inside, symlink=True)
        candidate = os.path.realpath(candidate)
    return _position(given, candidate)


def _position(given: str, real: str) -> Target | None:
    parts = real.split(os.sep)
    for i, part in enumerate(parts):
        if part != REVIEWS:
            continue
        below = parts[i + 1:]
        if len(below) >= 3 and below[0] in STEPS and below[1].startswith("round"):
            step, is_task, depth = below[0], False, 2
        elif (len(below) >= 4 and below[0] == TASKS_DIR and TASK_DIR_RE.fullmatch(below[1])
              and below[2].startswith("round")):
            step, is_task, depth = below[1], True, 3
        else:
            continue
        rest = below[depth:]
        if not rest or not rest[0] or rest[0].startswith("."):
            return None  # the round directory itself, or a hidden name check ignores
        round_dir = os.sep.join(parts[:i + 1 + depth])
        return Target(given, real, round_dir, rest[0], step,
                      round_number(below[depth - 1]), is_task, nested=len(rest) > 1)
    return None


def _read_for_name(target: Target) -> bytes:
    """The file as it now is on disk (post-edit), read like check reads it."""
    from qrspi_guard.reader import ReadFailure, read_bytes

    data = read_bytes(target.path)
    if isinstance(data, ReadFailure):
        raise HookFailure(f"cannot read {one_line(target.shown, 200)}: "
                          f"{data.message.removeprefix('cannot be read: ')}")
    return data


# -- judging ------------------------------------------------------------------------------


def layout_diagnostics(target: Target) -> list[Diagnostic]:
    """What check says about the round's layout that this write would create."""
    from qrspi_guard.diagnostics import diag

    if target.round is None:
        dirname = os.path.basename(target.round_dir)
        return [diag("bad_round_dir_name", f"directory {one_line(dirname, 60)!r} is not "
                     "round-NN (two or more digits, >= 01)", path=target.round_dir,
                     step=target.step)]
    where = {"path": target.path, "file": target.name, "step": target.step,
             "round": target.round}
    if target.symlink:
        return [diag("symlink_in_round_dir", "symbolic link in a round directory; not "
                     "followed", **where)]
    return [diag("unknown_file_in_round_dir", f"{one_line(target.name, 60)!r} would be a "
                 "subdirectory of the round; a round holds reviewer output files only",
                 **where)]


def judge(target: Target, data: bytes) -> list[Diagnostic]:
    """Judge *data* as the round file at *target*, exactly as ``check`` would.

    Per-file rules for the file itself, plus the tag rules a single write can break
    (a duplicate ``finding_id``, a clean sentinel beside findings, either way round),
    counted only when this file's presence is what brings them.
    """
    from qrspi_guard.config import Overrides, RunConfig
    from qrspi_guard.discover import round_of_dir
    from qrspi_guard.engine import judge_round_files, round_facts, sort_diagnostics
    from qrspi_guard.layout import Kind, classify
    from qrspi_guard.rules.rounds import tag_rules

    ref = round_of_dir(target.round_dir)
    if ref is None:  # pragma: no cover - _position only returns round-NN directories
        return []
    name = target.name
    reports, entry_diags, _ = judge_round_files(ref, contents={name: data})
    mine = [d for d in entry_diags if d.file == name]
    for report in reports:
        if report.facts.name == name:
            mine.extend(report.diagnostics)
    fname = classify(name)
    if fname.tag and fname.kind in (Kind.FINDING, Kind.CLEAN):
        facts = round_facts(ref, RunConfig(path=None), Overrides(), [r.facts for r in reports])
        before = replace(facts, files=[f for f in facts.files if f.name != name])

        def key(d: Diagnostic) -> tuple[str, str | None, str | None]:
            return d.cause, d.file, d.tag

        existing = {key(d) for d in tag_rules(before)}
        mine.extend(d for d in tag_rules(facts)
                    if d.cause in TAG_CAUSES and d.tag == fname.tag and key(d) not in existing)
    return sort_diagnostics(mine)


# -- the message ---------------------------------------------------------------------------

_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


def render(target: Target, diags: list[Diagnostic] | tuple[Diagnostic, ...],
           event: Event) -> str:
    """The text the agent is shown: every error with its cause, field, what was found,
    what is allowed, the catalogue's fix and a corrected example line."""
    from qrspi_guard.causes import cause as catalogue
    from qrspi_guard.layout import classify

    fname = classify(target.name)
    ctx = _Context(target.step, target.round, fname.tag, fname.fnum,
                   clean=target.name.endswith(".clean.md"))
    errors = [d for d in diags if d.level == "error"]
    warnings = [d for d in diags if d.level == "warning"]
    shown = one_line(target.shown, 300)
    where = f"review round {one_line(target.step)}/{os.path.basename(target.round_dir)}"
    if event == "pre":
        head = (f"qrspi-guard refused this write: {shown} would halt {where} with "
                f"{len(errors)} error(s).")
        tail = "Fix every error above, then write the whole file again."
    else:
        head = (f"qrspi-guard: your edit was applied, but {shown} now halts {where} with "
                f"{len(errors)} error(s).")
        tail = "Fix every error above in the file now (edit it again or rewrite it)."
    lines = [head, ""]
    for d in errors:
        lines.extend(_render_one(d, ctx, catalogue(d.cause).fix))
        lines.append("")
    if warnings:
        lines.append("Also worth fixing (warnings, not blocking): " + "; ".join(
            f"{d.cause}: {one_line(d.message, 200)}" for d in warnings))
        lines.append("")
    lines.append(tail)
    lines.append("Explain a cause with: qrspi-guard explain <cause>")
    return "\n".join(one_line(line) for line in lines) + "\n"


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


_SEVERITIES = ("low", "medium", "high")
_CHANGE_TYPES = ("style", "clarity", "correctness", "scope", "intent")
_ROUND = "the round directory's number, e.g. round: 3 for round-03"
_NAMES = "<tag>.finding-F<NN>.md, <tag>.clean.md, <tag>.finding-F<NN>.score.yml"

_GUIDE: dict[str, tuple[str, Any]] = {
    "missing_finding_id": ("R<round>-F<NN>", lambda c, d: f"finding_id: {_fid(c)}"),
    "finding_id_malformed": ("R<round>-F<NN>", lambda c, d: f"finding_id: {_fid(c)}"),
    "fnum_mismatch": ("the F number of the file name", lambda c, d: f"finding_id: {_fid(c)}"),
    "duplicate_finding_id": ("one finding_id per finding of a tag in a round",
                             lambda c, d: f"finding_id: {_fid(c)}"),
    "missing_severity": (", ".join(_SEVERITIES), lambda c, d: "severity: medium"),
    "severity_out_of_enum": (", ".join(_SEVERITIES), lambda c, d:
                             f"severity: {_closest(d.value, _SEVERITIES, 'medium')}"),
    "missing_change_type": (", ".join(_CHANGE_TYPES), lambda c, d: "change_type: correctness"),
    "change_type_out_of_enum": (", ".join(_CHANGE_TYPES), lambda c, d:
                                f"change_type: {_closest(d.value, _CHANGE_TYPES, 'correctness')}"),
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
    "malformed_yaml": ("plain `key: value` lines", lambda c, d: "severity: medium"),
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
