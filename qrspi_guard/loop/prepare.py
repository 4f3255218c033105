"""``prepare NN OUTPUT_DIR``: round preparation for a task round (loop.md ``prepare``),
the drop-in for upstream's ``scripts/round-prepare.sh``.

The checks run in upstream's order, each with its exit code, and nothing is written
until every one has passed:

1. per-task (``--task-branch`` or ``--implementer-commit`` given): both, else **10**;
   the commit equal to the prior round's anchor (round 2 on) or to the task base
   (``--base-ref``, round 1): **12**; the commit not the work tree's ``HEAD``: **11**;
2. round 2 on: the prior round's commit anchor missing, malformed (its shape as
   :func:`qrspi_guard.rules.bookkeeping.commit_anchor` reads it for ``round-prepare.sh``)
   or naming no commit of the repository: **1**; round 3 on: an earlier scope set that
   is malformed (:func:`~qrspi_guard.rules.bookkeeping.scope_set`), and with
   ``QRSPI_SCOPE_TAGGER_ENABLED=true`` the NN-1 set missing or without tags: **1**;
3. the base to diff against: ``--base-ref`` (unknown: **1**, named), else the first of
   ``main``, ``trunk``, ``HEAD~1`` that names a commit (none: **1**); a narrowed round
   (:mod:`~qrspi_guard.loop.narrowing`) diffs against ``HEAD~1`` instead, which the
   decision has just checked is the prior round's anchor (this round's delta, as the
   protocol's ref rule says; upstream's script diffs against the base either way);
   ``git diff`` itself failing: **1**.

Then, in this order: the commit anchor ``round-NN-commit.txt`` (per-task), the
backward-loop flag consumed (a failed delete is reported and the run goes on, as the
suite pins), ``round-NN.diff``, and ``.round-prepare.json`` last, each old-or-new. Outside
a git work tree the run writes the sidecar with no diff and no hint and exits **2**.

Every git operation of the run (the HEAD check, the anchor lookup, ``HEAD~1``, the
diff, the work-tree test) runs in one repository: ``--worktree``'s when given, else the
working directory's. The whole run holds the round lock on ``OUTPUT_DIR``. Every file
is read and written relative to the task directory's and ``OUTPUT_DIR``'s descriptors,
opened (and made when missing) from `reviews/` down without following a link: a
linked task or round directory is refused, never written through.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qrspi_guard.contract.layout import side_file_name
from qrspi_guard.engine.roundlock import LOOP_LOCK_WAIT, round_lock
from qrspi_guard.errors import GuardError
from qrspi_guard.loop import git
from qrspi_guard.loop.narrowing import Decision, ScopeSet, decide, non_git_sidecar, sidecar
from qrspi_guard.loop.prepare_args import PrepareArgs, PrepareUsageError
from qrspi_guard.output.files import write_in
from qrspi_guard.parse.capped import Refused, read_regular
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.rules.bookkeeping import commit_anchor, scope_set
from qrspi_guard.textsafe import one_line

SIDECAR = ".round-prepare.json"
#: bases tried, in order, when no --base-ref is given (upstream's fallback)
FALLBACK_BASES = ("main", "trunk", "HEAD~1")
#: a narrowed round's diff is against the prior round's commit (the protocol's ref rule)
NARROW_REF = "HEAD~1"
ANCHOR_CAP = 4096
SCOPE_SET_CAP = 1024 * 1024


class PrepareError(GuardError):
    """A check failed or a step could not be done: one line, the documented code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@record(frozen=True)
class Outcome:
    diff_path: str
    sidecar_path: str
    decision: Decision
    ref: str
    anchor_path: str | None = None


def _quiet(line: str) -> None:
    return None


