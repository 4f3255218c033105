"""What watch writes: status files, status lines, the ``--events`` file.

- A round's status file is written atomically (temp, fsync, rename: the old file or the
  new one, never half). A write that fails (disk full, read-only directory, anything)
  is kept as *unwritten* and retried at every tick and rescan until it succeeds; the
  failure is said once on stderr and as a ``watch-fault`` line in ``--events``, and the
  round's status line still goes out, so nobody is told ``ok`` by the guard while the
  round halts. The file on disk meanwhile keeps its old content, and stderr says so.
- Status lines and ``--events`` lines go to :class:`LineSink` values: streams that may
  be pipes or devices (cli.md). A write failure there is said once on stderr, and once
  more when writing works again; the watcher keeps running.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from collections.abc import Callable
from datetime import datetime, timezone
from functools import partial
from typing import Any

from qrspi_guard import voice
from qrspi_guard.engine import RoundResult
from qrspi_guard.output.files import TEMP_PREFIX, TEMP_SUFFIX
from qrspi_guard.output.status import render, status_document, without_timestamp, write_atomic
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.capped import Refused, read_regular
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import plural
from qrspi_guard.watch.lines import text_line

#: schema of the lines that report the guard's own faults in ``--events``
FAULT_SCHEMA = "qrspi-guard/watch-fault/1"
#: the largest previous status file read at start-up (a status file is a few KiB)
MAX_STATUS_BYTES = 1 << 20

#: the events file (the path as named, as it is appended to): its last byte is read
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_CLOEXEC", 0)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
    return str(exc) or type(exc).__name__


def read_previous(path: str) -> dict[str, Any] | None:
    """The status file left by an earlier run, or None. Never blocks (a FIFO or a device
    in its place is "no previous status") and reads at most MAX_STATUS_BYTES."""
    try:  # beside the round: its step directory is never reached through a link
        with Dir.round_path(os.path.dirname(path) or os.curdir) as d:
            data, _ = read_regular(os.path.basename(path), MAX_STATUS_BYTES, follow=False,
                                   dir_fd=d.fd)
    except (OSError, Refused):
        return None
    try:
        doc = jsondoc.loads(data)
    except jsondoc.JsonError:
        return None
    return doc if isinstance(doc, dict) else None


#: how old one of status.write_atomic's temp names (output.files' TEMP_PREFIX and
#: TEMP_SUFFIX) must be to count as left behind by a writer that was killed (a live
#: writer renames its temp file within milliseconds)
STALE_TEMP_AGE = 60.0


def sweep_stale_temps(step_dir: str, now: float) -> list[str]:
    """Remove status temp files older than STALE_TEMP_AGE from *step_dir* (left by a
    killed writer: the status file beside them is the old one, whole). Returns the
    names removed; failures are ignored (the next start tries again)."""
    removed = []
    try:  # relative to the step's descriptor: never through a link swapped in meanwhile
        with Dir.round_path(step_dir) as d:
            for name in d.listdir():
                if not (name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)):
                    continue
                try:
                    st = d.lstat(name)
                    if stat.S_ISREG(st.st_mode) and now - st.st_mtime >= STALE_TEMP_AGE:
                        d.unlink(name)
                        removed.append(name)
                except OSError:
                    continue
    except OSError:
        pass
    return sorted(removed)


class _Partial(Exception):
    """A line was not written in full (*done* bytes of it were)."""

    def __init__(self, done: int) -> None:
        super().__init__(done)
        self.done = done


class LineSink:
    """Lines to a file descriptor that may be a regular file, a pipe or a device.

    Each line is written whole with plain ``write`` calls; a regular file that takes only
    part of a line (disk full) is cut back to its old size. A stream (a pipe, a
    terminal, a device; stdout, or a FIFO given as ``--events``, opened without
    blocking so that one with no reader never blocks start-up) is waited on for at most
    *timeout* seconds per line; a line cut short then is ended by a newline before the
    next one, so a reader sees one broken line, never two lines run together. A failure
    is said once on *err*; when writing works again, that is said once too, with the
    number of lines lost.
    """

    def __init__(self, name: str, err: Callable[[str], None], fd: int | None = None, *,
                 path: str | None = None, timeout: float = 5.0,
                 fault: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.name = name  #: how messages name the sink ("standard output", "events file X")
        self.err = err
        self.fd = fd
        self.path = path  #: (re)opened on demand when set (a FIFO waiting for its reader)
        self.timeout = timeout
        self.failing: str | None = None  #: the error of the current failure, if any
        self.lost = 0  #: lines lost since the failure began
        self.torn = False  #: the last line was cut short: start the next on a new line
        self.failures = 0  #: failure episodes so far (for tests)

    def open(self) -> None:
        """Open :attr:`path` for appending, without blocking. Raises OSError when it
        cannot be opened at all; a FIFO with no reader yet (ENXIO) is a failure that is
        said once and retried at every line."""
        assert self.path is not None
        try:
            self.fd = os.open(self.path, _APPEND_FLAGS, 0o644)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            self._failed("the FIFO has no reader yet")
            self.lost = 0
            return
        st = os.fstat(self.fd)
        if stat.S_ISREG(st.st_mode) and st.st_size > 0 and self._ends_torn():
            self.torn = True
            self.err(voice.line("watch", f"{self.name} ends in a torn line (an interrupted "
                          "write); the next event starts on a new line"))

    def _ends_torn(self) -> bool:
        assert self.path is not None
        try:
            fd = os.open(self.path, _READ_FLAGS)
        except OSError:
            return False
        try:
            size = os.fstat(fd).st_size
            return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        except OSError:
            return False
        finally:
            os.close(fd)

    def write(self, line: str) -> bool:
        """Write *line* and a newline; False (said once) when it could not be."""
        if self.fd is None and self.path is not None:
            try:
                self.fd = os.open(self.path, _APPEND_FLAGS, 0o644)
            except OSError as exc:
                return self._failed(_why(exc) if exc.errno != errno.ENXIO
                                    else "the FIFO has no reader yet")
        if self.fd is None:
            return self._failed("not open")
        prefix = 1 if self.torn else 0
        data = ("\n" * prefix + line + "\n").encode("utf-8", "backslashreplace")
        size = self._regular_size()
        try:
            self._write_all(data, stream=size is None)
        except _Partial as part:
            if part.done and size is not None and self._cut_back(size):
                pass  # a regular file: back to its old bytes, nothing of this line stays
            else:
                self.torn = part.done > prefix or (self.torn and part.done == 0)
            cause = part.__cause__
            if isinstance(cause, OSError) and cause.errno == errno.EPIPE \
                    and self.path is not None:
                self.close()  # the FIFO's reader went away: reopen at the next line
            why = _why(cause) if cause is not None else \
                f"the reader took nothing for {self.timeout:g} s"
            return self._failed(why)
        self.torn = False
        if self.failing is not None:
            self.err(voice.line("watch", f"{self.name}: writing again "
                          f"({plural(self.lost, 'line')} lost)"))
            self.failing = None
            self.lost = 0
        return True

    def _regular_size(self) -> int | None:
        """The size of a regular file before a line is appended (None: a stream)."""
        assert self.fd is not None
        try:
            st = os.fstat(self.fd)
        except OSError:
            return None
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def _cut_back(self, size: int) -> bool:
        assert self.fd is not None
        try:
            os.ftruncate(self.fd, size)
        except OSError:
            return False
        return True

    def _write_all(self, data: bytes, stream: bool) -> None:
        """Write all of *data*; :class:`_Partial` (with the bytes written) otherwise.

        A regular file takes it in one go. A stream (pipe, terminal, device) gets it in
        pieces of at most PIPE_BUF bytes, each only once ``poll`` says the descriptor
        can take it, all within :attr:`timeout` seconds: a write to a pipe nobody reads
        never blocks the guard for longer, even on a blocking descriptor (stdout)."""
        assert self.fd is not None
        view = memoryview(data)
        done = 0
        deadline = time.monotonic() + self.timeout
        piece = _PIPE_BUF if stream else len(data)
        while done < len(data):
            if stream and not _wait_writable(self.fd, deadline - time.monotonic()):
                raise _Partial(done) from None
            try:
                n = os.write(self.fd, view[done:done + piece])
            except BlockingIOError:
                if not stream:  # pragma: no cover - a regular file never says EAGAIN
                    raise _Partial(done) from None
                continue
            except OSError as exc:
                raise _Partial(done) from exc
            done += n

    def _failed(self, why: str) -> bool:
        self.lost += 1
        if self.failing is None:
            self.failing = why
            self.failures += 1
            self.err(voice.warning_line("watch", f"cannot write to {self.name}: "
                                  f"{one_line(why)}; going on without it (said once)"))
        return False

    def close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


_PIPE_BUF = getattr(select, "PIPE_BUF", 512)


def _wait_writable(fd: int, timeout: float) -> bool:
    """True when *fd* can take PIPE_BUF bytes now or within *timeout* seconds (also when
    it is in error or closed: the write that follows then says why)."""
    if timeout <= 0:
        timeout = 0.0
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return bool(poller.poll(int(timeout * 1000)))
    except (OSError, ValueError):
        return True


@record
class RoundOutput:
    """What has been written and shown for one round."""

    status_path: str | None  #: None: a round that never gets a status file (§8)
    round_dir: str
    last_core: dict[str, Any] | None = None  #: the status file on disk, minus the timestamp
    last_shown: tuple[str, tuple[str, ...]] | None = None  #: (status, halts) last printed
    writes: int = 0
    unwritten: dict[str, Any] | None = None  #: the document still to write (a write failed)
    #: the quiet time (--settle) that completed the round, when nothing else did
    quiet: float | None = None


def _halt_key(d: dict[str, Any]) -> str:
    return f"{d.get('cause')}:{d.get('file') or d.get('tag') or ''}:{d.get('line') or ''}"


class Publisher:
    """Status files, status lines and events for every round.

    *write* is the status-file writer (:func:`qrspi_guard.output.status.write_atomic`; tests
    inject faults through it). *critical* wraps each write so a stop signal waits until
    the write is done (a status file is whole, an events line is whole).
    """

    def __init__(self, out: Callable[[str], object], err: Callable[[str], None], fmt: str,
                 events: LineSink | None,
                 write: Callable[[str, bytes], None] = write_atomic,
                 critical: Callable[[], Any] | None = None) -> None:
        self.out = out
        self.err = err
        self.fmt = fmt
        self.events = events
        self.write = write
        self.critical = critical
        self.status_writes = 0
        self.unwritten: dict[str, RoundOutput] = {}  #: status path -> round with a failed write

    def _guarded(self, fn: Callable[[], Any]) -> Any:
        if self.critical is None:
            return fn()
        with self.critical():
            return fn()

    # -- status files -----------------------------------------------------------------
    def publish(self, o: RoundOutput, result: RoundResult) -> None:
        """Write the round's status file if its content changed, then report a change
        of status (or of the set of halts) in ``--events`` and on stdout.

        All three are one unit a stop signal waits for, so every change a status file
        shows is also reported; the line sinks bound how long a stream that nobody
        reads can hold it up (:attr:`LineSink.timeout`)."""
        self._guarded(lambda: self._publish(o, result))

    def _publish(self, o: RoundOutput, result: RoundResult) -> None:
        doc = status_document(result)
        core = without_timestamp(doc)
        if o.status_path is None:  # pseudo-rounds and round-NN-<suffix>/: shown, not written
            o.last_core = core
        elif core != o.last_core:
            o.unwritten = doc
            self._write(o)
        elif o.unwritten is not None:  # the disk already says this: nothing to retry
            self._written(o, quiet=False)
        shown = (doc["status"], tuple(sorted(_halt_key(h) for h in doc["halts"])))
        if shown != o.last_shown:
            previous = o.last_shown[0] if o.last_shown else None
            o.last_shown = shown
            line_json, line_text = self._lines(o, doc, previous)
            self._event(line_json)
            self.out(line_json if self.fmt == "json" else line_text)

    def retry(self) -> None:
        """Try every status file whose last write failed once more."""
        for o in list(self.unwritten.values()):
            self._guarded(partial(self._write, o))

    def has_unwritten(self) -> bool:
        return bool(self.unwritten)

    def forget(self, o: RoundOutput) -> None:
        """The round is gone: stop retrying its status file."""
        if o.status_path is not None:
            self.unwritten.pop(o.status_path, None)

    def _write(self, o: RoundOutput) -> None:
        doc, path = o.unwritten, o.status_path
        if doc is None or path is None:
            return
        try:
            self.write(path, render(doc))
        except OSError as exc:
            self._write_failed(o, path, doc, _why(exc))
            return
        o.last_core = without_timestamp(doc)
        o.writes += 1
        self.status_writes += 1
        self._written(o, quiet=False)

    def _write_failed(self, o: RoundOutput, path: str, doc: dict[str, Any], why: str) -> None:
        first = path not in self.unwritten
        self.unwritten[path] = o
        if not first:
            return
        was = (o.last_core or {}).get("status")
        stale = (f"it still says {was}" if was else "it does not exist yet") + \
            f" while the round is {doc['status']}"
        self.err(voice.warning_line("watch", f"cannot write {one_line(o.status_path)}: "
                              f"{one_line(why)}; {stale}; retrying until it can be written"))
        self._fault("status_write_failed", o, doc["status"], error=why, on_disk=was)

    def _written(self, o: RoundOutput, quiet: bool) -> None:
        o.unwritten = None
        if (o.status_path is not None and self.unwritten.pop(o.status_path, None) is not None
                and not quiet):
            status = (o.last_core or {}).get("status")
            self.err(voice.line("watch", f"{one_line(o.status_path)} is current again "
                          f"(status {status})"))
            self._fault("status_write_recovered", o, status)

    # -- lines ------------------------------------------------------------------------
    def _lines(self, o: RoundOutput, doc: dict[str, Any],
               previous: str | None) -> tuple[str, str]:
        """A status change as its JSON line and its text line."""
        event = dict(doc)
        event["previous"] = previous
        event["round_dir"] = o.round_dir
        event["status_file"] = o.status_path
        line_json = jsondoc.dumps(event, ensure_ascii=True, separators=(",", ":"))
        return line_json, text_line(o.round_dir, doc, o.quiet)

    def _fault(self, fault: str, o: RoundOutput, status: str | None, **extra: Any) -> None:
        line = {"schema": FAULT_SCHEMA, "fault": fault,
                "at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "round_dir": o.round_dir, "status_file": o.status_path, "status": status}
        line.update(extra)
        self._event(jsondoc.dumps(line, ensure_ascii=True, separators=(",", ":")))

    def _event(self, line: str) -> None:
        events = self.events
        if events is not None:
            self._guarded(lambda: events.write(line))
