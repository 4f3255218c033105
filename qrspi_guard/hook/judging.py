"""The hook's judgement: one tool-use payload in, one :class:`Decision` out.

A pure function of the payload and the disk: ``ignore`` (not about a review round, or
a tool this hook does not judge), ``allow`` (a round file that passes, warnings at
most; or an edit that would not apply), ``block`` (errors, with a message for the
agent). The hook's own failures raise :class:`HookFailure`.

A write is judged by the one judge (:class:`qrspi_guard.judge.Judge`) as ``check``
would judge its round with the written content in place, under the project
configuration found from the written file upward (or ``--settings``). The rules (the
engine, YAML) are imported only once a path is known to be inside a round directory
under ``reviews/``. The hook never calls git and reads no config.md: the rules it
reports (per-file, and the tag rules a single write can break) do not depend on it.
"""

from __future__ import annotations

import os

from qrspi_guard.hook.payload import (
    PRE_KINDS,
    Call,
    HookFailure,
    base_dir,
)
from qrspi_guard.hook.runtimes import SHELL, WRITE
from qrspi_guard.hook.where import Target, triage

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from qrspi_guard.contract.diagnostics import Diagnostic


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
        self.runtime = runtime  #: the runtime's name (:mod:`qrspi_guard.hook.runtimes`)

    @property
    def blocks(self) -> bool:
        return self.action == "block"

    def __repr__(self) -> str:
        return f"Decision({self.action!r}, {len(self.diagnostics)} diagnostic(s))"


def decide(payload: dict[str, Any], event: str | None = None,
           runtime: str | None = None, settings_file: str | None = None) -> Decision:
    """Judge one tool call (*settings_file*: ``--settings``, else the project
    configuration found from each file written). Raises :class:`HookFailure` for the
    hook's own failures."""
    call, target, asks = triage(payload, event, runtime)
    return decide_call(call, target, asks, settings_file)


def decide_call(call: Call, target: Target | None, asks: str | None,
                settings_file: str | None = None) -> Decision:
    """:func:`decide` after :func:`~qrspi_guard.hook.where.triage` (*asks*: what it
    said the call asks of the hook)."""
    ev, rt = call.event, call.runtime
    if asks is None:
        return Decision("ignore", event=ev, runtime=rt)
    if asks:
        return Decision("block", asks, event=ev, runtime=rt)
    if call.kind == SHELL:
        from qrspi_guard.hook.shell import decide_shell

        return decide_shell(call, (settings_file, base_dir(call)))
    assert target is not None
    ask = (settings_file, base_dir(call))
    if ev == "pre" and call.kind in PRE_KINDS and call.kind != WRITE:
        from qrspi_guard.hook.edits import proposed

        source = os.path.realpath(target.path) if target.symlink else target.path
        data = proposed(call, source, target.shown)
        if data is None:  # the edit would not apply: the tool refuses it, or post judges
            return Decision("allow", target=target, event=ev, runtime=rt)
        diags = _judged(target, data, ask)
    elif target.nested or target.symlink:
        diags = _judged(target, b"", ask)
    elif ev == "pre":
        _regular_or_absent(target)
        diags = _judged(target, _content(call), ask)
    else:
        _regular_or_absent(target)
        diags = _judged(target, _read_for_name(target), ask)
    errors = [d for d in diags if d.level == "error"]
    if not errors:
        return Decision("allow", diagnostics=tuple(diags), target=target, event=ev, runtime=rt)
    from qrspi_guard.hook.message import render

    edit = ev == "pre" and call.kind != WRITE
    return Decision("block", render(target, diags, ev, edit=edit), tuple(diags), target, ev,
                    rt)


#: how the hook asks for its judge: (``--settings FILE`` or None, the payload's cwd)
Ask = tuple["str | None", "str | None"]
NO_ASK: Ask = (None, None)


def _judged(target: Target, data: bytes, ask: Ask) -> list[Diagnostic]:
    """The write's diagnostics: its layout's when it breaks the round's layout whatever
    its content (a link, a subdirectory, a `round*` directory that is no round), else
    :func:`judge`."""
    if target.nested or target.symlink or (target.round is None
                                           and not _suffixed(target.round_dir)):
        return _selected(layout_diagnostics(target), target.path, ask)
    return judge(target, data, ask)