def prepare(args: PrepareArgs, cwd: str | None = None,
            say: Callable[[str], None] = _quiet, scope_tagger: bool = False,
            lock_wait: float = LOOP_LOCK_WAIT) -> Outcome:
    """Prepare round ``args.round_no`` (module docstring). *say* gets the lines meant
    for stderr that do not stop the run; *scope_tagger*: ``QRSPI_SCOPE_TAGGER_ENABLED``.
    Raises :class:`PrepareError` / :class:`PrepareUsageError` with the exit code."""
    here = cwd or os.getcwd()
    repo = here
    if args.worktree:
        repo = os.path.join(here, args.worktree)
        if not os.path.isdir(repo):
            raise PrepareUsageError(f"--worktree {one_line(args.worktree)}: no such directory")
    task, out = _output_dir(os.path.normpath(os.path.join(here, args.output_dir)),
                            args.output_dir)
    out_dir = os.path.realpath(out.path)
    shown = one_line(out_dir)

    def waiting() -> None:
        say(f"waiting for another qrspi-guard run on {shown} to finish")

    try:
        with task, out, round_lock(out_dir, on_wait=waiting, timeout=lock_wait, exit_code=1,
                                   dir_fd=out.fd):
            return _Run(args, repo, out_dir, (task, out), say, scope_tagger).go()
    except OSError as exc:  # opening the round directory for its lock
        raise PrepareError(f"cannot use <output-dir> {shown}: {exc.strerror or exc}") from None


