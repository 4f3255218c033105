"""``review-prep``: the diff an artifact step's reviewers read (upstream's
``scripts/review-prep.sh``, loop.md).

``review-prep --step S --round NN --artifact-dir D [--base-ref R]`` writes
``D/reviews/<S>/round-NN.diff``, the working tree's ``git diff`` of the step's artifact
against a ref: ``--base-ref`` on round 1, on later rounds the SHA in the previous
round's commit anchor ``D/reviews/<S>/round-(NN-1)-commit.txt``. For the design and plan
steps it also writes ``round-NN.absorption-map.tsv`` (:mod:`qrspi_guard.loop.absorption`)
for ``D/design.md``.

The checks, in upstream's order, each a named failure with exit 1: the arguments; an
unknown step (exit 0, nothing written, nothing said, unless it is a near miss of a
known step: then one warning names it) and ``implement`` (exit 0, a no-op);
``review-prep-corrupt-artifact-dir:``; outside a git work tree, exit 0 with nothing
written; ``anchor-file-missing:``; ``sha-format-invalid:`` (before any git runs
against the value); ``review-prep-git-failed:`` (git's own error, never taken for an
empty diff); a diff without a hunk (exit 0 and nothing written on round 1,
``narrow-round-empty-diff:`` on later rounds); ``review-prep-write-failed:``.

Writes: the map's input is read before anything is written; then, holding the round's
lock (``reviews/<S>/round-NN/`` when it exists, else the step directory; the round
directory is never created), the diff and then the map, each old-or-new under a temp
name unique to the run, relative to the step directory's descriptor (made when missing
and opened from `reviews/` down without following a link: a linked step or round is
refused, never written through). When the map cannot be written the new diff is removed, so no
diff stands beside a map it does not belong to. No printing, no exits, no click.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from contextlib import ExitStack

from qrspi_guard.contract.layout import side_file_name
from qrspi_guard.engine.roundlock import LOOP_LOCK_WAIT, round_lock
from qrspi_guard.errors import GuardError
from qrspi_guard.loop.absorption import absorption_map
from qrspi_guard.loop.git import GitResult, GitUnavailable, run_git
from qrspi_guard.output.files import write_in
from qrspi_guard.parse.capped import Refused, read_regular
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.rules.bookkeeping import artifact_anchor_sha
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import did_you_mean

#: step -> its artifact under the artifact directory (``implement``: a no-op)
STEP_ARTIFACTS: dict[str, str | None] = {
    "goals": "goals.md",
    "questions": "questions.md",
    "research": "research/summary.md",
    "design": "design.md",
    "phasing": "phasing.md",
    "plan": "plan.md",
    "structure": "structure.md",
    "parallelize": "parallelization.md",
    "replan": "plan.md",
    "implement": None,
}
#: the steps that also get the absorption map (of ``design.md``, whichever the step)
MAP_STEPS = frozenset({"design", "plan"})
MAP_SOURCE = "design.md"
USAGE = ("usage: qrspi-guard review-prep --step <step> --round <NN> --artifact-dir <path> "
         "[--base-ref <ref>]")
FLAGS = {"--step": "step", "--round": "round", "--artifact-dir": "artifact_dir",
         "--base-ref": "base_ref"}
#: the most of an anchor file read (a SHA is at most 64 digits; this leaves white space)
ANCHOR_CAP = 64 * 1024
#: the most of design.md read for the absorption map
DESIGN_CAP = 64 * 1024 * 1024
_ROUND_RE = re.compile(r"[0-9]+")
_SHOWN = 200


def _shown(text: str) -> str:
    """Untrusted text (a path, a ref, an argument) as one bounded, escaped line."""
    return one_line(text, _SHOWN)


class ReviewPrepError(GuardError):
    """``review-prep`` cannot do its job; the message starts with the diagnostic's name
    where upstream names one (``sha-format-invalid: ...``)."""

    exit_code = 1


class ReviewPrepUsage(ReviewPrepError):
    """A bad argument: a missing or unknown flag, a value that is not usable."""


class HelpRequested(Exception):
    """``--help`` or ``-h`` where a flag belongs: the caller prints :data:`USAGE`."""


@record(frozen=True)
class Request:
    """One run's arguments, checked for shape."""

    step: str
    round_no: int
    artifact_dir: str
    base_ref: str = ""

    @property
    def nn(self) -> str:
        return f"{self.round_no:02d}"

    @property
    def step_dir(self) -> str:
        return os.path.join(self.artifact_dir, "reviews", self.step)

    @property
    def anchor_path(self) -> str:
        return os.path.join(self.step_dir, side_file_name(self.round_no - 1, "-commit.txt"))


@record(frozen=True)
class Outcome:
    """What a run did: the files written, in order, or why it wrote nothing."""

    written: tuple[str, ...] = ()
    #: why nothing was written (an unknown step, ``implement``, outside a work tree,
    #: an empty round-1 diff); None when files were written
    skipped: str | None = None
    #: the one line to say although upstream says nothing: an unknown step that is a
    #: near miss of a known one (the exit code stays 0, as upstream's)
    warning: str | None = None


