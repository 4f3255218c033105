"""When a file has settled and when a round is complete (round-contract §5, cli.md watch).

Pure policy: the clock, the "does a writer still hold this file?" probe and the
"is its frontmatter closed?" peek are injected, so tests drive it with a fake clock
and scripted answers. The loop feeds it what happened and asks :meth:`Policy.step`
what to do now.

Settling a file:

- a close-after-write event, or a rename into place, settles it at once;
- otherwise (a file seen on a scan, created by a move from outside the tree, written
  with no close event): ask the read-lease probe. A writer still holding the file means
  wait (re-asking now and then, in case the close event was lost); no writer and closed
  frontmatter means settled now; when the probe cannot tell, fall back to a quiet time
  (``quiet`` seconds, or two polls in polling mode) and closed frontmatter. A file whose
  frontmatter never closes is judged after ``settle`` seconds of quiet all the same.

Completing a round: ``round-NN-verified.md`` appears, a later round's directory
appears, or ``settle`` seconds pass with no change in the round and no file in it still
being written. Once complete, a round stays complete.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
from collections.abc import Callable
from enum import Enum

from qrspi_guard.records import field, record
from qrspi_guard.watch.events import EventKind


class Probe(Enum):
    NO_WRITER = "no_writer"  #: nobody has the file open for writing
    WRITER = "writer"  #: somebody still has it open for writing
    UNKNOWN = "unknown"  #: the probe cannot tell (not the owner, file system, vanished)


_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)
_F_RDLCK = getattr(fcntl, "F_RDLCK", 0)
_F_UNLCK = getattr(fcntl, "F_UNLCK", 2)
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_CLOEXEC", 0)


def lease_probe(path: str) -> Probe:
    """Ask the kernel whether anyone has *path* open for writing.

    A read lease (``F_SETLEASE`` with ``F_RDLCK``) is granted only when no file
    descriptor has the file open for writing; it needs the file opened read-only by
    its owner (or root). EAGAIN/EBUSY: a writer holds it. Anything else: cannot tell.
    The lease is dropped at once. A writer that opens the file in that instant gets a
    lease break (SIGIO): the loop ignores SIGIO while it runs.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return Probe.UNKNOWN
    try:
        try:
            fcntl.fcntl(fd, _F_SETLEASE, _F_RDLCK)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EBUSY):
                return Probe.WRITER
            return Probe.UNKNOWN
        try:
            fcntl.fcntl(fd, _F_SETLEASE, _F_UNLCK)
        except OSError:  # pragma: no cover - dropped with the descriptor anyway
            pass
        return Probe.NO_WRITER
    finally:
        os.close(fd)


_FENCE_END_RE = re.compile(rb"\n---[ \t]*\r?(?:\n|$)")


def frontmatter_closed(data: bytes) -> bool:
    """True unless *data* opens a frontmatter fence it has not closed yet.

    A file with no frontmatter at all (a sidecar is plain YAML) has nothing to wait
    for; an empty file or a bare prefix of ``---`` is still being written.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if len(data) < 4:
        return not b"---\n".startswith(data)
    if not data.startswith(b"---"):
        return True
    first = data.find(b"\n")
    if first < 0:
        return False
    if data[:first].rstrip(b"\r \t") != b"---":
        return True
    return _FENCE_END_RE.search(data, first) is not None


def peek_frontmatter_closed(path: str, limit: int = 1 << 20) -> bool:
    """:func:`frontmatter_closed` of the file at *path* (unreadable: nothing to wait for)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return True
    try:
        return frontmatter_closed(os.read(fd, limit))
    except OSError:
        return True
    finally:
        os.close(fd)


@record
class FileState:
    owner: str  #: the round key (or another owner key) the file belongs to
    changed_at: float  #: clock time of its last change
    check_at: float  #: when to decide next
    committed: bool = False  #: closed after writing / moved into place since the change


@record
class RoundState:
    last_activity: float
    complete: bool = False


@record
class Step:
    """What :meth:`Policy.step` decided."""

    settled: list[str] = field(default_factory=list)  #: file paths to judge now
    evaluate: set[str] = field(default_factory=set)  #: round keys to re-evaluate now
    rescan: bool = False  #: run a reconcile scan now


