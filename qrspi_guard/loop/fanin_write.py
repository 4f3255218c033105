"""``fan-in ROUND_DIR``'s writer: the round lock, the judge, the two outputs in order,
then the round's status file.

Under the round's lock (:func:`qrspi_guard.engine.roundlock.round_lock`, bounded wait):
count the round (:func:`.fanin.count_round`), judge it through the one judge as it will
stand after this run (diagnostics about the fan-in's own earlier outputs left out;
outside a run's layout also those that need the run's config.md), then write:

- clean: the audit first, the kept list last (a reader that sees the list sees its
  audit);
- halt: the stale kept list removed first, the audit after (a halting audit never
  stands beside a kept list);

each old-or-new (:func:`qrspi_guard.output.files.write_in`), relative to the round's
descriptor (opened from `reviews/` down without following a link: a linked step or
round is refused, never written through). In a run's layout
(``reviews/<step>/round-NN/``) the round is judged again and its status file rewritten
as ``check --write-status`` would. No printing, no exits: a failed write is returned
(the halt must still be reported), a lock timeout raised.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations.fan_in import FANIN_AUDIT, KEPT_FINDINGS
from qrspi_guard.engine.roundlock import LOOP_LOCK_WAIT, round_lock
from qrspi_guard.errors import OutputError, UnreadablePath
from qrspi_guard.judge import Judge
from qrspi_guard.loop.fanin import (
    RUN_ONLY_CAUSES,
    FanIn,
    HaltOn,
    count_round,
    line_broken,
    plan_fan_in,
    render_audit,
)
from qrspi_guard.output.files import remove_in, write_in
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

#: a lock timeout is "could not run", like a bad argument
LOCK_EXIT = 2


@record
class Outcome:
    fanin: FanIn
    error: OutputError | None = None  #: the first write that failed
    status_file: str | None = None  #: the status file written, if any


def judged(judge: Judge, round_dir: str) -> tuple[list[Diagnostic], bool]:
    """(the judge's diagnostics on the round, whether it is in a run's layout and so
    has a status file). Outside the layout the rules that need config.md are left out."""
    from qrspi_guard.output.status import status_path

    result = judge.round(round_dir)
    if (result is not None and result.ref.artifact_dir is not None
            and status_path(result) is not None):
        return result.all_diagnostics, True
    if result is not None:
        diags = result.all_diagnostics
    else:  # a directory not named round-NN: judged as check judges it, as a pseudo-round
        # when it holds reviewer output; rounds below it are not this fan-in's business
        real = os.path.realpath(round_dir)
        diags = [d for r in judge.paths([round_dir]).rounds
                 if os.path.realpath(r.ref.round_dir) == real for d in r.all_diagnostics]
    return [d for d in diags if d.cause not in RUN_ONLY_CAUSES], False


def _failed(path: str, exc: OSError) -> OutputError:
    return OutputError(f"cannot write {one_line(path)}: {exc.strerror or exc}; the previous "
                       "file, if any, is unchanged")


def write_outputs(plan: FanIn, into: Dir) -> OutputError | None:
    """The audit and the kept list, in loop.md's order, relative to the open round; the
    first failure, or None."""
    audit = os.path.join(plan.count.round_dir, FANIN_AUDIT)
    kept = os.path.join(plan.count.round_dir, KEPT_FINDINGS)
    try:
        if plan.halted:
            try:
                remove_in(into, KEPT_FINDINGS)
            except OSError as exc:
                return OutputError(f"cannot remove the stale {one_line(kept)}: "
                                   f"{exc.strerror or exc}; the audit is not written")
        write_in(into, FANIN_AUDIT, render_audit(plan.audit), shown=audit)
    except OSError as exc:
        return _failed(audit, exc)
    if plan.halted:
        return None
    try:
        write_in(into, KEPT_FINDINGS, plan.kept_list(), shown=kept)
    except OSError as exc:
        return _failed(kept, exc)
    return None


def _open_round(round_dir: str) -> Dir:
    """The round, its `reviews/`-and-below components opened without following a link;
    its resolved path must hold no line break (the kept list is one path per line).
    Raises :class:`~qrspi_guard.errors.UnreadablePath` (exit 2), naming it."""
    if line_broken(os.path.realpath(round_dir)):
        raise UnreadablePath(f"round-dir's path holds a line break, which {KEPT_FINDINGS} "
                             f"(one path per line) cannot carry: {one_line(round_dir)}")
    try:
        return Dir.round_path(round_dir)
    except OSError as exc:
        raise UnreadablePath(f"round-dir cannot be used: {one_line(round_dir)}: "
                             f"{exc.strerror or exc}") from None


def fan_in(round_dir: str, halt_on: HaltOn = "all",
           on_wait: Callable[[], None] | None = None) -> Outcome:
    """One fan-in run on *round_dir* (an existing directory). Raises
    :class:`~qrspi_guard.engine.roundlock.LockTimeout`, and
    :class:`~qrspi_guard.errors.UnreadablePath` when the round cannot be opened (a link
    from `reviews/` down, a line break in its path) or listed."""
    from qrspi_guard.output.status import write_status

    judge = Judge.for_path(round_dir)
    with _open_round(round_dir) as into, round_lock(
            round_dir, on_wait=on_wait, timeout=LOOP_LOCK_WAIT, exit_code=LOCK_EXIT,
            dir_fd=into.fd):
        count = count_round(round_dir, into.fd)
        diags, in_layout = judged(judge, round_dir)
        plan = plan_fan_in(count, diags, halt_on)
        outcome = Outcome(plan, write_outputs(plan, into))
        if in_layout:
            after = judge.round(round_dir)
            if after is not None:  # (in the layout, it is a round)
                try:
                    outcome.status_file = write_status(after)
                except OSError as exc:
                    outcome.error = outcome.error or OutputError(
                        f"cannot write the status file of {one_line(round_dir)}: "
                        f"{exc.strerror or exc}; the previous one is unchanged")
    return outcome