def _suffixed(round_dir: str) -> bool:
    """`round-05-fanout/`: a round directory with a suffix, whose files are still judged
    (generations.md §8) besides `bad_round_dir_name`."""
    from qrspi_guard.contract.layout import suffixed_round_number

    return suffixed_round_number(os.path.basename(round_dir)) is not None


def _judge_for(path: str, ask: Ask) -> Any:
    """The one judge for *path*: the project configuration found from it upward (or
    ``--settings``, whose relative globs are relative to the payload's cwd), as ``check``
    finds it. A configuration file that is wrong is the hook's failure."""
    from qrspi_guard.errors import ConfigFileError
    from qrspi_guard.judge import Judge

    try:
        if ask[0] is None:  # found from the path upward: no command line to say
            return Judge.for_path(path)
        from qrspi_guard.settings import CommandLine

        return Judge.for_path(path, CommandLine(settings_file=ask[0], workdir=ask[1]))
    except ConfigFileError as exc:
        raise HookFailure(str(exc)) from None


def _selected(diags: list[Diagnostic], path: str, ask: Ask) -> list[Diagnostic]:
    """*diags* the project configuration at *path* keeps (layout diagnostics, made
    outside the judge). Nothing to filter costs nothing."""
    if not diags:
        return diags
    return list(_judge_for(path, ask).selection.filter(diags))


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


def _mine(d: Diagnostic, name: str) -> bool:
    """Said about the written file by a rule a write is judged by (the registry's
    entry, file, sidecar and tag scopes; never a round's outcome), or the round
    directory's own name that the write would use."""
    from qrspi_guard.rules.registry import WRITE_CAUSES

    return (d.file == name and d.cause in WRITE_CAUSES) or d.cause == "bad_round_dir_name"


def judge(target: Target, data: bytes, ask: Ask = NO_ASK) -> list[Diagnostic]:
    """Judge *data* as the round file at *target*, exactly as ``check`` would judge
    the round with *data* at that path (an overlay), under the same project
    configuration: the one judge's file scope (:meth:`Judge.files`: per-file and tag
    rules, as for a round not complete yet). Kept: what is said about this file, plus
    the tag rules a single write can break (``rules.registry.TAG_CAUSES``: a duplicate
    ``finding_id``, a clean sentinel beside findings, either way round), counted only
    when this file's presence brings them.
    """
    from qrspi_guard.engine.results import sort_diagnostics

    judge_ = _judge_for(target.path, ask)
    name = target.name
    said = judge_.files(target.round_dir, overlay={name: data})
    if said is None:  # pragma: no cover - _judged only sends round directories
        return _selected(layout_diagnostics(target), target.path, ask)
    if not said:  # the common case: nothing to say, nothing more to look up
        return []
    mine = [d for d in said if _mine(d, name)]
    from qrspi_guard.contract.layout import classify
    from qrspi_guard.rules.registry import TAG_CAUSES

    tag = classify(name).tag
    others = [d for d in said
              if d.cause in TAG_CAUSES and d.file != name and tag and d.tag == tag]
    if others:
        before = judge_.files(target.round_dir, overlay={name: None})

        def key(d: Diagnostic) -> tuple[str, str | None, str | None]:
            return d.cause, d.file, d.tag

        existing = {key(d) for d in before} if before is not None else set()
        mine.extend(d for d in others if key(d) not in existing)
    return sort_diagnostics(mine)


def judge_round(round_dir: str, ask: Ask = NO_ASK) -> list[Diagnostic]:
    """Every reviewer-output file of a round as it is on disk, judged by the one judge
    before the round is complete: what is said about each file (names, links,
    subdirectories, per-file and tag rules) and the round's entry diagnostics; never
    the round-completion rules."""
    said = _judge_for(round_dir, ask).files(round_dir)
    if said is None:  # pragma: no cover - rounds_named only returns round directories
        return []
    from qrspi_guard.rules.registry import WRITE_CAUSES

    return [d for d in said if d.cause in WRITE_CAUSES or d.cause == "bad_round_dir_name"]
