"""Where a diagnostic is shown: an existing file under the source root.

GitHub (annotations, code scanning) can place a result only on a file: a diagnostic
about a directory (a round, a step, an unreadable directory) or about a file that is
not there (a missing config.md) is placed at the first file of that directory, else at
the first file of the nearest directory above it that holds one (name order, hidden
files last; never above the source root), else at the first file below it, and its
message names the original place. Used by the SARIF and the GitHub formats alike.
"""

from __future__ import annotations

import os
import stat
from urllib.parse import quote

from qrspi_guard.output.fingerprint import relative


class Locator:
    """Where a diagnostic's result is placed: an existing file under the source root."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._first: dict[str, str | None] = {}

    def relative(self, path: str) -> str:
        return relative(path, self.root)

    def uri(self, path: str) -> str:
        """A URI reference relative to the source root (raw bytes percent-encoded)."""
        return quote(os.fsencode(self.relative(path)), safe="/-._~")

    def _first_file(self, directory: str) -> str | None:
        got = self._first.get(directory, "")
        if got != "":
            return got
        found: str | None = None
        try:
            with os.scandir(directory) as it:
                names = sorted((e.name.startswith("."), e.name) for e in it
                               if e.is_file(follow_symlinks=False))
            if names:
                found = os.path.join(directory, names[0][1])
        except OSError:
            found = None
        self._first[directory] = found
        return found

    def place(self, path: str) -> tuple[str, bool]:
        """(the file a result for *path* is placed at, whether that is *path* itself)."""
        p = path or "."
        try:
            mode = os.lstat(p).st_mode
        except OSError:
            mode = None
        if mode is not None and (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            return p, True
        directory = p if mode is not None and stat.S_ISDIR(mode) else os.path.dirname(p)
        directory = os.path.abspath(directory or ".")
        root = self.root
        while True:
            if os.path.isdir(directory) and not os.path.islink(directory):
                first = self._first_file(directory)
                if first is not None:
                    return first, False
            parent = os.path.dirname(directory)
            if directory == root or parent == directory or not _inside(parent, root):
                below = self._first_below(os.path.abspath(os.path.dirname(p) if mode is None
                                                          else p))
                return (below, False) if below is not None else (p, False)
            directory = parent

    def _first_below(self, directory: str, depth: int = 6) -> str | None:
        """The first file below *directory* (name order, hidden entries skipped), for a
        place with no file at or above it (a run whose config.md is missing holds only
        ``reviews/``)."""
        if depth < 0:
            return None
        try:
            with os.scandir(directory) as it:
                entries = sorted((e for e in it if not e.name.startswith(".")),
                                 key=lambda e: e.name)
        except OSError:
            return None
        for e in entries:
            if e.is_file(follow_symlinks=False):
                return e.path
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                found = self._first_below(e.path, depth - 1)
                if found is not None:
                    return found
        return None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
