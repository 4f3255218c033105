"""``await --round-dir ROUND_DIR``: drain a round's background reviewers (loop.md), the
drop-in for upstream's ``scripts/await-round.sh``.

The round is opened once (its ``reviews/``-and-below components without following a
link: a step or round directory that is a link is refused, never written through), and
every read and write of the drain is relative to that descriptor.

Three phases. Under the round's lock: read ``.dispatch-manifest.json``
(:mod:`.manifest`: a JSON array; any other content is a named error and the file is
left as it was), check every entry's tag against the tag grammar before it is used in a
name. Then, for the pending background entries, their ``await_cmd`` and ``split_cmd``
(:mod:`.commands`) run with the round's lock released -- a ``split_cmd`` may be
``qrspi-guard split`` into this very round, which takes that lock -- and the lock on
``.dispatch/`` held instead, so a second drain of the round waits (bounded) rather than
run the commands twice. The exec roots are fixed once, before the first command: the
caller's ``QRSPI_AWAIT_EXEC_ROOTS`` and the ``scripts/`` of the repository ``await`` was
started in, asked from the working directory (never from a place reviewers write, and
never a repository whose work tree or git directory lies there). Last, under the round's
lock again, :mod:`.drain` settles each entry (the fallback split of
``.dispatch/<tag>.raw`` included) and writes the manifest (re-read and merged),
``.round-complete.json`` and the status file, in that order. Nothing here prints: the
result is a :class:`~.drain.Report`.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from qrspi_guard.engine.roundlock import LOOP_LOCK_WAIT, flock_within, round_lock
from qrspi_guard.errors import GuardError, UsageError
from qrspi_guard.loop.commands import (
    ROOTS_ENV,
    Writable,
    check_command,
    exec_roots,
    reviewer_writable,
    run_command,
    writable_holding,
)
from qrspi_guard.loop.drain import COMPLETE, DISPATCH, Notes, Report, Splitter, finish, no_manifest
from qrspi_guard.loop.manifest import (
    COMMANDS,
    MANIFEST,
    Entry,
    ManifestError,
    entries_of,
    read_manifest,
)
from qrspi_guard.parse.nofollow import DIR_FLAGS, Dir
from qrspi_guard.textsafe import one_line

__all__ = ["COMPLETE", "DEFAULT_TIMEOUT", "MANIFEST", "AwaitUsageError", "DrainBusy",
           "ManifestError", "Report", "Splitter", "TopLevel", "await_round"]

#: --timeout's default: seconds each manifest command may run
DEFAULT_TIMEOUT = 3600.0
#: how long a second run waits for the round (loop.md: at least 1 s, at most 60)
LOCK_WAIT = LOOP_LOCK_WAIT
#: asked once with the working directory: (its git top level, its git directory) or None
TopLevel = Callable[[str], "tuple[str, str] | None"]


class AwaitUsageError(UsageError):
    """Bad arguments: upstream's script exits 1 for them."""

    exit_code = 1


class DrainBusy(GuardError):
    """The round cannot be drained now: another drain kept running its commands past
    the wait, or the directory itself cannot be used."""

    exit_code = 1


