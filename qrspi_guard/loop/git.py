"""git for the loop commands: the questions ``prepare``, ``review-prep`` and ``await``
ask, each one call of :func:`qrspi_guard.engine.git.run` (no shell, none of the
repository's helper programs, git's own bytes; a failure is data the caller names,
never swallowed).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from qrspi_guard.engine.git import GitResult, GitUnavailable, run

__all__ = ["GitResult", "GitUnavailable", "inside_work_tree", "resolve_commit", "run_git",
           "toplevel"]


def run_git(args: Sequence[str], cwd: str, stdin: bytes | None = None,
            timeout: float = 600.0) -> GitResult:
    """``git ARGS`` in *cwd*, the caller's repository environment kept (a ``GIT_DIR``
    the user set), every helper program off. Raises :class:`GitUnavailable` when git
    cannot start; any exit status is data."""
    return run(args, cwd, stdin, timeout)


def toplevel(cwd: str) -> tuple[str, str] | None:
    """(the work tree's top directory, the repository's git directory) holding *cwd*,
    or None outside a work tree."""
    got = run_git(["rev-parse", "--show-toplevel", "--absolute-git-dir"], cwd)
    if not got.ok:
        return None
    lines = got.stdout.split(b"\n")
    if len(lines) < 2 or not lines[0] or not lines[1]:
        return None
    return os.fsdecode(lines[0]), os.fsdecode(lines[1])


def inside_work_tree(cwd: str) -> bool | GitResult:
    """True inside a git work tree; False outside any repository (or in a ``.git``
    directory or a bare repository); git's failure otherwise (a repository git refuses,
    such as one of dubious ownership, is not "outside": its failure is named)."""
    got = run_git(["rev-parse", "--is-inside-work-tree"], cwd)
    if got.ok:
        return got.stdout.strip() == b"true"
    if got.returncode == 128 and b"not a git repository" in got.stderr:
        return False
    return got


def resolve_commit(ref: str, cwd: str) -> str | None | GitResult:
    """The commit *ref* names (its full SHA); None when it names no commit (unknown,
    or HEAD~1 of a root commit); git's failure otherwise. *ref* must not begin with
    ``-`` (the callers refuse such values before any git runs)."""
    got = run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    if got.ok:
        return os.fsdecode(got.stdout.strip()) or None
    if got.returncode == 1 and not got.stderr.strip():
        return None
    return got
