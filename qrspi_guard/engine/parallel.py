"""Forked workers for large trees: results in order, the same with any number of them.

Item *i* goes to worker ``i % n`` (worker 0 is the caller itself). Two pools behind the
one seam (:func:`ordered_map`), chosen by ``QRSPI_GUARD_POOL``:

- ``forked`` (the default): each forked worker sends its results down a pipe in order,
  so the caller yields them as they come;
- ``stdlib``: :class:`concurrent.futures.ProcessPoolExecutor` (fork context), as flake8
  uses it: each worker's share arrives unordered and is put in order afterwards.

Either way a worker that fails has its items done by the caller, so the result is the
serial one; one process (small trees, ``QRSPI_GUARD_JOBS=1``, a threaded caller, no
``fork``) is the serial fallback. The default stays the hand-rolled pool because the
standard library's costs its import (``concurrent.futures.process`` and
``multiprocessing``: 10-25 ms a run): side by side on the benchmark corpora (20,000
files, 2 cores) ``stdlib`` took 1.04-1.10x the time of ``forked``. The rest of the
engine never knows whether it ran in a worker.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: Below this many items stay in one process: forking would not pay.
PARALLEL_MIN_ITEMS = 24


def jobs(items: int) -> int:
    """How many processes share *items* items: ``QRSPI_GUARD_JOBS`` when set, else one
    per core (at most 4) for large trees on a single-threaded caller."""
    env = os.environ.get("QRSPI_GUARD_JOBS", "").strip()
    if env.isdigit() and 1 <= len(env) <= 3 and int(env) >= 1:
        wanted = int(env)
    else:
        if items < PARALLEL_MIN_ITEMS:
            return 1
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
        wanted = min(cores, 4)
    if wanted > 1:
        import threading

        if not hasattr(os, "fork") or threading.active_count() > 1:
            return 1
    return max(1, min(wanted, items))


def ordered_map(func: Callable[[int], T], count: int, encode: Callable[[T], Any],
                decode: Callable[[int, Any], T]) -> Iterator[T]:
    """``func(0), func(1), ...`` in order, shared with forked workers. *encode* turns a
    result into what is sent (picklable), *decode* rebuilds it from item index and that."""
    n = jobs(count)
    if n == 1:
        for i in range(count):
            yield func(i)
        return
    if os.environ.get("QRSPI_GUARD_POOL", "") == "stdlib":
        yield from _stdlib_map(func, count, encode, decode, n)
        return
    workers: list[tuple[int, int] | None] = []
    try:
        for w in range(1, n):
            r, wr = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                _worker(wr, [x[1] for x in workers if x is not None] + [r], func, encode,
                        count, w, n)
            os.close(wr)
            workers.append((pid, r))
        for i in range(count):
            w = i % n
            got = None
            slot = workers[w - 1] if w else None
            if slot is not None:
                got = _receive(slot[1])
                if got is None:  # the worker failed: do its items here
                    _reap(slot)
                    workers[w - 1] = None
            yield func(i) if got is None else decode(i, got[0])
    finally:
        for slot in workers:
            if slot is not None:
                _reap(slot)


def _worker(out: int, close: list[int], func: Callable[[int], Any],
            encode: Callable[[Any], Any], count: int, w: int,
            n: int) -> None:  # pragma: no cover - a child
    code = 0
    try:
        for fd in close:
            os.close(fd)
        try:
            import fcntl

            # a larger pipe lets the worker run ahead of the parent (Linux)
            fcntl.fcntl(out, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
        except (ImportError, OSError):
            pass
        for i in range(w, count, n):
            blob = pickle.dumps((encode(func(i)),), protocol=pickle.HIGHEST_PROTOCOL)
            view = memoryview(len(blob).to_bytes(4, "little") + blob)
            while view:
                view = view[os.write(out, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _receive(fd: int) -> tuple[Any] | None:
    """One result from a worker's pipe, or None when the worker ended early."""
    head = _read_exact(fd, 4)
    if head is None:
        return None
    blob = _read_exact(fd, int.from_bytes(head, "little"))
    if blob is None:
        return None
    return pickle.loads(blob)  # type: ignore[no-any-return]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _reap(slot: tuple[int, int]) -> None:
    pid, fd = slot
    try:
        os.close(fd)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


#: (func, encode) of the running :func:`_stdlib_map`, inherited by its forked workers
#: (a closure cannot be pickled; the fork carries it)
_TASK: tuple[Callable[[int], Any], Callable[[Any], Any]] | None = None


def _share(w: int, n: int, count: int) -> list[tuple[int, Any]]:  # pragma: no cover - child
    """Worker *w*'s items, encoded (in a forked worker of :func:`_stdlib_map`)."""
    assert _TASK is not None
    func, encode = _TASK
    return [(i, encode(func(i))) for i in range(w, count, n)]


def _stdlib_map(func: Callable[[int], T], count: int, encode: Callable[[T], Any],
                decode: Callable[[int, Any], T], n: int) -> Iterator[T]:
    """:func:`ordered_map` on the standard library's process pool: the caller does its
    own share meanwhile, the workers' results are taken as they complete and put in
    order afterwards; a worker's share that fails (a broken pool) is done here."""
    global _TASK
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    got: dict[int, Any] = {}
    mine: dict[int, T] = {}
    _TASK = (func, encode)
    try:
        with ProcessPoolExecutor(max_workers=n - 1,
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_share, w, n, count) for w in range(1, n)]
            for i in range(0, count, n):
                mine[i] = func(i)
            for future in as_completed(futures):
                try:
                    got.update(future.result())
                except Exception:  # noqa: BLE001 - the caller does that share itself
                    continue
    finally:
        _TASK = None
    for i in range(count):
        if i in mine:
            yield mine.pop(i)
        elif i in got:
            yield decode(i, got.pop(i))
        else:
            yield func(i)
