"""``await --round-dir ROUND_DIR``: drain a round's background reviewers (loop.md), the
drop-in for upstream's ``scripts/await-round.sh``.

Three phases. Under the round's lock: read ``.dispatch-manifest.json`` (a JSON array; any
other content is a named error and the file is left as it was), check every entry's tag
against the tag grammar before it is used in a name. Then, for the pending background
entries, their ``await_cmd`` and ``split_cmd`` (:mod:`.commands`) run with the round's
lock released -- a ``split_cmd`` may be ``qrspi-guard split`` into this very round, which
takes that lock -- and the lock on ``.dispatch/`` held instead, so a second drain of the
round waits (bounded) rather than run the commands twice. Last, under the round's lock
again, :mod:`.drain` settles each entry (the fallback split of ``.dispatch/<tag>.raw``
included) and writes the manifest, ``.round-complete.json`` and the status file, in
that order. Nothing here prints: the result is a :class:`~.drain.Report`.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable

from qrspi_guard.contract.layout import TAG_RE
from qrspi_guard.engine.roundlock import LOOP_LOCK_WAIT, flock_within, round_lock
from qrspi_guard.errors import GuardError, InputError, UsageError
from qrspi_guard.loop.commands import ROOTS_ENV, check_command, exec_roots, run_command
from qrspi_guard.loop.drain import (
    COMPLETE,
    DISPATCH,
    MANIFEST,
    Entry,
    Notes,
    Report,
    Splitter,
    finish,
    no_manifest,
    shown_tag,
)
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.frontmatter import MAX_BYTES
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.textsafe import one_line

__all__ = ["COMPLETE", "DEFAULT_TIMEOUT", "MANIFEST", "AwaitUsageError", "DrainBusy",
           "ManifestError", "Report", "Splitter", "await_round"]

#: an entry's commands, in the order they run
COMMANDS = ("await_cmd", "split_cmd")
#: --timeout's default: seconds each manifest command may run
DEFAULT_TIMEOUT = 3600.0
#: how long a second run waits for the round (loop.md: at least 1 s, at most 60)
LOCK_WAIT = LOOP_LOCK_WAIT
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)


class AwaitUsageError(UsageError):
    """Bad arguments: upstream's script exits 1 for them."""

    exit_code = 1


class ManifestError(InputError):
    """``.dispatch-manifest.json`` is not a readable JSON array; it is left as it was."""

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