class Policy:
    """Settle timers per file, completion per round, and the rescan schedule."""

    def __init__(self, clock: Callable[[], float],
                 probe: Callable[[str], Probe] = lease_probe,
                 peek: Callable[[str], bool] = peek_frontmatter_closed, *,
                 settle: float = 2.0, quiet: float = 0.5, reprobe: float = 0.5,
                 rescan: float = 30.0, polling: bool = False,
                 poll_interval: float = 0.5) -> None:
        self.clock = clock
        self.probe = probe
        self.peek = peek
        self.settle = settle
        # Polling: "unchanged across two polls" is two poll intervals without a change.
        self.quiet = max(quiet, 2 * poll_interval) if polling else quiet
        self.reprobe = reprobe
        self.rescan_every = rescan
        self.files: dict[str, FileState] = {}
        self.rounds: dict[str, RoundState] = {}
        self._dirty: set[str] = set()
        self._next_rescan = clock() + rescan if rescan > 0 else None
        self._rescan_now = False

    # -- what happened ------------------------------------------------------------
    def file_event(self, path: str, owner: str, kind: EventKind) -> None:
        """A file changed. *kind*: CLOSED or MOVED_IN (settled at once), MODIFIED
        (decide after a quiet time), anything else (created, seen by a scan): decide
        at the next step."""
        now = self.clock()
        st = self.files.get(path)
        if st is None:
            st = self.files[path] = FileState(owner, now, now)
        st.owner = owner
        if kind in (EventKind.CLOSED, EventKind.MOVED_IN):
            st.committed = True
            st.check_at = now
        elif kind is EventKind.MODIFIED:
            st.committed = False
            st.changed_at = now
            st.check_at = now + self.quiet
        else:  # CREATED, or seen by a scan
            st.committed = False
            st.changed_at = now
            st.check_at = now
        self.activity(owner)

    def file_deleted(self, path: str, owner: str) -> None:
        self.files.pop(path, None)
        self.activity(owner)
        self._dirty.add(owner)

    def activity(self, key: str) -> None:
        r = self.rounds.get(key)
        if r is not None:
            r.last_activity = self.clock()

    def now_polling(self, poll_interval: float) -> None:
        """The source fell back to polling mid-run: quiet is two polls from now on."""
        self.quiet = max(self.quiet, 2 * poll_interval)

    def round_seen(self, key: str, age: float = 0.0) -> None:
        """A round is tracked from now; *age*: seconds since its last change on disk."""
        if key not in self.rounds:
            self.rounds[key] = RoundState(self.clock() - max(age, 0.0))
        self._dirty.add(key)

    def round_gone(self, key: str) -> None:
        self.rounds.pop(key, None)
        self._dirty.discard(key)
        for path in [p for p, st in self.files.items() if st.owner == key]:
            del self.files[path]

    def round_complete(self, key: str) -> None:
        """round-NN-verified.md or a later round appeared: complete, for good."""
        r = self.rounds.get(key)
        if r is not None and not r.complete:
            r.complete = True
            self._dirty.add(key)

    def mark_dirty(self, key: str) -> None:
        self._dirty.add(key)

    def loss(self) -> None:
        """Events may have been lost: reconcile at the next step."""
        self._rescan_now = True

    # -- questions ------------------------------------------------------------------
    def is_complete(self, key: str) -> bool:
        r = self.rounds.get(key)
        return bool(r and r.complete)

    def has_dirty(self) -> bool:
        """Rounds are waiting to be re-evaluated."""
        return any(k in self.rounds for k in self._dirty)

    def unsettled(self, key: str) -> set[str]:
        """Paths of the files of *key* that have not settled yet."""
        return {p for p, st in self.files.items() if st.owner == key}

    def next_deadline(self) -> float | None:
        times = [st.check_at for st in self.files.values()]
        busy = {st.owner for st in self.files.values()}
        times += [r.last_activity + self.settle for k, r in self.rounds.items()
                  if not r.complete and k not in busy]
        if self._dirty or self._rescan_now:
            times.append(self.clock())
        if self._next_rescan is not None:
            times.append(self._next_rescan)
        return min(times) if times else None

    # -- decisions ------------------------------------------------------------------
    def step(self) -> Step:
        now = self.clock()
        out = Step()
        for path, st in sorted(self.files.items(), key=lambda kv: kv[1].check_at):
            if st.check_at > now:
                continue
            again = self._decide(path, st, now)
            if again is None:
                del self.files[path]
                out.settled.append(path)
                self._dirty.add(st.owner)
            else:
                st.check_at = again
        busy = {st.owner for st in self.files.values()}
        for key, r in self.rounds.items():
            if not r.complete and key not in busy and now - r.last_activity >= self.settle:
                r.complete = True
                self._dirty.add(key)
        out.evaluate = {k for k in self._dirty if k in self.rounds}
        self._dirty = set()
        if self._rescan_now or (self._next_rescan is not None and now >= self._next_rescan):
            out.rescan = True
            self._rescan_now = False
            if self.rescan_every > 0:
                self._next_rescan = now + self.rescan_every
        return out

    def _decide(self, path: str, st: FileState, now: float) -> float | None:
        """None: settled. Otherwise the time to look again."""
        if st.committed:
            return None
        answer = self.probe(path)
        if answer is Probe.WRITER:
            return now + self.reprobe
        quiet_for = now - st.changed_at
        if quiet_for >= self.settle:
            return None  # judged even if its frontmatter never closes
        closed = self.peek(path)
        if answer is Probe.NO_WRITER and closed:
            return None
        if answer is Probe.UNKNOWN and closed and quiet_for >= self.quiet:
            return None
        if answer is Probe.UNKNOWN and closed:
            return st.changed_at + self.quiet
        return min(st.changed_at + self.settle, now + self.reprobe)
