"""The hook's judgement: one tool-use payload in, one :class:`Decision` out.

A pure function of the payload and the disk: ``ignore`` (not about a review round, or
a tool this hook does not judge), ``allow`` (a round file that passes, warnings at
most; or an edit that would not apply), ``block`` (errors, with a message for the
agent). The hook's own failures raise :class:`HookFailure`.

The rules (the engine, YAML) are imported only once a path is known to be inside
``reviews/<step>/round-NN/`` or ``reviews/tasks/task-NN/round-NN/``. The hook never
calls git and reads no config.md: the rules it applies (per-file, and the two tag
rules a single write can break) do not depend on the run's configuration.
"""

from __future__ import annotations

import os

from qrspi_guard.hook.payload import (
    PRE_KINDS,
    SHELL,
    WRITE,
    Call,
    HookFailure,
    base_dir,
    resolve,
)
from qrspi_guard.hook.where import Target, locate, may_name_a_round

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from qrspi_guard.contract.diagnostics import Diagnostic

#: tag rules that a single write can break, judged for the written file's tag only
TAG_CAUSES = frozenset({"duplicate_finding_id", "clean_and_findings_coexist"})


class Decision:
    """What the hook says about one tool call."""

    __slots__ = ("action", "message", "diagnostics", "target", "event", "runtime")

    def __init__(self, action: str, message: str = "",
                 diagnostics: tuple[Diagnostic, ...] = (), target: Target | None = None,
                 event: str | None = None, runtime: str | None = None) -> None:
        self.action = action  #: "allow", "block" or "ignore"
        self.message = message  #: for ``block``: what the agent is shown
        self.diagnostics = diagnostics  #: errors and warnings about the target(s)
        self.target = target  #: None for a shell command (it may name several rounds)
        self.event = event  #: "pre" or "post"
        self.runtime = runtime  #: "claude" or "gemini"

    @property
    def blocks(self) -> bool:
        return self.action == "block"

    def __repr__(self) -> str:
        return f"Decision({self.action!r}, {len(self.diagnostics)} diagnostic(s))"


def decide(payload: dict[str, Any], event: str | None = None,
           runtime: str | None = None) -> Decision:
    """Judge one tool call. Raises :class:`HookFailure` for the hook's own failures."""
    call = resolve(payload, event, runtime)
    ev, rt = call.event, call.runtime
    if call.kind is None:
        return Decision("ignore", event=ev, runtime=rt)
    if call.kind == SHELL:  # only what the command wrote (hook/shell.py)
        if not may_name_a_round(call.text("command") or "", base_dir(call)):
            return Decision("ignore", event=ev, runtime=rt)
        from qrspi_guard.hook.shell import decide_shell

        return decide_shell(call)
    target = locate(call.file_path(), call.cwd)
    if target is None:
        return Decision("ignore", event=ev, runtime=rt)
    if ev == "pre" and call.kind in PRE_KINDS and call.kind != WRITE:
        from qrspi_guard.hook.edits import proposed

        source = os.path.realpath(target.path) if target.symlink else target.path
        data = proposed(call, source, target.shown)
        if data is None:  # the edit would not apply: the tool refuses it, or post judges
            return Decision("allow", target=target, event=ev, runtime=rt)
        diags = layout_diagnostics(target) if target.layout_problem else judge(target, data)
    elif target.layout_problem:
        diags = layout_diagnostics(target)
    elif ev == "pre":
        _regular_or_absent(target)
        diags = judge(target, _content(call))
    else:
        _regular_or_absent(target)
        diags = judge(target, _read_for_name(target))
    diags = _selected(diags, call)
    errors = [d for d in diags if d.level == "error"]
    if not errors:
        return Decision("allow", diagnostics=tuple(diags), target=target, event=ev, runtime=rt)
    from qrspi_guard.hook.message import render

    edit = ev == "pre" and call.kind != WRITE
    return Decision("block", render(target, diags, ev, edit=edit), tuple(diags), target, ev,
                    rt)


def _selected(diags: list[Diagnostic], call: Call) -> list[Diagnostic]:
    """The diagnostics the project configuration keeps (its select / ignore /
    per-file-ignores, found from the call's working directory upward, as check finds
    it). Nothing to filter costs nothing: a clean write never reads the file."""
    if not diags:
        return diags
    from qrspi_guard.errors import ConfigFileError
    from qrspi_guard.settings import apply_selection, selection_for

    try:
        return apply_selection(diags, selection_for(call.cwd))
    except ConfigFileError as exc:
        raise HookFailure(str(exc)) from None