def _output_dir(path: str, given: str) -> tuple[Dir, Dir]:
    """The task directory and OUTPUT_DIR in it, created when missing (as upstream does),
    each opened from `reviews/` down without following a link: a linked task or round
    directory is refused, never written through."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise PrepareUsageError(f"<output-dir> {one_line(given)} is not a directory")
    try:
        task = Dir.round_path(os.path.dirname(path), create=True)
    except OSError as exc:
        raise PrepareUsageError(f"cannot use <output-dir> {one_line(given)}: "
                                f"{exc.strerror or exc}") from None
    try:
        try:
            task.mkdir(os.path.basename(path))
        except FileExistsError:
            pass
        return task, task.subdir(os.path.basename(path))
    except OSError as exc:
        task.close()
        raise PrepareUsageError(f"cannot use <output-dir> {one_line(given)}: "
                                f"{exc.strerror or exc}") from None


def _read_regular(d: Dir, name: str, cap: int, what: str) -> bytes | None:
    """At most *cap* + 1 bytes of *name* in *d* (never through a link); None when it is
    not a regular file (missing, a directory, a FIFO: what ``[ -f ]`` calls absent);
    unreadable: :class:`PrepareError`."""
    try:
        return read_regular(name, cap, follow=False, dir_fd=d.fd)[0]
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise PrepareError(f"cannot read {what} at {one_line(d.join(name))}: "
                           f"{exc.strerror or exc}") from None
    except Refused as exc:
        return exc.data if exc.too_large else None  # over the cap: the caller says so


class _Run:
    """One run, under the round lock."""

    def __init__(self, args: PrepareArgs, repo: str, out_dir: str, dirs: tuple[Dir, Dir],
                 say: Callable[[str], None], scope_tagger: bool) -> None:
        self.args = args
        self.repo = repo
        self.shown_repo = one_line(repo)
        self.out_dir = out_dir
        self.task_dir = os.path.dirname(out_dir)
        self.task, self.out = dirs  #: every read and write is relative to these
        self.say = say
        self.scope_tagger = scope_tagger
        self._tree: bool | None = None
        self._base: tuple[str, str] | None = None

    # -- files beside the round --------------------------------------------------------

    def beside(self, round_no: int, suffix: str) -> str:
        """The name of a file beside the round, in the task directory."""
        return side_file_name(round_no, suffix)

    def shown(self, name: str) -> str:
        """A file beside the round as messages name it."""
        return one_line(os.path.join(self.task_dir, name))

    # -- git, in the run's one repository ------------------------------------------------

    def tree(self) -> bool:
        if self._tree is None:
            try:
                got = git.inside_work_tree(self.repo)
            except git.GitUnavailable as exc:
                raise PrepareError(str(exc)) from None
            if isinstance(got, git.GitResult):
                raise PrepareError(f"git cannot tell whether {self.shown_repo} is a work "
                                   f"tree: {one_line(got.reason())}")
            self._tree = got
        return self._tree

    def need_tree(self) -> None:
        if not self.tree():
            self.not_a_work_tree()

    def commit(self, ref: str) -> str | None:
        got = git.resolve_commit(ref, self.repo)
        if isinstance(got, git.GitResult):
            raise PrepareError(f"git rev-parse {one_line(ref)} failed in {self.shown_repo}: "
                               f"{one_line(got.reason())}")
        return got

    def base(self) -> tuple[str, str]:
        """(the ref as the sidecar names it, its commit)."""
        if self._base is None:
            self.need_tree()
            if self.args.base_ref:
                sha = self.commit(self.args.base_ref)
                if sha is None:
                    raise PrepareError(f"unknown --base-ref {one_line(self.args.base_ref)}: "
                                       f"it names no commit in {self.shown_repo}")
                self._base = (self.args.base_ref, sha)
            else:
                for candidate in FALLBACK_BASES:
                    sha = self.commit(candidate)
                    if sha is not None:
                        self._base = (candidate, sha)
                        break
                else:
                    raise PrepareError("no base to diff against: --base-ref not given and "
                                       f"none of {', '.join(FALLBACK_BASES)} names a commit "
                                       f"in {self.shown_repo}")
        return self._base

    # -- the run -----------------------------------------------------------------------

    def go(self) -> Outcome:
        args = self.args
        if args.per_task:
            self.check_flags()
            self.check_advanced()
            self.check_head()
        anchor = self.prior_anchor()
        prev1, prev2 = self.scope_sets()
        flag = self.beside(args.round_no, "-backward-loop.flag")
        backward = self.task.exists(flag)
        diff = b""
        ref = ""
        head1: str | None = None
        if self.tree():
            ref, sha = self.base()
            if args.round_no >= 3 and not backward:
                head1 = self.commit("HEAD~1")
        decision = decide(args.round_no, backward, prev1, prev2, anchor, head1)
        if self.tree():
            if decision.narrowed and head1 is not None:
                ref, sha = NARROW_REF, head1  # this round's delta: HEAD~1 is the anchor
            diff = self.diff(ref, sha)
        anchor_path = self.write_anchor() if args.per_task else None
        if backward:
            self.consume(flag)
        if not self.tree():
            self.not_a_work_tree()
        diff_path = os.path.join(self.out_dir, f"round-{args.nn}.diff")
        sidecar_path = os.path.join(self.out_dir, SIDECAR)
        self.write(self.out, os.path.basename(diff_path), diff)
        self.write(self.out, SIDECAR, sidecar(diff_path, decision, ref))
        return Outcome(diff_path, sidecar_path, decision, ref, anchor_path)

    def check_flags(self) -> None:
        if not (self.args.task_branch and self.args.implementer_commit):
            raise PrepareError(
                "--task-branch requires --implementer-commit (and vice versa): orchestrator "
                "bug — pass both, with commit_sha from the implementer's Task return; halt "
                "and surface to the user", 10)

    def check_advanced(self) -> None:
        """Exit 12: the implementer's commit is where the last round (or the task) began."""
        args = self.args
        if args.round_no >= 2:
            data = _read_regular(self.task, self.beside(args.round_no - 1, "-commit.txt"),
                                 ANCHOR_CAP, "the prior-round commit anchor")
            prior = bytes(b for b in data if b not in b" \t\n\r\v\f").decode(
                "utf-8", "replace") if data is not None else ""
            label = f"prior round anchor (round {args.round_no - 1})"
        elif args.base_ref:
            prior = self.base()[1]
            label = "task base commit"
        else:
            return
        if prior and args.implementer_commit == prior:
            raise PrepareError(
                f"implementer did not advance HEAD — passed SHA "
                f"{one_line(args.implementer_commit, 80)} equals the {label}. Recovery: "
                "re-dispatch the implementer subagent (SendMessage or a fresh Task); it must "
                "make a new commit before reviewers can run", 12)

    def check_head(self) -> None:
        """Exit 11: the commit passed is not the work tree's HEAD."""
        self.need_tree()
        head = self.commit("HEAD")
        if head is None:
            raise PrepareError(f"HEAD of {self.shown_repo} names no commit")
        if head != self.args.implementer_commit:
            raise PrepareError(
                f"implementer-commit / HEAD mismatch — passed "
                f"{one_line(self.args.implementer_commit, 80)}, HEAD of {self.shown_repo} is "
                f"{head}. Recovery: HALT — wrong worktree path, a concurrent commit or a "
                "drifted self-report; surface to the user, do not retry", 11)

    def prior_anchor(self) -> str | None:
        """The NN-1 commit anchor's SHA (round 2 on), checked; None in round 1."""
        round_no = self.args.round_no
        if round_no < 2:
            return None
        name = self.beside(round_no - 1, "-commit.txt")
        where = self.shown(name)
        data = _read_regular(self.task, name, ANCHOR_CAP, "the prior-round commit anchor")
        if data is None:
            raise PrepareError(f"missing prior-round commit anchor at {where} — round "
                               f"{round_no - 1}'s commit anchor was never written")
        sha, problem = commit_anchor(data, per_task=True)
        if sha is None:
            why = problem.message if problem is not None else "not a commit anchor"
            raise PrepareError(f"malformed prior-round commit anchor at {where} — "
                               f"{one_line(why)}")
        if self.tree() and self.commit(sha) is None:
            raise PrepareError(f"prior-round commit anchor at {where} names {sha}, which is "
                               f"no commit in {self.shown_repo}")
        return sha

    def scope_sets(self) -> tuple[ScopeSet | None, ScopeSet | None]:
        """The NN-1 and NN-2 scope sets (round 3 on), each checked."""
        round_no = self.args.round_no
        if round_no < 3:
            return None, None
        found = [self.scope_set(round_no - 1), self.scope_set(round_no - 2)]
        if self.scope_tagger:
            where = self.shown(self.beside(round_no - 1, "-scope-set.txt"))
            if found[0] is None:
                raise PrepareError(f"missing prior-round scope-set at {where} — the scope "
                                   f"tagger was skipped or failed in round {round_no - 1}")
            if not found[0].tags:
                raise PrepareError(f"empty prior-round scope-set at {where} — the scope "
                                   f"tagger emitted no tags in round {round_no - 1}; "
                                   "broaden by hand or re-run the tagger")
        return found[0], found[1]

    def scope_set(self, round_no: int) -> ScopeSet | None:
        name = self.beside(round_no, "-scope-set.txt")
        data = _read_regular(self.task, name, SCOPE_SET_CAP, "the prior-round scope-set")
        if data is None:
            return None
        if len(data) > SCOPE_SET_CAP:
            raise PrepareError(f"prior-round scope-set at {self.shown(name)} is over "
                               f"{SCOPE_SET_CAP} bytes")
        tags, problem = scope_set(data)
        if problem is not None and problem.level is None:
            raise PrepareError(f"malformed prior-round scope-set at {self.shown(name)}, line "
                               f"{problem.line}: {one_line(problem.message)}")
        return ScopeSet(tuple(tags), data.decode("utf-8"))

    def diff(self, ref: str, sha: str) -> bytes:
        args = ["diff", "--no-color", sha, "--"]
        if self.args.artifact:
            args.append(self.args.artifact)
        got = git.run_git(args, self.repo)
        if not got.ok:
            raise PrepareError(f"git diff {one_line(ref)} failed in {self.shown_repo}: "
                               f"{one_line(got.reason())}")
        return got.stdout

    # -- writes ------------------------------------------------------------------------

    def write(self, d: Dir, name: str, data: bytes) -> None:
        shown = os.path.join(self.task_dir if d is self.task else self.out_dir, name)
        try:
            write_in(d, name, data, shown=shown)
        except OSError as exc:
            raise PrepareError(f"cannot write {one_line(shown)}: {exc.strerror or exc}; "
                               "the previous file, if any, is unchanged") from None

    def write_anchor(self) -> str:
        name = self.beside(self.args.round_no, "-commit.txt")
        self.write(self.task, name, (self.args.implementer_commit + "\n").encode(
            "utf-8", "surrogateescape"))
        return os.path.join(self.task_dir, name)

    def consume(self, flag: str) -> None:
        """The backward-loop flag is read once: deleted; a failed delete is said, and
        the run goes on (the suite pins exit 0)."""
        try:
            self.task.unlink(flag)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self.say(f"failed to delete backward-loop flag at {self.shown(flag)} "
                     f"({exc.strerror or exc}); remove it by hand, or the next run of this "
                     "round broadens again")

    def not_a_work_tree(self) -> None:
        self.write(self.out, SIDECAR, non_git_sidecar())
        raise PrepareError(f"{self.shown_repo} is not in a git work tree: no diff produced "
                           "(the sidecar names no diff_file and no scope_hint)", 2)
