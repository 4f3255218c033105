"""Finding review rounds below any path (round-contract §1, generations.md §8, cli.md).

Walks directories with ``os.scandir``, iteratively (any depth), never following a
symbolic link. Yields round references and the layout diagnostics met on the way
(`bad_round_dir_name`, `legacy_layout`, `unknown_step_dir`, `unreadable_dir`);
everything else that is not a review round is skipped silently.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.layout import (
    CLAIMED_KINDS,
    SKIPPED_DIRS,
    STEPS,
    TASK_DIR_RE,
    TASKS_DIR,
    RoundKind,
    RoundRef,
    classify,
    is_legacy_round_file,
    looks_like_round_dir,
    round_number,
    round_side_file,
    suffixed_round_number,
)
from qrspi_guard.records import replace

REVIEWS = "reviews"
_PRUNE = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                    ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


Found = RoundRef | Diagnostic


class _Unreadable:
    """A directory listing that failed."""

    def __init__(self, error: OSError) -> None:
        self.error = error


def _listing(path: str) -> tuple[list[os.DirEntry[str]], list[os.DirEntry[str]]] | _Unreadable:
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
    except OSError as exc:
        return _Unreadable(exc)
    dirs.sort(key=lambda e: e.name)
    files.sort(key=lambda e: e.name)
    return dirs, files


def unreadable(path: str, error: OSError, in_reviews: bool,
               step: str | None = None) -> Diagnostic:
    """`unreadable_dir`: an error inside a `reviews/` tree, a warning elsewhere."""
    reason = error.strerror or type(error).__name__
    return diag("unreadable_dir", f"directory cannot be listed ({reason}); its contents "
                "were not checked", path=path or ".", step=step,
                level="error" if in_reviews else "warning")


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


def scan_step(step_dir: str, step: str, is_task: bool, artifact_dir: str | None,
              kind: RoundKind | None = None) -> Iterator[Found]:
    """Rounds of one step (or task) directory."""
    listed = _listing(step_dir)
    if isinstance(listed, _Unreadable):
        yield unreadable(step_dir, listed.error, True, step)
        return
    dirs, files = listed
    round_kind: RoundKind = kind or ("task" if is_task else "step")
    yield from _links(files, step_dir, looks_like_round_dir, "round directory", step)
    spelled = _round_spellings(dirs)
    for entry in dirs:
        if not looks_like_round_dir(entry.name):
            continue
        n = round_number(entry.name)
        path = _join(step_dir, entry.name)
        if n is not None and spelled[n] != entry.name:
            # round-01 and round-001 are both round 1: they would share round-01-guard.json
            # and every file beside it, so the shortest spelling is the round, the other
            # a directory named wrongly (README: decisions where the spec is silent)
            yield diag("bad_round_dir_name", f"directory {entry.name!r} names round {n}, "
                       f"which {spelled[n]!r} already is: two directories for one round",
                       path=path, step=step)
            continue
        if n is None:
            prefix = suffixed_round_number(entry.name)
            if prefix is not None:  # round-05-fanout/: its files are still judged
                yield RoundRef(path, step_dir, step, prefix, is_task, artifact_dir,
                               "suffixed")
                continue
            yield diag("bad_round_dir_name", f"directory {entry.name!r} is not round-NN "
                       "(two or more digits, >= 01)", path=path, step=step)
            continue
        yield RoundRef(path, step_dir, step, n, is_task, artifact_dir, round_kind)
    legacy = [e.name for e in files if is_legacy_round_file(e.name)]
    if legacy:
        yield diag("legacy_layout", f"older single-file round layout ({len(legacy)} file(s) "
                   f"such as {legacy[0]}); skipped", path=_join(step_dir, legacy[0]), step=step)


def _round_spellings(dirs: list[os.DirEntry[str]]) -> dict[int, str]:
    """Round number -> the shortest name of the step's directories for it (`round-01`
    before `round-001`; the canonical `round-NN` whenever it is there)."""
    out: dict[int, str] = {}
    for entry in dirs:
        n = round_number(entry.name)
        if n is not None and (n not in out or len(entry.name) < len(out[n])):
            out[n] = entry.name
    return out


def scan_reviews(reviews_dir: str) -> Iterator[Found]:
    """Every round below one `reviews/` directory."""
    artifact_dir = _parent(reviews_dir)
    listed = _listing(reviews_dir)
    if isinstance(listed, _Unreadable):
        yield unreadable(reviews_dir, listed.error, True)
        return
    dirs, files = listed
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
        else:
            yield from _unknown_step(path, entry.name, artifact_dir)
    for entry in files:
        if entry.name.endswith("-review.md") and entry.name[:-len("-review.md")] in STEPS:
            yield diag("legacy_layout", f"older single-file review {entry.name!r}; skipped",
                       path=_join(reviews_dir, entry.name))


def _unknown_step(path: str, name: str, artifact_dir: str | None) -> Iterator[Found]:
    """A step directory of unknown name: judged like task rounds when it holds `round-NN/`
    directories (`unknown_step_dir`), `legacy_layout` when it holds single-file rounds."""
    listed = _listing(path)
    if isinstance(listed, _Unreadable):
        yield unreadable(path, listed.error, True)
        return
    dirs, files = listed
    if any(round_number(e.name) is not None for e in dirs):
        yield diag("unknown_step_dir", f"step directory {name!r} is not a known step; its "
                   "rounds are judged like task rounds (per-file and tag rules, no matrix)",
                   path=path, step=name)
        yield from scan_step(path, name, False, artifact_dir, "unknown_step")
    elif any(looks_like_round_dir(e.name) for e in dirs) or any(
            round_side_file(e.name) for e in files):
        yield diag("legacy_layout", f"non-canonical step directory {name!r}; skipped",
                   path=path)


def scan_tasks(tasks_dir: str, artifact_dir: str | None) -> Iterator[Found]:
    listed = _listing(tasks_dir)
    if isinstance(listed, _Unreadable):
        yield unreadable(tasks_dir, listed.error, True)
        return
    dirs, files = listed
    yield from _links(files, tasks_dir, lambda n: bool(TASK_DIR_RE.fullmatch(n)),
                      "task directory")
    for entry in dirs:
        if TASK_DIR_RE.fullmatch(entry.name):
            yield from scan_step(_join(tasks_dir, entry.name), entry.name, True, artifact_dir)


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
    name = os.path.basename(absolute)
    n = round_number(name)
    kind: RoundKind | None = None
    if n is None:
        n = suffixed_round_number(name)
        if n is None:
            return None
        kind = "suffixed"
    step_abs = os.path.dirname(absolute)
    step_name = os.path.basename(step_abs)
    is_task = (bool(TASK_DIR_RE.fullmatch(step_name))
               and os.path.basename(os.path.dirname(step_abs)) == TASKS_DIR)
    up_to_reviews = 3 if is_task else 2
    reviews_abs = os.path.abspath(os.path.join(absolute, *[os.pardir] * up_to_reviews))
    artifact_dir = None
    if os.path.basename(reviews_abs) == REVIEWS:
        artifact_dir = os.path.normpath(os.path.join(norm, *[os.pardir] * (up_to_reviews + 1)))
    if is_task:
        kind = kind or "task"
        step: str | None = step_name
    elif step_name in STEPS:
        kind = kind or "step"
        step = step_name
    elif artifact_dir is not None and step_name not in SKIPPED_DIRS:
        kind = kind or "unknown_step"
        step = step_name
    else:  # a bare round-NN directory outside any reviews/ tree (a fixture)
        kind = kind or "step"
        step = None
    if step_override:
        step = step_override
    return RoundRef(norm, _parent(norm), step, n, is_task, artifact_dir, kind)


def holds_reviewer_output(path: str) -> bool:
    """Whether a directory directly holds findings, clean sentinels or sidecars (or files
    named like them, however badly)."""
    try:
        with os.scandir(path) as it:
            return any(classify(e.name).kind in CLAIMED_KINDS for e in it)
    except OSError:
        return False


def pseudo_round(path: str, step: str | None, round_no: int | None) -> RoundRef:
    """A directory named on the command line that holds reviewer output but is not
    named `round-NN` (generations.md §8): round `--round N`, else from its findings."""
    norm = os.path.normpath(path)
    return RoundRef(norm, _parent(norm), step, round_no, False, None, "pseudo")


def discover_dir(path: str, in_reviews: bool | None = None) -> Iterator[Found]:
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
        elif len(below) == 1 and below[0] not in SKIPPED_DIRS:
            yield from _unknown_step(path, below[0], artifact_dir)
        return
    yield from _walk(path)


def _walk(root: str) -> Iterator[Found]:
    """Depth-first over *root* in name order, iteratively: a tree nested thousands of
    directories deep is walked like any other (no recursion limit)."""
    stack: list[Iterator[tuple[bool, str]]] = [iter([(False, root)])]
    while stack:
        task = next(stack[-1], None)
        if task is None:
            stack.pop()
            continue
        is_reviews, path = task
        if is_reviews:
            yield from scan_reviews(path)
            continue
        listed = _listing(path)
        if isinstance(listed, _Unreadable):
            yield unreadable(path, listed.error, False)
            continue
        dirs, files = listed
        yield from _links(files, path, lambda n: n == REVIEWS, "reviews directory")
        stack.append(iter([(e.name == REVIEWS, _join(path, e.name)) for e in dirs
                           if e.name not in _PRUNE and not e.name.startswith(".")]))


def with_step(ref: RoundRef, step: str | None) -> RoundRef:
    return replace(ref, step=step) if step and ref.step != step else ref


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
