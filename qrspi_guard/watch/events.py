"""The seam over watchdog: file-system notifications in, plain events out.

Everything above this module sees only :class:`FsEvent` values taken from an
:class:`EventSource`: a file closed after writing, a file created, modified, moved into
place or deleted, a directory created or deleted, and "events may have been lost"
(rescan). :class:`WatchdogSource` is the real source (inotify, or watchdog's polling
observer); :class:`ScriptedSource` replays a script for tests.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any, Protocol

from qrspi_guard.records import record


class EventKind(Enum):
    CLOSED = "closed"  #: closed after writing (inotify IN_CLOSE_WRITE): the commit signal
    MOVED_IN = "moved_in"  #: renamed into place inside the tree: complete by construction
    CREATED = "created"  #: appeared (also: moved in from outside the tree)
    MODIFIED = "modified"  #: written to; not a commit signal
    DELETED = "deleted"  #: removed, or renamed away
    DIR_CREATED = "dir_created"  #: a directory appeared (scan it: its events may be missed)
    DIR_DELETED = "dir_deleted"
    LOSS = "loss"  #: events may have been lost: reconcile with the disk
    MODE = "mode"  #: the source fell back to polling (detail: why); reconcile with the disk
    STOP = "stop"  #: stop the loop (signals)


@record(frozen=True)
class FsEvent:
    kind: EventKind
    path: str = ""
    detail: str = ""


class EventSource(Protocol):
    """What the loop needs from an event source."""

    mode: str  #: "inotify", "polling" or "scripted"
    note: str | None  #: why the mode differs from the one asked for, if it does

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def get(self, timeout: float | None) -> list[FsEvent]:
        """Wait up to *timeout* seconds (None: forever) for events; return all queued."""
        ...

    def put(self, event: FsEvent) -> None:
        """Inject an event (the signal handler's STOP; safe from a signal handler)."""
        ...


class _Queue:
    """A thread-safe event queue whose ``put`` is safe from signal handlers."""

    def __init__(self) -> None:
        self._q: queue.SimpleQueue[FsEvent] = queue.SimpleQueue()

    def put(self, event: FsEvent) -> None:
        self._q.put(event)

    def get(self, timeout: float | None) -> list[FsEvent]:
        try:
            first = self._q.get(timeout=None if timeout is None else max(timeout, 0.0))
        except queue.Empty:
            return []
        out = [first]
        while True:
            try:
                out.append(self._q.get_nowait())
            except queue.Empty:
                return out


class ScriptedSource:
    """A fake source for tests: events are queued by hand, nothing touches the OS."""

    mode = "scripted"
    note: str | None = None

    def __init__(self, events: Iterable[FsEvent] = ()) -> None:
        self._q = _Queue()
        self.started = False
        self.stopped = False
        for e in events:
            self._q.put(e)

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def get(self, timeout: float | None) -> list[FsEvent]:
        return self._q.get(timeout)

    def put(self, event: FsEvent) -> None:
        self._q.put(event)


#: errno values meaning "out of inotify watches (ENOSPC) or instances (EMFILE)"
INOTIFY_LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE})


def limit_note(code: int, path: str | bytes | None) -> str:
    """What the fallback says: which inotify limit, for which directory when known."""
    what = "watches" if code == errno.ENOSPC else "instances"
    where = f" for {os.fsdecode(path)}" if path else ""
    return f"out of inotify {what} ({os.strerror(code)}){where}; falling back to polling"


def _event_filter() -> list[type]:
    from watchdog.events import (
        DirCreatedEvent,
        DirDeletedEvent,
        DirMovedEvent,
        FileClosedEvent,
        FileCreatedEvent,
        FileDeletedEvent,
        FileModifiedEvent,
        FileMovedEvent,
    )

    # Not IN_OPEN / IN_CLOSE_NOWRITE: the guard's own reads would echo back as events.
    return [FileCreatedEvent, FileModifiedEvent, FileClosedEvent, FileDeletedEvent,
            FileMovedEvent, DirCreatedEvent, DirDeletedEvent, DirMovedEvent]