def read_manifest(round_dir: str) -> tuple[list[object], bytes] | None:
    """The manifest's entries and bytes; None when there is none. Raises
    :class:`ManifestError` (the file untouched) for anything but a JSON array."""
    path = os.path.join(round_dir, MANIFEST)
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ManifestError(f"{MANIFEST} cannot be read: {exc.strerror or exc}") from None
    data = read_bytes(path)  # never follows a link, never blocks on a FIFO
    if isinstance(data, ReadFailure):
        raise ManifestError(f"{MANIFEST} {data.message}; left as it was")
    if len(data) > MAX_BYTES:
        raise ManifestError(f"{MANIFEST} is larger than {MAX_BYTES // (1024 * 1024)} MiB, "
                            "which no dispatch manifest is; left as it was")
    try:  # NaN, 1e400, a duplicate key, deep nesting: named, never written back
        value = jsondoc.loads(data)
    except jsondoc.JsonError as exc:
        raise ManifestError(f"{MANIFEST}: {exc}; left as it was") from None
    if not isinstance(value, list):
        kind = {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
        got = kind.get(type(value), "a number")
        raise ManifestError(f"{MANIFEST} must be a JSON array of entries, not {got}; "
                            "left as it was")
    for index, item in enumerate(value, start=1):
        for kind_ in COMMANDS:
            text = item.get(kind_) if isinstance(item, dict) else None
            if isinstance(text, str) and "\0" in text:
                raise ManifestError(f"{MANIFEST}: entry {index}'s {kind_} holds a NUL byte, "
                                    "which no command line can carry; left as it was")
    return value, data


def entries_of(items: list[object], notes: Notes) -> list[Entry]:
    """Each manifest item as an :class:`Entry`; a tag off the grammar is refused here,
    before any name or glob is built from it."""
    out = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            notes.add(f"entry {index} is not a JSON object; refused")
            out.append(Entry(index, None, None, False, "not a JSON object"))
            continue
        tag = item.get("tag")
        if not (isinstance(tag, str) and TAG_RE.fullmatch(tag)):
            why = "has no tag" if tag is None else \
                f"tag {shown_tag(tag)} does not match the tag grammar ^[a-z0-9][a-z0-9-]*$"
            notes.add(f"entry {index} {why}; refused, marked failed")
            out.append(Entry(index, item, None, False, "tag refused"))
            continue
        run = item.get("mode") == "background" and item.get("status") == "pending"
        out.append(Entry(index, item, tag, run))
    return out


def _lock_dispatch(round_dir: str) -> tuple[int | None, str | None]:
    """``.dispatch/`` (made if missing), opened and locked if free: (fd, None) with the
    lock held, (fd, "busy") when another drain holds it, (None, why) when unusable."""
    path = os.path.join(round_dir, DISPATCH)
    try:
        os.mkdir(path, 0o755)
    except FileExistsError:
        pass
    except OSError as exc:
        return None, f"cannot make {DISPATCH}/: {exc.strerror or exc}"
    try:
        fd = os.open(path, _DIR_FLAGS)
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


def _run_entries(round_dir: str, entries: list[Entry], timeout: float,
                 roots: list[str]) -> None:
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
            checked = check_command(text, kind, cwd, roots, round_dir)
            if checked.refusal is not None:
                entry.failure = checked.refusal
                break
            ran = run_command(checked.argv, kind, cwd, timeout)
            if not ran.ok:
                entry.failure = ran.failure
                entry.rescuable = kind == "split_cmd"  # its capture is complete
                break


def await_round(round_dir: str, *, splitter: Splitter, timeout: float = DEFAULT_TIMEOUT,
                toplevel: Callable[[str], str | None] | None = None,
                say: Callable[[str], None] = lambda line: None,
                lock_wait: float | None = None) -> Report:
    """Drain ROUND_DIR. *splitter* materialises a raw capture (``split``'s core, passed
    in by the command line); *toplevel* finds the git top level whose ``scripts/`` is an
    exec root; *say* gets a line when this run waits for another. Raises
    :class:`~qrspi_guard.errors.GuardError` subclasses for what stops the drain."""
    _check_round_dir(round_dir)
    try:
        return _drain(round_dir, splitter, timeout, toplevel, say,
                      LOCK_WAIT if lock_wait is None else lock_wait)
    except OSError as exc:  # the round directory itself unusable (permissions, I/O)
        raise DrainBusy(f"cannot drain {one_line(round_dir, 200)}: "
                        f"{exc.strerror or exc}") from None


def _drain(round_dir: str, splitter: Splitter, timeout: float,
           toplevel: Callable[[str], str | None] | None, say: Callable[[str], None],
           wait: float) -> Report:
    notes = Notes()
    deadline = time.monotonic() + wait
    shown = one_line(round_dir, 120)  # the wait's line stays within the output bound
    held: int | None = None

    said: list[bool] = []

    def waiting() -> None:
        if not said:  # once, whichever lock this run waits for
            said.append(True)
            say(f"waiting for another run on {shown} to finish (at most {wait:g} s)")

    try:
        while True:
            with round_lock(round_dir, on_wait=waiting, exit_code=1,
                            timeout=max(deadline - time.monotonic(), 1.0)):
                read = read_manifest(round_dir)
                if read is None:
                    return no_manifest(round_dir, notes)
                items, original = read
                entries = entries_of(items, notes)
                if not any(e.run for e in entries):
                    return finish(round_dir, items, original, entries, splitter, notes)
                fd, problem = _lock_dispatch(round_dir)
                if fd is None:
                    for entry in entries:
                        if entry.run:
                            entry.failure = problem
                    return finish(round_dir, items, original, entries, splitter, notes)
                if problem is None:
                    held = fd
                    break
            waiting()
            try:
                _wait_for(fd, deadline, round_dir, wait)
            finally:
                os.close(fd)
        roots = exec_roots(os.environ.get(ROOTS_ENV), (toplevel or _no_top)(round_dir))
        _run_entries(round_dir, entries, timeout, roots)
        with round_lock(round_dir, on_wait=waiting, exit_code=1, timeout=wait):
            return finish(round_dir, items, original, entries, splitter, notes)
    finally:
        if held is not None:
            os.close(held)


def _no_top(round_dir: str) -> str | None:
    return None
