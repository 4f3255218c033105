"""The files beside a round directory (`round-NN-verified.md`, `-commit.txt`, ...).

One listing of a step directory tells which side files each of its rounds has; a
:class:`SideFiles` with ``cache=True`` lists each step directory once (one ``check``
run; ``watch``, which :meth:`SideFiles.forget` s a step directory when it sees it
change, so judging N rounds of a step lists it once, not N times), without it every
time.
"""

from __future__ import annotations

import os

from qrspi_guard.contract.layout import round_side_file, side_file_name
from qrspi_guard.parse.nofollow import open_round_dir
from qrspi_guard.parse.reader import ReadFailure, read_bytes


class SideFiles:
    def __init__(self, cache: bool = False) -> None:
        self.cache = cache
        self._listed: dict[str, dict[int, frozenset[str]]] = {}

    def beside(self, step_dir: str, round_no: int | None) -> frozenset[str]:
        """Suffixes of the files beside round *round_no* (`-verified.md`, `.diff`, ...)."""
        if round_no is None:
            return frozenset()
        listed = self._listed.get(step_dir) if self.cache else None
        if listed is None:
            listed = _list(step_dir)
            if self.cache:
                self._listed[step_dir] = listed
        return listed.get(round_no, frozenset())

    def forget(self, step_dir: str | None = None) -> None:
        """Drop the cached listing of *step_dir* (of every step directory: None)."""
        if step_dir is None:
            self._listed.clear()
            return
        norm = os.path.normpath(step_dir)
        for key in [k for k in self._listed if os.path.normpath(k) == norm]:
            del self._listed[key]

    def read(self, step_dir: str, round_no: int, suffix: str) -> bytes | ReadFailure:
        """A side file's bytes: a regular file, opened without blocking, size-capped,
        relative to the step directory opened without following links (a step swapped
        for a link cannot lend a round another run's verified totals or waiver)."""
        try:
            dir_fd = open_round_dir(step_dir or os.curdir)
        except OSError as exc:
            return ReadFailure(f"cannot be read: {exc.strerror or exc}")
        try:
            return read_bytes(side_file_name(round_no, suffix), dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    @staticmethod
    def path(step_dir: str, round_no: int, suffix: str) -> str:
        name = side_file_name(round_no, suffix)
        return name if step_dir in ("", ".") else os.path.join(step_dir, name)


def _list(step_dir: str) -> dict[int, frozenset[str]]:
    found: dict[int, set[str]] = {}
    try:
        names = os.listdir(step_dir)
    except OSError:
        return {}
    for name in names:
        side = round_side_file(name)
        if side is not None:
            found.setdefault(side[0], set()).add(side[1])
    return {n: frozenset(s) for n, s in found.items()}