def _check_round_dir(round_dir: str) -> None:
    shown = one_line(round_dir, 200)
    try:
        st = os.stat(round_dir)
    except OSError as exc:
        raise AwaitUsageError(f"--round-dir does not exist or cannot be used: {shown} "
                              f"({exc.strerror or exc})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise AwaitUsageError(f"--round-dir is not a directory: {shown}")


def _lock_dispatch(round_dir: Dir) -> tuple[int | None, str | None]:
    """``.dispatch/`` (made if missing), opened and locked if free: (fd, None) with the
    lock held, (fd, "busy") when another drain holds it, (None, why) when unusable."""
    try:
        round_dir.mkdir(DISPATCH, 0o755)
    except FileExistsError:
        pass
    except OSError as exc:
        return None, f"cannot make {DISPATCH}/: {exc.strerror or exc}"
    try:
        fd = os.open(DISPATCH, DIR_FLAGS, dir_fd=round_dir.fd)
    except OSError as exc:
        why = "not a directory" if exc.errno in (errno.ENOTDIR, errno.ELOOP) else \
            (exc.strerror or str(exc))
        return None, f"cannot use {DISPATCH}/: {why}"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return fd, "busy"
    return fd, None


def _wait_for(fd: int, deadline: float, round_dir: str, waited: float) -> None:
    if not flock_within(fd, deadline):
        raise DrainBusy(f"another await is draining {one_line(round_dir, 200)} (the lock "
                        f"on its {DISPATCH}/ is held; waited {waited:g} s)")


def repository_scripts(toplevel: TopLevel | None, writable: tuple[Writable, ...],
                       notes: Notes) -> str | None:
    """The top level of the repository ``await`` was started in, whose ``scripts/`` is
    an exec root: asked once, from the working directory, and only when neither that
    directory nor the repository found (its work tree, its git directory) lies in a
    place reviewers write (each refusal said in *notes*)."""
    if toplevel is None:
        return None
    here = os.path.realpath(os.getcwd())
    place = writable_holding(here, writable)
    if place is not None:
        notes.add(f"the working directory is inside {place.label}, which reviewers write: "
                  "git is not asked there, so no <git top level>/scripts exec root")
        return None
    found = toplevel(here)
    if found is None:
        return None
    for what, path in zip(("work tree", "git directory (a .git entry)"), found, strict=True):
        place = writable_holding(os.path.realpath(path), writable)
        if place is not None:
            notes.add(f"the repository found from the working directory has its {what} "
                      f"inside {place.label}, which reviewers write: refused, so no "
                      "<git top level>/scripts exec root")
            return None
    return found[0]


def _run_entries(round_dir: str, entries: list[Entry], timeout: float, roots: list[str],
                 writable: tuple[Writable, ...]) -> None:
    """Each pending background entry's ``await_cmd`` then ``split_cmd``; a refusal or a
    failure marks the entry failed (``Entry.failure``) and skips what follows."""
    cwd = os.path.join(round_dir, DISPATCH)
    for entry in entries:
        if not entry.run:
            continue
        assert entry.data is not None
        for kind in COMMANDS:
            text = entry.data.get(kind)
            if kind == "split_cmd" and not text:
                break  # no split_cmd: the fallback split or the files decide
            if not text:
                entry.failure = f"{kind} is missing"
                break
            checked = check_command(text, kind, cwd, roots, writable)
            if checked.refusal is not None:
                entry.failure = checked.refusal
                break
            ran = run_command(checked.argv, kind, cwd, timeout)
            if not ran.ok:
                entry.failure = ran.failure
                entry.rescuable = kind == "split_cmd"  # its capture is complete
                break


def await_round(round_dir: str, *, splitter: Splitter, timeout: float = DEFAULT_TIMEOUT,
                toplevel: TopLevel | None = None,
                say: Callable[[str], None] = lambda line: None,
                lock_wait: float | None = None) -> Report:
    """Drain ROUND_DIR. *splitter* materialises a raw capture (``split``'s core, passed
    in by the command line); *toplevel* finds the git top level (and git directory) of
    the working directory, whose ``scripts/`` is an exec root; *say* gets a line when
    this run waits for another. Raises :class:`~qrspi_guard.errors.GuardError`
    subclasses for what stops the drain."""
    _check_round_dir(round_dir)
    try:
        with Dir.round_path(round_dir) as opened:
            return _drain(opened, splitter, timeout, toplevel, say,
                          LOCK_WAIT if lock_wait is None else lock_wait)
    except OSError as exc:  # the round directory itself unusable (a link, permissions)
        raise DrainBusy(f"cannot drain {one_line(round_dir, 200)}: "
                        f"{exc.strerror or exc}") from None


def _drain(rdir: Dir, splitter: Splitter, timeout: float, toplevel: TopLevel | None,
           say: Callable[[str], None], wait: float) -> Report:
    notes = Notes()
    round_dir = rdir.path
    deadline = time.monotonic() + wait
    shown = one_line(round_dir, 120)  # the wait's line stays within the output bound
    held: int | None = None

    said: list[bool] = []

    def waiting() -> None:
        if not said:  # once, whichever lock this run waits for
            said.append(True)
            say(f"waiting for another run on {shown} to finish (at most {wait:g} s)")

    def locked(seconds: float) -> AbstractContextManager[int]:
        return round_lock(round_dir, on_wait=waiting, exit_code=1, timeout=seconds,
                          dir_fd=rdir.fd)

    try:
        while True:
            with locked(max(deadline - time.monotonic(), 1.0)):
                read = read_manifest(rdir)
                if read is None:
                    return no_manifest(rdir, notes)
                refused: list[str] = []
                entries = entries_of(read.items, refused)
                for line in refused:
                    notes.add(line)
                if not any(e.run for e in entries):
                    return finish(rdir, read, entries, splitter, notes)
                fd, problem = _lock_dispatch(rdir)
                if fd is None:
                    for entry in entries:
                        if entry.run:
                            entry.failure = problem
                    return finish(rdir, read, entries, splitter, notes)
                if problem is None:
                    held = fd
                    break
            waiting()
            try:
                _wait_for(fd, deadline, round_dir, wait)
            finally:
                os.close(fd)
        writable = reviewer_writable(round_dir)
        roots = exec_roots(os.environ.get(ROOTS_ENV),
                           repository_scripts(toplevel, writable, notes))
        _run_entries(round_dir, entries, timeout, roots, writable)
        with locked(wait):
            return finish(rdir, read, entries, splitter, notes)
    finally:
        if held is not None:
            os.close(held)