def translate(event: object) -> list[FsEvent]:
    """A watchdog event as plain events (a move is "source gone, destination in")."""
    etype = getattr(event, "event_type", "")
    is_dir = bool(getattr(event, "is_directory", False))
    src = os.fsdecode(getattr(event, "src_path", "") or "")
    dest = os.fsdecode(getattr(event, "dest_path", "") or "")
    if is_dir:
        if etype == "created":
            return [FsEvent(EventKind.DIR_CREATED, src)]
        if etype == "deleted":
            return [FsEvent(EventKind.DIR_DELETED, src)]
        if etype == "moved":
            out = [FsEvent(EventKind.DIR_DELETED, src)] if src else []
            return out + ([FsEvent(EventKind.DIR_CREATED, dest)] if dest else [])
        return []
    if etype == "closed":
        return [FsEvent(EventKind.CLOSED, src)]
    if etype == "created":
        return [FsEvent(EventKind.CREATED, src)]
    if etype == "modified":
        return [FsEvent(EventKind.MODIFIED, src)]
    if etype == "deleted":
        return [FsEvent(EventKind.DELETED, src)]
    if etype == "moved":
        out = [FsEvent(EventKind.DELETED, src)] if src else []
        return out + ([FsEvent(EventKind.MOVED_IN, dest)] if dest else [])
    return []


class _LossLog(logging.Handler):
    """watchdog rebuilds its watches after an inotify queue overflow and only logs it;
    its warnings are turned into a LOSS event so the loop reconciles with the disk."""

    def __init__(self, q: _Queue) -> None:
        super().__init__(logging.WARNING)
        self._q = q

    def emit(self, record: logging.LogRecord) -> None:
        self._q.put(FsEvent(EventKind.LOSS, "", record.getMessage()[:200]))


#: inotify_add_watch(fd, path, mask) -> watch descriptor, or -1 with ctypes' errno set
AddWatch = Callable[[int, bytes, int], int]


