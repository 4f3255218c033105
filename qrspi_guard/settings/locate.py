"""Where a project configuration file may be: the directories searched from a judged
path upward to its repository root, and the candidate files present there. A light
module: a path with no candidate file is answered without reading or parsing anything
(most hook calls)."""

from __future__ import annotations

import os

OWN_FILE = ".qrspi-guard.toml"
PYPROJECT = "pyproject.toml"


def _git_root_at(directory: str) -> bool:
    return os.path.lexists(os.path.join(directory, ".git"))


def candidates(start: str) -> list[str]:
    """The directories searched, nearest first: *start* and each parent up to the git
    root (inclusive), or up to the filesystem root outside git."""
    d = os.path.abspath(start)
    out = []
    while True:
        out.append(d)
        if _git_root_at(d):
            return out
        parent = os.path.dirname(d)
        if parent == d:
            return out
        d = parent


def present(start: str) -> list[str]:
    """The candidate files that exist from *start* upward, nearest first (in one
    directory ``.qrspi-guard.toml`` before ``pyproject.toml``)."""
    out = []
    for directory in candidates(start):
        for name in (OWN_FILE, PYPROJECT):
            path = os.path.join(directory, name)
            if os.path.lexists(path):
                out.append(path)
    return out
