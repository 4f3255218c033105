"""One split, end to end: arguments -> input -> lock -> repair -> plan -> files.

The order matters. The input is read first, without the lock (a reviewer piping into
``split -`` may take minutes; other tags' splits into the round must not wait for it).
Then, under the round's lock and until the last rename: an interrupted earlier split is
rolled back or forward, the round is listed, the plan is made against that listing and
carried out. So two splits into one round never act on a listing the other changed.
The round directory is opened once without following links (a link at it, or at its
step or `reviews/` directory, is refused as check refuses it) and every step after is
relative to that descriptor, so a directory swapped for a link mid-run is never
written through.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable

from qrspi_guard.engine.roundlock import round_lock
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.records import field, record
from qrspi_guard.split.errors import SplitInputError, SplitUsageError
from qrspi_guard.split.faults import Fault, from_env
from qrspi_guard.split.grammar import tag_is_valid
from qrspi_guard.split.io import execute
from qrspi_guard.split.plan import SplitPlan, earlier_output, plan_split
from qrspi_guard.split.recover import recover
from qrspi_guard.split.source import read_input
from qrspi_guard.split.target import Target, target_of
from qrspi_guard.textsafe import one_line


@record
class Outcome:
    plan: SplitPlan
    warnings: list[str] = field(default_factory=list)


def _existing_bytes(d: Dir, name: str) -> bytes | None:
    data = read_bytes(name, dir_fd=d.fd)
    return None if isinstance(data, ReadFailure) else data


def _open_round(round_dir: str) -> Dir:
    """ROUND_DIR, opened without following a link at it or at its step or `reviews/`
    directory (check calls such a round `symlink_in_round_dir`): split never writes
    through one."""
    try:
        return Dir.round_path(round_dir)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SplitUsageError(
                f"ROUND_DIR {one_line(round_dir)} is reached through a symbolic link, "
                "which check never follows (symlink_in_round_dir); split does not write "
                "through one: name the real directory") from None
        raise SplitInputError(f"cannot use ROUND_DIR {one_line(round_dir)}: "
                              f"{exc.strerror or exc}") from exc


def run_split(stdout_path: str, round_dir: str, tag: str, *, replace: bool = False,
              reject_invalid: bool = False, round_no: int | None = None,
              say: Callable[[str], None] = lambda line: None,
              fault: Fault | None = None) -> Outcome:
    """Split *stdout_path* into *round_dir* for *tag*. *say* gets progress lines (a wait
    for the lock, a repair). Raises :class:`~qrspi_guard.errors.GuardError` subclasses
    for what stops the command; the reviewer's defects are in the plan."""
    if not tag_is_valid(tag):
        raise SplitUsageError(f"TAG {tag!r} does not match the tag grammar "
                              "^[a-z0-9][a-z0-9-]*$ (lower case)")
    if not os.path.isdir(round_dir):
        raise SplitUsageError(f"ROUND_DIR {round_dir} does not exist or is not a directory")
    target = target_of(round_dir, round_no)
    fault = fault or from_env()
    _open_round(round_dir).close()  # refused before the input is read (it may take minutes)
    data = read_input(stdout_path)
    shown = one_line(round_dir)

    def waiting() -> None:
        say(f"waiting for another qrspi-guard split of {shown} to finish")

    try:
        with _open_round(round_dir) as d, round_lock(round_dir, on_wait=waiting,
                                                     dir_fd=d.fd):
            return split_held(data, d, tag, target, replace=replace,
                              reject_invalid=reject_invalid, say=say, fault=fault)
    except OSError as exc:  # opening or locking the round directory
        raise SplitInputError(f"cannot use ROUND_DIR {shown}: {exc.strerror or exc}") from exc


def split_held(data: bytes, round_dir: str | Dir, tag: str, target: Target | None = None, *,
               replace: bool = False, reject_invalid: bool = False,
               say: Callable[[str], None] = lambda line: None,
               fault: Fault | None = None) -> Outcome:
    """The part of a split done under the round's lock, for a caller that already holds
    it (``await``'s fallback split of a raw capture): repair, list, plan, write, every
    step relative to the round's descriptor. *round_dir*: the open round, or its path
    (opened here without following links). *tag* must match the tag grammar; *target*
    defaults to ROUND_DIR's (which may raise :class:`SplitUsageError`)."""
    if isinstance(round_dir, str):
        with _open_round(round_dir) as opened:
            return split_held(data, opened, tag, target, replace=replace,
                              reject_invalid=reject_invalid, say=say, fault=fault)
    d = round_dir
    target = target or target_of(d.path)
    fault = fault or from_env()
    shown = one_line(d.path)
    try:
        for line in recover(d, fault):
            say(f"{shown}: {line}")
        names = d.listdir()
        fault("listed", "")
        existing = {n: _existing_bytes(d, n) for n in earlier_output(tag, names)}
        plan = plan_split(data, target, tag, names, replace=replace,
                          reject_invalid=reject_invalid, existing_data=existing)
        warnings = execute(plan, fault, into=d) if plan.writes else []
    except OSError as exc:  # listing the round directory
        raise SplitInputError(f"cannot use ROUND_DIR {shown}: {exc.strerror or exc}") from exc
    return Outcome(plan, warnings)
