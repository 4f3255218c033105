"""The hook after a shell tool call: only what the command wrote is judged and named.

The files a command writes are read from its command line
(:func:`qrspi_guard.hook.shellwrites.writes`); a command that only reads or lists
(``cat``, ``ls``, ``grep -r``) writes nothing, and the hook says nothing, however the
rounds it looked at stand. For a command whose writes cannot be read from its command
line (a script it runs), the pre-tool-use call records the state of the rounds it names
and the post-tool-use call judges the entries that changed during the call; without
that record the hook cannot tell, and it judges only what the command line shows.
An agent is never told to fix a file its command did not write (cli.md).
"""

from __future__ import annotations

import os

from qrspi_guard.hook.payload import Call, base_dir
from qrspi_guard.hook.where import MAX_SHELL_ROUNDS, Target, locate, rounds_named

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic
    from qrspi_guard.hook.judging import Ask, Decision

#: at most this many written files are judged for one command
MAX_FILES = 256


def _key(call: Call, base: str, command: str) -> str:
    return "\0".join((call.runtime, base, command))


def decide_shell(call: Call, ask: Ask) -> Decision:
    """Before the call: record the named rounds' state when the command's writes cannot
    be read from it (never blocks). After it: judge what it wrote, each file through
    the one judge for its path (*ask*: ``--settings`` and the payload's cwd)."""
    from qrspi_guard.hook.judging import Decision
    from qrspi_guard.hook.shellwrites import changed, record, writes

    command = call.text("command")
    assert command is not None
    base = base_dir(call)
    ignore = Decision("ignore", event=call.event, runtime=call.runtime)
    if call.event == "pre":
        named = rounds_named(command, base)
        if named and writes(command, base)[1]:
            record(_key(call, base, command), [r for r, _, _ in named])
        return ignore
    paths, opaque = writes(command, base)
    if opaque:
        more = changed(_key(call, base, command))
        paths += [p for p in more or () if p not in paths]
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
