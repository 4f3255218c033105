"""The append-only JSON Lines ledger: locked reads, locked appends, torn-tail handling.

Every write takes an exclusive ``fcntl.flock`` on the ledger file itself, replays it,
lets the caller plan one event against the replayed state, appends that event with a
single ``write``, and ``fsync``s before the lock is released. Readers take a shared
lock so they never see a half-written line from a live writer.

A final line without its newline is a torn write (a crash mid-append). Readers ignore
it and report it; the next writer cuts it off under the lock, before appending, and
reports that. A complete line that is not a valid event is an error naming its line
number, and nothing is written: the ledger is never silently rewritten.

The ledger must be a regular file (cli.md, "Files the guard reads and writes"): it is
opened without blocking (a FIFO or a device never hangs a command) and read only up to
:data:`MAX_LEDGER_BYTES`; anything else is a :class:`LedgerError` (exit 2). An append
that fails part-way (disk full, I/O error, a failed ``fsync``) is cut back to the size
the ledger had before it, under the lock: what is on disk is the old ledger or the new
one, never a half event from a writer that is still running.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from qrspi_guard.errors import InputError
from qrspi_guard.lockout.models import EVENT_ADAPTER, EVENT_TYPES, build_event, event_to_dict
from qrspi_guard.lockout.state import LockoutError, Plan, State, replay
from qrspi_guard.parse import jsondoc
from qrspi_guard.records import field, record

DEFAULT_LEDGER = Path("reviews") / "lockout.jsonl"
ENV_VAR = "QRSPI_GUARD_LEDGER"

#: the largest ledger any command reads (64 MiB: some 200,000 events of ~300 bytes; a
#: run's ledger holds hundreds). Larger is refused, so a wrong path such as /dev/zero or
#: a runaway file never exhausts memory.
MAX_LEDGER_BYTES = 64 * 1024 * 1024

_OPEN_FLAGS = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class LedgerError(InputError):
    """The ledger cannot be read, is corrupt, or cannot be written (exit 2)."""


@record(frozen=True)
class TornTail:
    """A final line with no closing newline."""

    line: int
    size: int


@record
class Snapshot:
    """The parsed ledger: valid events in order, and the torn tail if there is one."""

    events: list[Any] = field(default_factory=list)
    torn: TornTail | None = None
    #: bytes up to and including the last complete line
    good_size: int = 0


@record
class WriteResult:
    """What a write appended (None when the plan appended nothing)."""

    plan: Plan
    event: Any
    #: the torn tail this writer cut off before appending, if any
    dropped: TornTail | None
    before: State
    after: State


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()) if p not in EVENT_TYPES)
    msg = err.get("msg", "invalid")
    return f"{loc}: {msg}" if loc else msg


def parse_line(raw: bytes, lineno: int) -> Any:
    """One complete line -> a validated event; LedgerError naming ``line N`` otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LedgerError(f"line {lineno}: not UTF-8 text") from None
    if not text.strip():
        raise LedgerError(f"line {lineno}: empty line")
    try:
        obj = jsondoc.loads(text)
    except jsondoc.JsonError as exc:
        raise LedgerError(f"line {lineno}: not valid JSON ({exc.reason})") from None
    if not isinstance(obj, dict):
        raise LedgerError(f"line {lineno}: not a JSON object")
    kind = obj.get("event")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        raise LedgerError(f"line {lineno}: unknown event type {_shown(kind)}")
    try:
        event = EVENT_ADAPTER.validate_json(text)  # strict: JSON types only, no coercion
    except ValidationError as exc:
        raise LedgerError(f"line {lineno}: invalid {kind} event: {_first_error(exc)}") from None
    except (RecursionError, ValueError, OverflowError):  # the validator's limits, as above
        raise LedgerError(f"line {lineno}: invalid {kind} event: a value is nested too "
                          "deeply or too large") from None
    if event.seq != lineno:
        raise LedgerError(f"line {lineno}: seq {_shown(event.seq)} out of order "
                          f"(expected {lineno})")
    return event


