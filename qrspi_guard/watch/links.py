"""Rounds a symbolic link stands in place of, judged as ``check`` judges them.

check's walk never follows a link where a round, step, task or `reviews/` directory
would be: it reports `symlink_in_round_dir` (an error), so a linked round cannot pass
the gate unjudged. watch does the same. A round directory replaced by a link while
watched (or a link that appears as `round-NN`) is a ``halt`` with that diagnostic, in
its status file beside it and on stdout; a round below a step or `reviews/` directory
that became a link is a ``halt`` on stdout (its status file cannot be written without
following the link, so it is not). The round is judged again as usual once a real
directory is back.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.layout import RoundRef, status_file_name
from qrspi_guard.contract.runconfig import RunConfig
from qrspi_guard.engine import RoundResult
from qrspi_guard.engine.discover import round_of_dir, with_step
from qrspi_guard.records import record
from qrspi_guard.settings.selection import Selection, apply_selection
from qrspi_guard.watch.configs import WatchedConfigs
from qrspi_guard.watch.publish import RoundOutput

CAUSE = "symlink_in_round_dir"


@record(frozen=True)
class Linked:
    """A round a link stands in place of (*own*: the round directory itself is the
    link, so its status file beside it can be written), and check's diagnostic."""

    ref: RoundRef
    diagnostic: Diagnostic
    own: bool


def linked_rounds(diags: list[Diagnostic], tracked: dict[str, RoundRef],
                  step: str | None = None) -> dict[str, Linked]:
    """Round key -> :class:`Linked` for every `round-NN` link among *diags* (discovery's
    diagnostics) and every *tracked* round (key -> ref) below a linked directory."""
    out: dict[str, Linked] = {}
    for d in diags:
        if d.cause != CAUSE or d.path is None:
            continue
        link = os.path.abspath(d.path)
        ref = round_of_dir(d.path, step)
        if ref is not None and ref.has_status_file:
            out[os.path.normpath(link)] = Linked(with_step(ref, step), d, own=True)
        prefix = link + os.sep
        for key, tracked_ref in tracked.items():
            if key.startswith(prefix):
                out[key] = Linked(tracked_ref, d, own=False)
    return out


def output_for(item: Linked) -> RoundOutput:
    """Where a linked round's verdict goes: its status file beside the link (never
    through it), or stdout only."""
    ref = item.ref
    path = None
    if item.own and ref.round is not None:
        path = os.path.join(ref.step_dir, status_file_name(ref.round))
    return RoundOutput(path, ref.round_dir)


def halt(item: Linked, run: RunConfig) -> RoundResult:
    """check's verdict on a round a link stands in place of: `halt`."""
    return RoundResult(item.ref, "halt", [item.diagnostic], run)


class LinkedRounds:
    """The outputs of the rounds a link stands in place of now, by round key."""

    def __init__(self) -> None:
        self.outputs: dict[str, RoundOutput] = {}

    def publish(self, linked: dict[str, Linked], configs: WatchedConfigs, selection: Selection,
                publish: Callable[[RoundOutput, RoundResult], None]) -> None:
        """Publish each linked round's `halt` (once per change: the publisher compares
        with what it last wrote and showed); forget rounds no longer linked (a real
        directory again, or gone: judged as usual)."""
        for key in [k for k in self.outputs if k not in linked]:
            del self.outputs[key]
        for key, item in linked.items():
            out = self.outputs.get(key)
            if out is None:
                out = self.outputs[key] = output_for(item)
            configs.track(item.ref)
            publish(out, apply_selection(halt(item, configs.of(item.ref)), selection))
