"""The hook around a shell tool call: what the call changed, and whom it blames (cli.md,
the hook paragraph).

A shell call is never refused before it runs. The pre-tool-use call reads the command
(:func:`~qrspi_guard.hook.shellwrites.analyse`); unless it only reads, it records the
state of the review rounds the call can reach
(:func:`~qrspi_guard.hook.where.rounds_reached`, :mod:`~qrspi_guard.hook.shellstate`)
in the call store (:mod:`~qrspi_guard.hook.callstore`), under the pairing key of the
call (:meth:`~qrspi_guard.hook.payload.Call.pairing`). The post-tool-use call takes
that record back and judges the files new or changed during the call, whatever wrote
them; reviewers write one round in parallel, so the agent is blamed only for (see
:func:`blamed`):

- a command whose writes are all read from its command line: the files it visibly
  writes (that changed);
- an opaque one (a script, ``python -c``, a program nobody listed): the changed files
  it names or visibly writes; when it names none, the changed files of the one tag that
  changed (files of no tag count as one more tag); when several tags changed, nothing
  (``watch`` and ``check`` still judge every file);
- without a record (a post call whose pre call did not run or could not record):
  the files it visibly writes or (opaque) names.

An agent is never told to fix a file its command did not name or write.
"""

from __future__ import annotations

import os
import re

from qrspi_guard.hook.payload import Call, base_dir
from qrspi_guard.hook.where import MAX_SHELL_ROUNDS, Target, locate, rounds_named
from qrspi_guard.parse import jsondoc

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic
    from qrspi_guard.hook.judging import Ask, Decision
    from qrspi_guard.hook.shellwrites import Analysis

#: at most this many written files are judged for one command
MAX_FILES = 256
_WORDS = re.compile(r"[\s;|&<>()`'\"=,:\[\]{}]+")

Entry = tuple[str, str]  # (round directory, entry name)


def decide_shell(call: Call, ask: Ask) -> Decision:
    """Before the call: record the state of the rounds it can reach (never blocks).
    After it: judge what it changed and is blamed for, each file through the one judge
    for its path (*ask*: ``--settings`` and the payload's cwd)."""
    from qrspi_guard.hook.judging import Decision
    from qrspi_guard.hook.shellwrites import analyse

    command = call.text("command")
    assert command is not None
    base = base_dir(call)
    ignore = Decision("ignore", event=call.event, runtime=call.runtime)
    analysis = analyse(command, base)
    if analysis.reads_only:
        return ignore
    session, key = call.pairing()
    if call.event == "pre":
        _record(session, key, command, analysis, base)
        return ignore
    paths = blamed(analysis, _recorded(session, key, command))
    groups = _judged(paths[:MAX_FILES], base, ask)
    every = [d for _, _, ds in groups for d in ds]
    if not groups:
        return ignore
    if not any(d.level == "error" for d in every):
        return Decision("allow", diagnostics=tuple(every), event=call.event,
                        runtime=call.runtime)
    from qrspi_guard.hook.message import render_rounds

    return Decision("block", render_rounds(groups), tuple(every), None, call.event,
                    call.runtime)


# -- the record: before the call, and after it --------------------------------------------


def _record(session: str, key: str, command: str, analysis: Analysis, base: str) -> None:
    from qrspi_guard.hook import callstore
    from qrspi_guard.hook.shellstate import snapshot
    from qrspi_guard.hook.where import rounds_reached

    paths = [p for p, _ in analysis.writes]
    if analysis.opaque:  # whatever it runs can reach what it names, and where it runs
        paths += [p for p, _ in analysis.names] + [
            os.path.join(base, os.path.expanduser(w)) for w in _WORDS.split(command)
            if w and "\0" not in w and ("round" in w or "reviews" in w)] + [base]
    rounds, scopes = rounds_reached(paths)
    if rounds or scopes:
        state = snapshot(rounds, scopes)
        record = {"key": callstore.digest(key), "command": callstore.digest(command),
                  "state": state}
        callstore.put(session, key, jsondoc.dumps(record).encode("ascii"))


def _recorded(session: str, key: str, command: str) -> dict[str, object] | None:
    """The state the pre call recorded for this call, or None."""
    from qrspi_guard.hook import callstore

    data = callstore.take(session, key)
    if data is None:
        return None
    try:
        record = jsondoc.loads(data)
    except jsondoc.JsonError:
        return None
    if not isinstance(record, dict) or record.get("key") != callstore.digest(key) \
            or record.get("command") != callstore.digest(command) \
            or not isinstance(record.get("state"), dict):
        return None  # another call's record under a colliding key: not this one's
    state: dict[str, object] = record["state"]
    return state


