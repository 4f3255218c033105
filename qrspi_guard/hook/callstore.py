"""Where a pre-tool-use call leaves its record for the post-tool-use call of the same
tool call (docs/hook.md, "Shell commands").

Records live in the hook's private directory for them
(:func:`qrspi_guard.hook.private.root`): ``$XDG_RUNTIME_DIR/qrspi-guard-hook-calls/``
when ``XDG_RUNTIME_DIR`` is the user's own, else ``qrspi-guard-hook-calls-<uid>/`` in
the temporary directory.
Each agent session has a directory of its own in it, named for a digest of the
session; each record is a file named for a digest of the call's pairing key. Every
directory is private as :mod:`~qrspi_guard.hook.private` makes it; every file is
opened through its directory's descriptor, without following links, created
``0600``, written to a temporary name
and renamed into place (old or new, never half). A record is taken once: the post
call renames it to a name of its own before reading it, so two concurrent post calls
cannot both use it; then it is removed.

Bounded: a record is at most :data:`MAX_RECORD_BYTES`; a session keeps at most
:data:`MAX_RECORDS` records and :data:`MAX_SESSION_BYTES` (the oldest go first); at
most :data:`MAX_SESSIONS` sessions are kept; anything older than
:data:`STALE_SECONDS` (a pre call whose post call never came: a call refused by
the user or another hook, an agent killed) is removed when a record is next written.
A failure anywhere is silent (False, None): the post call then judges only what the
command names or visibly writes.
"""

from __future__ import annotations

import os
import stat
import time

from qrspi_guard.hook import private

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import TypeVar

    T = TypeVar("T")

#: a record left longer than this is stale: its call never came back
STALE_SECONDS = 3 * 3600
#: the largest record kept
MAX_RECORD_BYTES = 1 << 20
#: per session: at most this many records, and this many bytes of them
MAX_RECORDS = 64
MAX_SESSION_BYTES = 8 << 20
#: at most this many sessions' directories
MAX_SESSIONS = 32
#: a temporary or claimed file older than this was left by a process that died
_LEFT_SECONDS = 60
_FILE_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


#: the purpose of the records' private directory (:func:`private.root`)
PURPOSE = "hook-calls"


def root() -> str:
    """The directory every session's records are under."""
    return private.root(PURPOSE)


def digest(text: str) -> str:
    """A short digest of *text* (a file name, a check that a record is the call's)."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - CPython builds it in
        from hashlib import blake2b
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def put(session: str, key: str, data: bytes) -> bool:
    """Keep *data* for *key* in *session*; whether it was kept."""
    if len(data) > MAX_RECORD_BYTES:
        return False

    def keep(session_fd: int) -> bool:
        _prune_records(session_fd)
        return _write(session_fd, digest(key) + ".rec", data)

    return _in_session(session, True, keep) is True


def take(session: str, key: str) -> bytes | None:
    """The data kept for *key* in *session*, removed; None when there is none (or it
    is stale, too large, or not a file of the user's)."""
    return _in_session(session, False, lambda fd: _claim(fd, digest(key) + ".rec"))


def _in_session(session: str, create: bool, use: Callable[[int], T]) -> T | None:
    """*use* (the session's directory, as a descriptor) with the root and the session's
    directory open, made first when *create* (a new session prunes the old ones); None
    when either is not the user's own, or a system call fails."""
    try:
        root_fd = private.open_dir(root(), None, create)
        if root_fd is None:
            return None
        try:
            name = digest(session)
            new = create and not _exists(name, root_fd)
            session_fd = private.open_dir(name, root_fd, create)
            if session_fd is None:
                return None
            try:
                if new:
                    _prune_sessions(root_fd, keep=name)
                return use(session_fd)
            finally:
                os.close(session_fd)
        finally:
            os.close(root_fd)
    except (OSError, NotImplementedError):
        return None


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _write(dir_fd: int, name: str, data: bytes) -> bool:
    temp = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS, 0o600,
                 dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        os.close(fd)
        private.unlink(temp, dir_fd)
        return False
    os.close(fd)
    os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return True


def _claim(dir_fd: int, name: str) -> bytes | None:
    claimed = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.claimed"
    try:
        os.rename(name, claimed, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    try:
        fd = os.open(claimed, os.O_RDONLY | os.O_NONBLOCK | _FILE_FLAGS, dir_fd=dir_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() \
                    or st.st_size > MAX_RECORD_BYTES \
                    or time.time() - st.st_mtime > STALE_SECONDS:
                return None
            chunks: list[bytes] = []
            size = 0
            while size <= MAX_RECORD_BYTES:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
                size += len(chunk)
            return None
        finally:
            os.close(fd)
    finally:
        private.unlink(claimed, dir_fd)


def _prune_records(dir_fd: int) -> None:
    """Stale and leftover files removed; then the oldest records past the bounds."""
    now = time.time()
    records = []
    for mtime, size, name, is_dir in private.listing(dir_fd, 4 * MAX_RECORDS):
        age = now - mtime
        if is_dir:
            continue
        if age > STALE_SECONDS or (not name.endswith(".rec") and age > _LEFT_SECONDS):
            private.unlink(name, dir_fd)
        elif name.endswith(".rec"):
            records.append((mtime, size, name))
    total = 0
    for count, (_, size, name) in enumerate(sorted(records, reverse=True), 1):
        total += size
        if count >= MAX_RECORDS or total > MAX_SESSION_BYTES:
            private.unlink(name, dir_fd)


def _prune_sessions(root_fd: int, keep: str) -> None:
    """Sessions stale or past :data:`MAX_SESSIONS` (the oldest) removed, with their
    records."""
    now = time.time()
    sessions = sorted(((mtime, name) for mtime, _, name, is_dir
                       in private.listing(root_fd, 4 * MAX_SESSIONS) if is_dir and name != keep),
                      reverse=True)
    for count, (mtime, name) in enumerate(sessions, 2):
        if count > MAX_SESSIONS or now - mtime > STALE_SECONDS:
            try:
                fd = private.open_dir(name, root_fd, False)
            except OSError:
                continue
            if fd is None:
                continue
            try:
                for _, _, entry, _ in private.listing(fd, 4 * MAX_RECORDS):
                    private.unlink(entry, fd)
            finally:
                os.close(fd)
            try:
                os.rmdir(name, dir_fd=root_fd)
            except OSError:
                pass