class WatchdogSource:
    """watchdog's inotify observer over ROOT (recursive), or its polling observer.

    When inotify runs out of watches or instances (``OSError`` ENOSPC / EMFILE while
    scheduling or starting), the source falls back to polling and says why in
    :attr:`note`. watchdog itself swallows a failed watch on a directory below ROOT
    (at start, or for a directory created later): that directory would go unwatched
    until the next rescan while the mode still said inotify. So every
    ``inotify_add_watch`` goes through :meth:`_add_watch` (*add_watch* replaces the real
    call: the seam where tests inject ENOSPC); on ENOSPC or EMFILE the whole tree falls
    back to polling (at once during :meth:`start`; from the loop's next :meth:`get`
    later, which then returns a :attr:`EventKind.MODE` event saying why, so the loop
    reports it and reconciles with the disk, catching what went unseen meanwhile).
    """

    def __init__(self, root: str, polling: bool = False, poll_interval: float = 0.5,
                 add_watch: AddWatch | None = None) -> None:
        self.root = root
        self.mode = "polling" if polling else "inotify"
        self.note: str | None = None
        self.poll_interval = poll_interval
        self._q = _Queue()
        self._observer: object | None = None
        self._loss_log = _LossLog(self._q)
        self._loggers = [logging.getLogger("watchdog.observers.inotify"),
                         logging.getLogger("watchdog.observers.inotify_c")]
        self._add_watch_real = add_watch
        self._limit: str | None = None  #: why a watch could not be added (once hit)
        self._patched: tuple[Any, Any] | None = None  #: (module, its inotify_add_watch)

    def _add_watch(self, fd: int, path: bytes, mask: int) -> int:
        """watchdog's ``inotify_add_watch``, noting when the kernel's limit is reached
        (called from watchdog's threads: it only records, :meth:`get` acts)."""
        import ctypes

        assert self._add_watch_real is not None
        wd = self._add_watch_real(fd, path, mask)
        if wd == -1:
            code = ctypes.get_errno()
            if code in INOTIFY_LIMIT_ERRNOS and self._limit is None:
                self._limit = limit_note(code, os.fsdecode(path))
                self._q.put(FsEvent(EventKind.MODE, os.fsdecode(path), self._limit))
        return wd

    def _patch(self) -> None:
        """Route watchdog's inotify_add_watch through :meth:`_add_watch`."""
        from watchdog.observers import inotify_c

        real = inotify_c.inotify_add_watch
        if self._add_watch_real is None:
            self._add_watch_real = real
        inotify_c.inotify_add_watch = self._add_watch  # type: ignore[assignment]
        self._patched = (inotify_c, real)

    def _unpatch(self) -> None:
        if self._patched is not None:
            module, real = self._patched
            if module.inotify_add_watch == self._add_watch:
                module.inotify_add_watch = real
            self._patched = None

    def _handler(self) -> object:
        from watchdog.events import FileSystemEventHandler

        q = self._q

        class _Handler(FileSystemEventHandler):
            def dispatch(self, event: object) -> None:
                for e in translate(event):
                    q.put(e)

        return _Handler()

    def _start(self, polling: bool) -> None:
        from watchdog.observers import Observer
        from watchdog.observers.polling import PollingObserver

        observer = PollingObserver(timeout=self.poll_interval) if polling else Observer()
        try:
            observer.schedule(self._handler(), self.root, recursive=True,  # type: ignore[arg-type]
                              event_filter=_event_filter())
            observer.start()
        except BaseException:
            try:
                observer.stop()
            except Exception:  # pragma: no cover - best effort
                pass
            raise
        self._observer = observer

    def start(self) -> None:
        for lg in self._loggers:
            lg.addHandler(self._loss_log)
        if self.mode == "polling":
            self._start(True)
            return
        self._patch()
        try:
            self._start(False)
        except Exception as exc:
            # watchdog < 7.1 swallows a failed watch below ROOT and 7.1 raises it here,
            # each in its own words: the seam's record names the directory whichever way
            # it surfaced; the exception alone speaks only when no watch failed
            # (inotify_init itself out of instances)
            code = getattr(exc, "errno", None)
            if self._limit is None:
                if code not in INOTIFY_LIMIT_ERRNOS:
                    raise
                self._limit = limit_note(code, getattr(exc, "filename", None))
        if self._limit is not None:  # fall back now, said once in the note
            self.note = self._limit
            self._fall_back()
            self._drain_mode()

    def _fall_back(self) -> None:
        """Polling for the whole tree, from now on."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()  # type: ignore[attr-defined]
            observer.join(timeout=5)  # type: ignore[attr-defined]
        self._unpatch()
        self.mode = "polling"
        self._start(True)

    def _drain_mode(self) -> None:
        """Drop MODE events already handled by :meth:`start` (the note says it)."""
        kept = [e for e in self._q.get(0) if e.kind is not EventKind.MODE]
        for e in kept:
            self._q.put(e)

    def stop(self) -> None:
        self._unpatch()
        for lg in self._loggers:
            lg.removeHandler(self._loss_log)
        observer = self._observer
        self._observer = None
        if observer is not None:
            observer.stop()  # type: ignore[attr-defined]
            if observer is not threading.current_thread():
                observer.join(timeout=5)  # type: ignore[attr-defined]

    def get(self, timeout: float | None) -> list[FsEvent]:
        events = self._q.get(timeout)
        if self.mode == "inotify" and any(e.kind is EventKind.MODE for e in events):
            self.note = self._limit
            self._fall_back()  # here, in the loop's thread: never in watchdog's own
        return events

    def put(self, event: FsEvent) -> None:
        self._q.put(event)