def parse_arguments(args: Sequence[str]) -> Request:
    """The run's :class:`Request` from upstream's argument forms (``--flag VALUE``, the
    last occurrence winning; ``--flag=VALUE`` too). Raises :class:`ReviewPrepUsage`
    naming the argument, or :class:`HelpRequested`."""
    values = {name: "" for name in FLAGS.values()}
    i = 0
    while i < len(args):
        arg = args[i]
        flag, eq, inline = arg.partition("=")
        if arg in ("--help", "-h"):
            raise HelpRequested
        if flag not in FLAGS:
            raise ReviewPrepUsage(f"unknown flag: {_shown(arg)}")
        if eq:
            values[FLAGS[flag]] = inline
            i += 1
            continue
        if i + 1 >= len(args):
            raise ReviewPrepUsage(f"{flag} needs a value")
        values[FLAGS[flag]] = args[i + 1]
        i += 2
    for flag in ("--step", "--round", "--artifact-dir"):
        if not values[FLAGS[flag]]:
            raise ReviewPrepUsage(f"{flag} is required; {USAGE}")
    base_ref = values["base_ref"]
    if base_ref.startswith("-"):
        raise ReviewPrepUsage(f"--base-ref must not begin with '-' (got: "
                              f"{_shown(base_ref)})")
    return Request(step=values["step"], round_no=_round_number(values["round"]),
                   artifact_dir=values["artifact_dir"], base_ref=base_ref)


def _round_number(text: str) -> int:
    if not _ROUND_RE.fullmatch(text):
        raise ReviewPrepUsage(f"--round must be a positive integer, got: "
                              f"{_shown(text)}")
    digits = text.lstrip("0")
    if len(digits) > 9:
        raise ReviewPrepUsage(f"--round must be at most 999999999, got: "
                              f"{_shown(text)}")
    if not digits:
        raise ReviewPrepUsage(f"--round must be >= 1, got: {_shown(text)}")
    return int(digits)


def review_prep(request: Request, lock_wait: float = LOOP_LOCK_WAIT) -> Outcome:
    """Run ``review-prep`` for *request* (see the module docstring). Raises
    :class:`ReviewPrepError` (exit 1) or the round lock's
    :class:`~qrspi_guard.engine.roundlock.LockTimeout` (exit 1)."""
    if request.step not in STEP_ARTIFACTS:
        hint = did_you_mean(request.step, STEP_ARTIFACTS)
        return Outcome(skipped="unknown step", warning=(
            f"unknown step {_shown(request.step)!r}{hint} (nothing written)" if hint else None))
    artifact = STEP_ARTIFACTS[request.step]
    if artifact is None:
        return Outcome(skipped="implement: the task round's diff is prepare's")
    _check_artifact_dir(request.artifact_dir)
    if not _in_work_tree(request.artifact_dir):
        return Outcome(skipped="the artifact directory is not in a git work tree")
    if not _has_history(request.artifact_dir):
        return Outcome(skipped="the repository has no commit yet")
    ref = _narrowing_ref(request)
    diff = _diff(request, ref, artifact)
    if not _has_hunk(diff):
        if request.round_no >= 2:
            raise ReviewPrepError(
                f"narrow-round-empty-diff: anchor-narrowed diff for step "
                f"'{request.step}' round {request.nn} against {ref} produced no hunks "
                "(the anchor may point at the wrong commit, or the prior round's commit "
                "did not capture the round's edits)")
        return Outcome(skipped=f"no hunk in the diff of {artifact} against the base ref")
    amap = _absorption_input(request) if request.step in MAP_STEPS else None
    return _write(request, diff, amap, lock_wait)


def _check_artifact_dir(path: str) -> None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ReviewPrepError(f"review-prep-corrupt-artifact-dir: --artifact-dir does not "
                              f"exist: {_shown(path)}") from None
    except OSError as exc:
        raise ReviewPrepError(f"review-prep-corrupt-artifact-dir: --artifact-dir cannot be "
                              f"examined: {_shown(path)}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ReviewPrepError(f"review-prep-corrupt-artifact-dir: --artifact-dir is not a "
                              f"directory: {_shown(path)}")


def _git(args: list[str], cwd: str) -> GitResult:
    try:
        return run_git(args, cwd)
    except GitUnavailable as exc:
        raise ReviewPrepError(f"review-prep-git-failed: {exc}") from None


def _git_failed(what: str, cwd: str, got: GitResult) -> ReviewPrepError:
    return ReviewPrepError(f"review-prep-git-failed: {what} in {_shown(cwd)} failed: "
                           f"{_shown(got.reason())}")


def _in_work_tree(directory: str) -> bool:
    """Whether *directory* is inside a git work tree. git saying it is not a repository
    is False; any other failure of git is named (never taken for "outside")."""
    got = _git(["rev-parse", "--is-inside-work-tree"], directory)
    if got.ok:
        return got.stdout.strip() == b"true"
    if b"not a git repository" in got.stderr:
        return False
    raise _git_failed("git rev-parse --is-inside-work-tree", directory, got)