def _shown(value: object) -> str:
    """A value from a corrupt line, as a short repr (never a 4,000-digit number)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 \
            else "a very large number"
    else:
        text = f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    return text if len(text) <= 80 else text[:79] + "…"


def parse(data: bytes) -> Snapshot:
    """Parse the whole ledger's bytes; a missing final newline marks a torn tail."""
    snap = Snapshot()
    lines = data.split(b"\n")
    tail = lines.pop()  # bytes after the last newline ('' when the file ends cleanly)
    for i, raw in enumerate(lines, start=1):
        snap.events.append(parse_line(raw, i))
    snap.good_size = len(data) - len(tail)
    if tail:
        snap.torn = TornTail(line=len(lines) + 1, size=len(tail))
    return snap


def _read_all(fd: int, path: Path) -> bytes:
    """The whole ledger, at most MAX_LEDGER_BYTES (LedgerError beyond that)."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(1 << 20, MAX_LEDGER_BYTES + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_LEDGER_BYTES:
            raise _too_large(path)


def _too_large(path: Path) -> LedgerError:
    return LedgerError(f"ledger {path} is larger than {MAX_LEDGER_BYTES >> 20} MiB "
                       "(the cap on a ledger); check the path, or archive the ledger")


def _check_regular(fd: int, path: Path) -> None:
    """The ledger must be a regular file within the size cap (cli.md)."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise LedgerError(f"cannot read ledger {path}: {_file_type(st.st_mode)}, not a "
                          "regular file (the ledger must be a regular file)")
    if st.st_size > MAX_LEDGER_BYTES:
        raise _too_large(path)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a file"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


# The append's system calls, by name: the seam the fault-injection tests replace
# (tests/test_lockout_faults.py) to fail or kill the writer at each step.
_ftruncate = os.ftruncate
_fsync = os.fsync


def _describe(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))