def _content(call: Call) -> bytes:
    content = call.text("content")
    assert content is not None
    return content.encode("utf-8", "surrogatepass")


def _regular_or_absent(target: Target) -> None:
    """A write onto a directory or a FIFO is the hook's failure, not a finding's."""
    import stat

    try:
        mode = os.stat(target.path).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        from qrspi_guard.textsafe import one_line

        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise HookFailure(f"{one_line(target.shown, 200)} is {what}")


def _read_for_name(target: Target) -> bytes:
    """The file as it now is on disk (post-edit), read like check reads it."""
    from qrspi_guard.parse.reader import ReadFailure, read_bytes
    from qrspi_guard.textsafe import one_line

    data = read_bytes(target.path)
    if isinstance(data, ReadFailure):
        raise HookFailure(f"cannot read {one_line(target.shown, 200)}: "
                          f"{data.message.removeprefix('cannot be read: ')}")
    return data


# -- judging ------------------------------------------------------------------------------


def layout_diagnostics(target: Target) -> list[Diagnostic]:
    """What check says about the round's layout that this write would create."""
    from qrspi_guard.contract.diagnostics import diag
    from qrspi_guard.textsafe import one_line

    if target.round is None:
        dirname = os.path.basename(target.round_dir)
        return [diag("bad_round_dir_name", f"directory {one_line(dirname, 60)!r} is not "
                     "round-NN (two or more digits, >= 01)", path=target.round_dir,
                     step=target.step)]
    where: dict[str, Any] = {"path": target.path, "file": target.name, "step": target.step,
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
    from qrspi_guard.contract.layout import Kind, classify
    from qrspi_guard.engine.discover import round_of_dir
    from qrspi_guard.engine.entries import read_round
    from qrspi_guard.engine.results import sort_diagnostics
    from qrspi_guard.records import replace
    from qrspi_guard.rules.rounds import tag_rules

    ref = round_of_dir(target.round_dir)
    if ref is None:  # pragma: no cover - _position only returns round-NN directories
        return []
    name = target.name
    files = read_round(ref, contents={name: data})
    mine = [d for d in files.diags if d.file == name]
    for report in files.reports:
        if report.facts.name == name:
            mine.extend(report.diagnostics)
    fname = classify(name)
    if fname.tag and fname.kind in (Kind.FINDING, Kind.CLEAN):
        facts = _tag_facts(ref, files)
        before = replace(facts, files=[f for f in facts.files if f.name != name])

        def key(d: Diagnostic) -> tuple[str, str | None, str | None]:
            return d.cause, d.file, d.tag

        existing = {key(d) for d in tag_rules(before)}
        mine.extend(d for d in tag_rules(facts)
                    if d.cause in TAG_CAUSES and d.tag == fname.tag and key(d) not in existing)
    return sort_diagnostics(mine)


def judge_round(round_dir: str) -> list[Diagnostic]:
    """Every reviewer-output file of a round as it is on disk: the per-file rules, the
    round's entries (names, links, subdirectories) and the tag rules of
    :data:`TAG_CAUSES`; never the round-completion rules."""
    from qrspi_guard.engine.discover import round_of_dir
    from qrspi_guard.engine.entries import read_round
    from qrspi_guard.engine.results import sort_diagnostics
    from qrspi_guard.rules.rounds import tag_rules

    ref = round_of_dir(round_dir)
    if ref is None:  # pragma: no cover - rounds_named only returns round-NN directories
        return []
    files = read_round(ref)
    diags = list(files.diags)
    for report in files.reports:
        diags.extend(report.diagnostics)
    diags.extend(d for d in tag_rules(_tag_facts(ref, files)) if d.cause in TAG_CAUSES)
    return sort_diagnostics(diags)


def _tag_facts(ref: Any, files: Any) -> Any:
    """The round facts the tag rules read (no round inputs: no marker, no results)."""
    from qrspi_guard.rules.rounds import RoundFacts

    return RoundFacts(ref.round_dir, ref.step, ref.round or 0, ref.is_task,
                      [r.facts for r in files.reports], gen=files.gen, names=files.names)
