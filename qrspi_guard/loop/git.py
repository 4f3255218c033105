"""git, run without a shell: the only external program ``prepare`` and ``review-prep``
may run (loop.md). Output is git's own bytes (no shell substitution drops trailing
newlines or NULs); a failure is data the caller names, never swallowed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from qrspi_guard.errors import GuardError
from qrspi_guard.records import record

#: the most of git's standard output kept (a diff larger than this is refused, named)
STDOUT_CAP = 256 * 1024 * 1024
#: the most of git's standard error kept for a message
STDERR_CAP = 8 * 1024


@record(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self) -> str:
        """git's own first stderr line (escaped by the caller), or the exit status."""
        for line in self.stderr.decode("utf-8", "replace").splitlines():
            if line.strip():
                return line.strip()
        return f"git exited {self.returncode}"


class GitUnavailable(GuardError):
    """git itself cannot be started (not installed, not executable)."""


def run_git(args: Sequence[str], cwd: str, stdin: bytes | None = None,
            timeout: float = 600.0) -> GitResult:
    """``git ARGS`` in *cwd*, no shell, no pager, no prompts, the user's config kept.
    Raises :class:`GitUnavailable` when git cannot start; any exit status is data."""
    env = dict(os.environ)
    env.update(GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True,
                              env=env, timeout=timeout, check=False)
    except FileNotFoundError as exc:
        raise GitUnavailable(f"git cannot be run: {exc.strerror}") from None
    except PermissionError as exc:
        raise GitUnavailable(f"git cannot be run: {exc.strerror}") from None
    except subprocess.TimeoutExpired:
        return GitResult(124, b"", f"git {args[0] if args else ''} timed out".encode())
    out = proc.stdout
    if len(out) > STDOUT_CAP:
        return GitResult(125, b"", b"git output over the size cap")
    return GitResult(proc.returncode, out, proc.stderr[:STDERR_CAP])


def toplevel(cwd: str) -> str | None:
    """The work tree's top directory holding *cwd*, or None outside a work tree."""
    got = run_git(["rev-parse", "--show-toplevel"], cwd)
    if not got.ok:
        return None
    top = os.fsdecode(got.stdout.rstrip(b"\n"))
    return top or None


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