class Ledger:
    """One ledger file. Cheap to construct; every operation opens and locks it afresh."""

    def __init__(self, path: str | os.PathLike[str], create_parents: bool = True) -> None:
        self.path = Path(path)
        #: create missing parent directories on the first write (the default ledger
        #: only: a mistyped explicit path must not start an empty ledger elsewhere, and
        #: a read of one whose directory does not exist is an error, never "empty")
        self.create_parents = create_parents

    def _open(self, flags: int, mode: int = 0o644) -> int:
        """The ledger's descriptor. The default ledger sits in a run's `reviews/`, which
        reviewers write into: its directory is opened without following links and the
        file is never a link (:mod:`qrspi_guard.parse.nofollow`); an explicit path is
        the user's own and opened as named."""
        if not self.create_parents:
            return os.open(self.path, flags, mode)
        from qrspi_guard.parse.nofollow import Dir

        with Dir.round_path(str(self.path.parent)) as d:
            return d.open(self.path.name, flags, mode)

    def _require_directory(self) -> None:
        """An explicit ledger path whose directory does not exist is a mistake (exit 2
        for every subcommand), never an empty ledger that allows everyone."""
        parent = self.path.parent
        if self.create_parents or parent.is_dir():
            return
        if os.path.lexists(parent):
            raise LedgerError(f"cannot use ledger directory {parent}: a path component "
                              "exists and is not a directory")
        raise LedgerError(f"ledger directory {parent} does not exist (an explicit "
                          "ledger path is never created; check the path)")

    def read(self) -> Snapshot:
        """Parse the ledger under a shared lock. A missing file is an empty ledger;
        a missing directory of an explicit path is a :class:`LedgerError`."""
        self._require_directory()
        try:
            fd = self._open(os.O_RDONLY | _OPEN_FLAGS)
        except FileNotFoundError:
            if self.create_parents or self.path.parent.is_dir():
                return Snapshot()
            self._require_directory()
            raise
        except OSError as exc:
            raise LedgerError(f"cannot read ledger {self.path}: {_describe(exc)}") from None
        try:
            _check_regular(fd, self.path)
            fcntl.flock(fd, fcntl.LOCK_SH)
            data = _read_all(fd, self.path)
        except OSError as exc:
            raise LedgerError(f"cannot read ledger {self.path}: {_describe(exc)}") from None
        finally:
            os.close(fd)  # closing releases the lock
        return self._parse(data)

    def _parse(self, data: bytes) -> Snapshot:
        try:
            return parse(data)
        except LedgerError as exc:
            raise LedgerError(f"ledger {self.path}: {exc}") from None

    def state(self) -> tuple[State, Snapshot]:
        """Replay the ledger: the derived state and the snapshot it came from."""
        snap = self.read()
        return replay(snap.events), snap

    def write(self, planner: Callable[[State], Plan]) -> WriteResult:
        """Lock, replay, plan, (drop a torn tail,) append, flush, fsync, unlock.

        *planner* sees the replayed state and returns the event to append; if it raises
        :class:`LockoutError`, or the ledger is corrupt, nothing is written.
        """
        parent = self.path.parent
        self._require_directory()
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            pass  # reported just below: something that is not a directory is in the way
        except OSError as exc:
            raise LedgerError(
                f"cannot create ledger directory {parent}: {_describe(exc)}") from None
        if not parent.is_dir():
            raise LedgerError(f"cannot create ledger directory {parent}: a path component "
                              "exists and is not a directory")
        existed = os.path.lexists(self.path)
        try:
            fd = self._open(os.O_RDWR | os.O_CREAT | os.O_APPEND | _OPEN_FLAGS, 0o644)
        except OSError as exc:
            raise LedgerError(f"cannot open ledger {self.path} for writing: "
                              f"{_describe(exc)}") from None
        try:
            _check_regular(fd, self.path)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not existed:
                from qrspi_guard.output.files import sync_dir  # only for a new ledger

                sync_dir(str(parent))  # the new file's directory entry, durable
            snap = self._parse(_read_all(fd, self.path))
            before = replay(snap.events)
            plan = planner(before.copy())
            seq = len(snap.events) + 1
            event = build_event(seq, datetime.now(timezone.utc), plan.fields)
            line = (jsondoc.dumps(event_to_dict(event), ensure_ascii=False,
                               separators=(",", ":")) + "\n").encode("utf-8")
            self._append(fd, snap, line)
        except (LedgerError, LockoutError):
            raise
        except ValidationError as exc:  # a planner bug or a bad argument the plan let by
            raise LockoutError(_first_error(exc)) from None
        except OSError as exc:
            raise LedgerError(f"cannot read ledger {self.path}: {_describe(exc)}") from None
        finally:
            os.close(fd)
        after = before.copy()
        after.apply(event)
        return WriteResult(plan=plan, event=event, dropped=snap.torn, before=before,
                           after=after)


    def _append(self, fd: int, snap: Snapshot, line: bytes) -> None:
        """(Cut the torn tail,) append *line*, fsync; on any failure cut the ledger back
        to its last complete line, so nothing of this event stays behind."""
        try:
            if snap.torn is not None:
                _ftruncate(fd, snap.good_size)
            _write_all(fd, line)
            _fsync(fd)
        except OSError as exc:
            restored = _cut_back(fd, snap.good_size)
            what = ("nothing was recorded" if restored else
                    "the ledger may end in a torn line, which the next write cuts off")
            if restored and snap.torn is not None:
                what += f" (the torn final line {snap.torn.line} was dropped)"
            raise LedgerError(f"cannot write ledger {self.path}: {_describe(exc)}; "
                              f"{what}") from None


def _cut_back(fd: int, size: int) -> bool:
    """Truncate the ledger to *size* bytes and make that durable; False if it fails."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        return False
    return True


def resolve_path(option: str | None, env: dict[str, str] | None = None) -> Path:
    """``--ledger`` beats ``QRSPI_GUARD_LEDGER`` beats ``reviews/lockout.jsonl``."""
    if option:
        return Path(option)
    value = (env if env is not None else os.environ).get(ENV_VAR)
    return Path(value) if value else DEFAULT_LEDGER
