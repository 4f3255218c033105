"""Finding review rounds below any path (round-contract §1, cli.md `check` PATH).

Walks directories with ``os.scandir`` and never follows symbolic links. Yields round
references and the layout diagnostics met on the way (`bad_round_dir_name`,
`legacy_layout`); everything that is not a review round is skipped silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from qrspi_guard.diagnostics import Diagnostic, diag
from qrspi_guard.layout import (
    SKIPPED_DIRS,
    STEPS,
    TASK_DIR_RE,
    TASKS_DIR,
    is_legacy_round_file,
    looks_like_round_dir,
    round_number,
    round_side_file,
)

REVIEWS = "reviews"
_PRUNE = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                    ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


@dataclass(frozen=True)
class RoundRef:
    """A round directory and where it sits."""

    round_dir: str  #: display path of the round directory
    step_dir: str  #: display path of the directory holding it
    step: str | None  #: `design`, `integration`, `task-03`, ...
    round: int
    is_task: bool
    artifact_dir: str | None  #: the directory holding `reviews/`, when there is one


Found = RoundRef | Diagnostic


def _dirs_and_files(path: str) -> tuple[list[os.DirEntry[str]], list[os.DirEntry[str]]]:
    dirs, files = [], []
    try:
        with os.scandir(path) as it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        dirs.append(entry)
                    else:
                        files.append(entry)
                except OSError:
                    continue
    except OSError:
        return [], []
    dirs.sort(key=lambda e: e.name)
    files.sort(key=lambda e: e.name)
    return dirs, files


def _parent(path: str) -> str:
    """The parent directory of a display path (`..` stays correct: `../..`)."""
    return os.path.normpath(os.path.join(path, os.pardir))


def _join(base: str, name: str) -> str:
    return name if base in ("", ".") else os.path.join(base, name)


def _links(files: list[os.DirEntry[str]], base: str, wanted: Callable[[str], bool], what: str,
           step: str | None = None) -> Iterator[Diagnostic]:
    """A symbolic link standing where a round, step or reviews directory would be is
    never followed, and never skipped silently (a gate must not pass around it)."""
    for entry in files:
        if wanted(entry.name) and entry.is_symlink():
            yield diag("symlink_in_round_dir", f"{what} {entry.name!r} is a symbolic link; "
                       "not followed", path=_join(base, entry.name), step=step)


def scan_step(step_dir: str, step: str, is_task: bool, artifact_dir: str | None) -> Iterator[Found]:
    """Rounds of one step (or task) directory."""
    dirs, files = _dirs_and_files(step_dir)
    yield from _links(files, step_dir, looks_like_round_dir, "round directory", step)
    for entry in dirs:
        if not looks_like_round_dir(entry.name):
            continue
        n = round_number(entry.name)
        path = _join(step_dir, entry.name)
        if n is None:
            yield diag("bad_round_dir_name", f"directory {entry.name!r} is not round-NN "
                       "(two or more digits, >= 01)", path=path, step=step)
            continue
        yield RoundRef(path, step_dir, step, n, is_task, artifact_dir)
    legacy = [e.name for e in files if is_legacy_round_file(e.name)]
    if legacy:
        yield diag("legacy_layout", f"older single-file round layout ({len(legacy)} file(s) "
                   f"such as {legacy[0]}); skipped", path=_join(step_dir, legacy[0]), step=step)


def scan_reviews(reviews_dir: str) -> Iterator[Found]:
    """Every round below one `reviews/` directory."""
    artifact_dir = _parent(reviews_dir)
    dirs, files = _dirs_and_files(reviews_dir)
    yield from _links(files, reviews_dir, lambda n: n in STEPS or n == TASKS_DIR,
                      "step directory")
    for entry in dirs:
        path = _join(reviews_dir, entry.name)
        if entry.name in STEPS:
            yield from scan_step(path, entry.name, False, artifact_dir)
        elif entry.name == TASKS_DIR:
            yield from scan_tasks(path, artifact_dir)
        elif entry.name in SKIPPED_DIRS or entry.name.startswith("."):
            continue
        elif _has_rounds(path):
            yield diag("legacy_layout", f"non-canonical step directory {entry.name!r}; skipped",
                       path=path)
    for entry in files:
        if entry.name.endswith("-review.md") and entry.name[:-len("-review.md")] in STEPS:
            yield diag("legacy_layout", f"older single-file review {entry.name!r}; skipped",
                       path=_join(reviews_dir, entry.name))


def scan_tasks(tasks_dir: str, artifact_dir: str | None) -> Iterator[Found]:
    dirs, files = _dirs_and_files(tasks_dir)
    yield from _links(files, tasks_dir, lambda n: bool(TASK_DIR_RE.fullmatch(n)),
                      "task directory")
    for entry in dirs:
        if TASK_DIR_RE.fullmatch(entry.name):
            yield from scan_step(_join(tasks_dir, entry.name), entry.name, True, artifact_dir)


def _has_rounds(path: str) -> bool:
    dirs, files = _dirs_and_files(path)
    return any(looks_like_round_dir(e.name) for e in dirs) or any(
        round_side_file(e.name) for e in files)


def _reviews_position(path: str) -> tuple[str, list[str]] | None:
    """(reviews dir as a display path, parts below it) when *path* is inside `reviews/`."""
    parts = os.path.abspath(path).split(os.sep)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == REVIEWS:
            below = parts[i + 1:]
            reviews = os.path.normpath(os.path.join(path, *([os.pardir] * len(below))))
            return reviews, below
    return None


def round_of_dir(path: str, step_override: str | None = None) -> RoundRef | None:
    """The round a `round-NN` directory is, wherever it sits (bare fixtures included)."""
    norm = os.path.normpath(path)
    absolute = os.path.abspath(norm)
    n = round_number(os.path.basename(absolute))
    if n is None:
        return None
    step_abs = os.path.dirname(absolute)
    step_name = os.path.basename(step_abs)
    is_task = (bool(TASK_DIR_RE.fullmatch(step_name))
               and os.path.basename(os.path.dirname(step_abs)) == TASKS_DIR)
    up_to_reviews = 3 if is_task else 2
    reviews_abs = os.path.abspath(os.path.join(absolute, *[os.pardir] * up_to_reviews))
    artifact_dir = None
    if os.path.basename(reviews_abs) == REVIEWS:
        artifact_dir = os.path.normpath(os.path.join(norm, *[os.pardir] * (up_to_reviews + 1)))
    step: str | None = step_name if (is_task or step_name in STEPS) else None
    return RoundRef(norm, _parent(norm), step_override or step, n, is_task, artifact_dir)


def discover_dir(path: str) -> Iterator[Found]:
    """Every round at or below directory *path*."""
    ref = round_of_dir(path)
    if ref is not None:
        yield ref
        return
    pos = _reviews_position(path)
    if pos is not None:
        reviews, below = pos
        artifact_dir = _parent(reviews)
        if not below:
            yield from scan_reviews(path)
        elif len(below) == 1 and below[0] in STEPS:
            yield from scan_step(path, below[0], False, artifact_dir)
        elif below == [TASKS_DIR]:
            yield from scan_tasks(path, artifact_dir)
        elif len(below) == 2 and below[0] == TASKS_DIR and TASK_DIR_RE.fullmatch(below[1]):
            yield from scan_step(path, below[1], True, artifact_dir)
        return
    yield from _walk(path)


def _walk(path: str) -> Iterator[Found]:
    dirs, files = _dirs_and_files(path)
    yield from _links(files, path, lambda n: n == REVIEWS, "reviews directory")
    for entry in dirs:
        if entry.name in _PRUNE or entry.name.startswith("."):
            continue
        sub = _join(path, entry.name)
        if entry.name == REVIEWS:
            yield from scan_reviews(sub)
        else:
            yield from _walk(sub)


def round_of_file(path: str, step_override: str | None = None) -> RoundRef | None:
    """The round a file belongs to: inside a round directory, or beside it
    (`round-03-verified.md` belongs to `round-03/`)."""
    parent = os.path.dirname(os.path.normpath(path)) or "."
    ref = round_of_dir(parent, step_override)
    if ref is not None:
        return ref
    side = round_side_file(os.path.basename(path))
    if side is not None:
        candidate = _join(parent, f"round-{side[0]:02d}")
        if os.path.isdir(candidate):
            return round_of_dir(candidate, step_override)
    return None