# -- whom to blame ------------------------------------------------------------------------


def _entry(path: str) -> Entry | None:
    """The round entry *path* writes (the round's own name for a path below an entry)."""
    if "round" not in path:
        return None
    target = locate(path)
    return None if target is None else (target.round_dir, target.name)


def blamed(analysis: Analysis, before: dict[str, object] | None) -> list[str]:
    """The files the command is blamed for (absolute paths), by the rules above:
    *before* is the recorded state (None: there is none)."""
    writes = [p for p, _ in analysis.writes]
    if before is None:
        names = [p for p, _ in analysis.names
                 if _entry(p) is not None and os.path.lexists(p)]
        return list(dict.fromkeys(writes + names))
    from qrspi_guard.hook.shellstate import changed

    rounds = before.get("rounds")
    recorded: dict[str, object] = rounds if isinstance(rounds, dict) else {}
    existed = {(r, name) for r, entries in recorded.items() if isinstance(entries, dict)
               for name in entries}
    visible: set[Entry] = set()
    outside: list[str] = []
    for path, globbed in analysis.writes:
        entry = _entry(path)
        if entry is None or entry[0] not in recorded:
            outside.append(path)  # not in a recorded round: judged as written
        elif not globbed or entry in existed:  # a glob matched what was there before
            visible.add(entry)
    now = [(os.path.dirname(p), os.path.basename(p)) for p in changed(before)]
    new_or_changed = set(now)
    named: set[Entry] = set()  # reviewer files it names: there before, or made by the call
    for path, globbed in analysis.names:
        entry = _entry(path)
        if entry is not None and entry[0] in recorded and (
                entry in existed or (not globbed and entry in new_or_changed)):
            named.add(entry)
    if not analysis.opaque:
        picked = [e for e in now if e in visible]
    elif visible or named:
        picked = [e for e in now if e in visible or e in named]
    else:
        picked = now if len({_tag(name) for _, name in now}) == 1 else []
    return list(dict.fromkeys([os.path.join(*e) for e in picked] + outside))


def _tag(name: str) -> str | None:
    from qrspi_guard.contract.layout import classify

    return classify(name).tag


# -- judging what is blamed ------------------------------------------------------------------


def _judged(paths: list[str], base: str,
            ask: Ask) -> list[tuple[str, str, list[Diagnostic]]]:
    """(round directory, step, diagnostics of the written files) per round written."""
    from qrspi_guard.hook.judging import _selected, judge, layout_diagnostics

    by_round: dict[str, tuple[str, list[Diagnostic]]] = {}
    for path in paths:
        target = locate(path, base)
        if target is None:
            diags, round_dir, step = _misnamed_round(path, base)
        elif target.layout_problem or os.path.isdir(target.path):
            diags = layout_diagnostics(_as_entry(target))
            round_dir, step = target.round_dir, target.step
        else:
            data = _read(target)
            if data is None:
                continue  # removed again, or not a file: nothing of it to judge
            diags, round_dir, step = judge(target, data, ask), target.round_dir, target.step
        if round_dir is None:
            continue
        if round_dir not in by_round and len(by_round) >= MAX_SHELL_ROUNDS:
            break
        by_round.setdefault(round_dir, (step, []))[1].extend(diags)
    return [(r, s, _selected(ds, r, ask)) for r, (s, ds) in by_round.items()]


def _as_entry(target: Target) -> Target:
    """A directory made inside a round is an entry of the round that is not a file."""
    if target.round is not None and not target.nested and not target.symlink:
        target.nested = True
    return target


def _misnamed_round(path: str, base: str) -> tuple[list[Diagnostic], str | None, str]:
    """A written path that is a round directory itself: its name, if misnamed."""
    from qrspi_guard.hook.judging import layout_diagnostics

    if not os.path.isdir(path) or "\n" in path:
        return [], None, ""
    for round_dir, step, number in rounds_named(path, base):
        if number is None and os.path.realpath(path) == round_dir:
            name = os.path.basename(round_dir)
            return (layout_diagnostics(Target(round_dir, round_dir, round_dir, name, step,
                                              None, False)), round_dir, step)
    return [], None, ""


def _read(target: Target) -> bytes | None:
    from qrspi_guard.parse.reader import ReadFailure, read_bytes

    if not os.path.lexists(target.path):
        return None
    data = read_bytes(target.path)
    return None if isinstance(data, ReadFailure) else data