def _has_history(directory: str) -> bool:
    """Whether the repository has a commit to diff against: HEAD names one, or some ref
    exists. A repository just made by ``git init`` has none; it is treated like no
    repository (upstream's suite runs its "not a git work tree" case inside one)."""
    if _git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], directory).ok:
        return True
    refs = _git(["for-each-ref", "--count=1"], directory)
    if not refs.ok:
        raise _git_failed("git for-each-ref", directory, refs)
    return bool(refs.stdout.strip())


def _narrowing_ref(request: Request) -> str:
    if request.round_no < 2:
        if not request.base_ref:
            raise ReviewPrepUsage("--base-ref is required for round 01 "
                                  "narrowing fallback")
        return request.base_ref
    path = request.anchor_path
    try:
        data = _read_regular(path, ANCHOR_CAP)
    except OSError as exc:
        why = ("no such file" if exc.errno == errno.ENOENT else
               exc.strerror or type(exc).__name__)
        raise ReviewPrepError(
            f"anchor-file-missing: expected per-round anchor file at {_shown(path)} for "
            f"round {request.nn} narrowing ({why})") from None
    sha = artifact_anchor_sha(data)
    if sha is None:
        got = data[:80].decode("utf-8", "replace")
        raise ReviewPrepError(
            f"sha-format-invalid: anchor SHA in {_shown(path)} is not 7 to 64 lowercase "
            f"hex digits (got: {one_line(got, 80)!s}{'...' if len(data) > 80 else ''})")
    return sha


def _read_regular(path: str, cap: int) -> bytes:
    """The bytes of the regular file at *path* (symbolic links followed), at most *cap*
    of them. Raises OSError: ENOENT, EISDIR or EINVAL (not a regular file), EFBIG (over
    the cap), or the read's own error. A FIFO is refused, never waited on."""
    try:
        return read_regular(path, cap)[0]
    except Refused as exc:
        if exc.too_large:
            raise OSError(errno.EFBIG, f"larger than {cap} bytes") from None
        if exc.is_dir:
            raise OSError(errno.EISDIR, "a directory, not a file") from None
        raise OSError(errno.EINVAL, "not a regular file") from None


def _diff(request: Request, ref: str, artifact: str) -> bytes:
    """git's own bytes of the artifact's diff, working tree against *ref*."""
    args = ["diff", "--no-color", ref, "--", artifact]
    got = _git(args, request.artifact_dir)
    if not got.ok:
        raise _git_failed(f"git diff {_shown(ref)} -- {artifact}", request.artifact_dir, got)
    return got.stdout


def _has_hunk(diff: bytes) -> bool:
    """A line starting ``@@`` (upstream's ``grep -q '^@@'``)."""
    return diff.startswith(b"@@") or b"\n@@" in diff


def _absorption_input(request: Request) -> bytes:
    path = os.path.join(request.artifact_dir, MAP_SOURCE)
    try:
        return absorption_map(_read_regular(path, DESIGN_CAP))
    except OSError as exc:
        raise ReviewPrepError(
            f"review-prep-write-failed: cannot build the absorption map: "
            f"design-path-unreadable: cannot read design path: {_shown(path)} "
            f"({exc.strerror or type(exc).__name__}); nothing written") from None


def _write(request: Request, diff: bytes, amap: bytes | None, lock_wait: float) -> Outcome:
    step_dir = request.step_dir
    try:  # made when missing, never through a link from reviews/ down
        step = Dir.round_path(step_dir, create=True)
    except OSError as exc:
        raise ReviewPrepError(f"review-prep-write-failed: cannot create output dir "
                              f"{_shown(step_dir)}: {exc.strerror}") from None
    round_name = f"round-{request.nn}"
    diff_name = f"{round_name}.diff"
    map_name = f"{round_name}.absorption-map.tsv"
    with ExitStack() as held:
        held.enter_context(step)
        in_round = step.exists(round_name)
        target = step.join(round_name) if in_round else step.path
        try:
            lock_on = held.enter_context(step.subdir(round_name)) if in_round else step
            held.enter_context(round_lock(target, timeout=lock_wait, exit_code=1,
                                          dir_fd=lock_on.fd))
        except OSError as exc:
            raise ReviewPrepError(f"review-prep-write-failed: cannot lock {_shown(target)}: "
                                  f"{exc.strerror}") from None
        _write_one(step, diff_name, diff)
        if amap is None:
            return Outcome(written=(step.join(diff_name),))
        try:
            _write_one(step, map_name, amap)
        except ReviewPrepError as exc:
            try:
                step.unlink(diff_name)
            except OSError:
                pass
            raise ReviewPrepError(f"{exc}; {diff_name} removed") from None
        return Outcome(written=(step.join(diff_name), step.join(map_name)))


def _write_one(step: Dir, name: str, data: bytes) -> None:
    try:
        write_in(step, name, data)
    except OSError as exc:
        raise ReviewPrepError(f"review-prep-write-failed: cannot write "
                              f"{_shown(step.join(name))}: "
                              f"{exc.strerror or type(exc).__name__}") from None
