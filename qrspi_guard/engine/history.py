"""config.md as of a round's commit (generations.md §7), from git.

Upstream edits config.md between phases, keeping earlier values in git history. When
a run sits in a git work tree and a round has a well-formed `round-NN-commit.txt`, the
round is judged with config.md as it was at that commit. Git is asked through one
``git rev-parse`` per repository and one ``git cat-file --batch-check`` (the sizes) and
one ``git cat-file --batch`` (the blobs within the file cap) per check, never per round:
a blob over the cap is never read, so a 700 MB config.md at some commit is the
working-tree config.md, never memory exhaustion. Every call runs through
:mod:`qrspi_guard.engine.git`: none of the repository's helper programs runs. Whatever
goes wrong (no git, not a work tree, a rebase under way, a commit or file missing at
that commit, a timeout) means the working-tree config.md, silently.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable

from qrspi_guard.engine import git
from qrspi_guard.parse.capped import FILE_CAP, skip
from qrspi_guard.records import record

#: seconds any one git call may take before the working tree is used instead
GIT_TIMEOUT = 20.0
#: a blob larger than this is not a config.md: the one file cap, and a larger blob's
#: content is never asked for (its size is learnt first), so never read into memory
MAX_BLOB = FILE_CAP


@record(frozen=True)
class Repo:
    top: str  #: the work tree's top level (real path)
    usable: bool  #: False mid-rebase or mid-merge: use the working tree


class ConfigHistory:
    """Blobs of config.md files at commits, fetched in one batch."""

    def __init__(self) -> None:
        self._repos: list[Repo] = []
        self._missing: set[str] = set()  #: directories known to be outside any work tree

    def repo_of(self, directory: str) -> Repo | None:
        """The work tree holding *directory* (one ``git rev-parse`` per repository)."""
        real = os.path.realpath(directory)
        for repo in self._repos:
            if real == repo.top or real.startswith(repo.top + os.sep):
                return repo
        if real in self._missing:
            return None
        found = _rev_parse(real)
        if found is None:
            self._missing.add(real)
        else:
            self._repos.append(found)
        return found

    def blobs(self, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
        """``{(path, sha): bytes}`` for each (file path, commit SHA) that git has;
        absent entries mean: use the working tree."""
        by_repo: dict[str, list[tuple[str, str, str]]] = {}
        for path, sha in wanted:
            repo = self.repo_of(os.path.dirname(path) or ".")
            if repo is None or not repo.usable:
                continue
            rel = os.path.relpath(os.path.realpath(path), repo.top)
            if rel.startswith(os.pardir) or "\n" in rel or "\r" in rel:
                continue
            by_repo.setdefault(repo.top, []).append((path, sha, rel))
        out: dict[tuple[str, str], bytes] = {}
        for top, items in by_repo.items():
            out.update(_cat_file(top, items))
        return out


def _git(top: str, *args: str) -> bytes | None:
    """git's output in *top* (:mod:`qrspi_guard.engine.git`: no helper program runs; no
    repository named by the caller's environment), None on any failure."""
    try:
        got = git.run(args, top, timeout=GIT_TIMEOUT, own_repo=True)
    except git.GitUnavailable:
        return None
    return got.stdout if got.ok else None


def _rev_parse(directory: str) -> Repo | None:
    out = _git(directory, "rev-parse", "--is-inside-work-tree", "--show-toplevel",
               "--absolute-git-dir")
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if len(lines) < 3 or lines[0] != "true":
        return None
    top, git_dir = os.path.realpath(lines[1]), lines[2]
    busy = any(os.path.exists(os.path.join(git_dir, name)) for name in
               ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD"))
    return Repo(top, not busy)


def _cat_file(top: str, items: list[tuple[str, str, str]]) -> dict[tuple[str, str], bytes]:
    """The blobs of every (path, sha, path in repo) of one repository that are within
    :data:`MAX_BLOB`, from one streamed ``git cat-file --batch``: each object's header is
    read first, and the content of one over the cap (or not a blob) is read past in
    bounded chunks, never held. Memory is bounded by the cap, whatever git holds; any
    failure means: use the working tree."""
    import threading

    request = "".join(f"{sha}:{rel}\n" for _, sha, rel in items).encode(
        "utf-8", "surrogateescape")
    try:
        cmd = git.command(["cat-file", "--batch"], top, own_repo=True, timeout=GIT_TIMEOUT)
        if isinstance(cmd, git.GitResult):
            return {}
        proc = subprocess.Popen(list(cmd.argv), cwd=top, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=cmd.env)
    except (OSError, subprocess.SubprocessError, git.GitUnavailable):
        return {}
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:  # a thread: git may fill its stdout before it has read all
        try:
            proc.stdin.write(request)  # type: ignore[union-attr]
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    timer = threading.Timer(GIT_TIMEOUT, proc.kill)
    timer.start()
    got: dict[tuple[str, str], bytes] = {}
    out = proc.stdout
    try:
        for path, sha, _ in items:
            header = out.readline(4096)
            if not header.endswith(b"\n"):
                break  # the end, or a header longer than any git writes
            parts = header[:-1].split(b" ")
            if len(parts) != 3 or not parts[2].isdigit() or len(parts[2]) > 15:
                continue  # `<object> missing` or `ambiguous`: no content follows
            size = int(parts[2])
            if parts[1] == b"blob" and size <= MAX_BLOB:
                content = out.read(size + 1)  # the content, then its newline
                if len(content) != size + 1:
                    break
                got[(path, sha)] = content[:-1]
            elif not skip(out, size + 1):
                break
    except OSError:
        got = {}
    finally:
        timer.cancel()
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        writer.join(1.0)
    return got
