"""The watch loop: start-up scan, incremental re-evaluation, reconcile scans, output.

State lives on disk: the loop rebuilds everything from the tree at start, keeps one
cached verdict per settled file (:class:`~.judge.RoundJudge`), and rewrites a round's
status file only when its content (apart from ``checked_at``) changes
(:mod:`.publish` writes it, and retries a failed write until it succeeds).

Stopping: SIGINT and SIGTERM stop the loop with exit 0 wherever it is, at start-up too
(a scan blocked on a file that never answers is interrupted), except inside a status
or events write, which is finished first (:meth:`Watcher.critical`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from qrspi_guard.config import (
    CONFIG_NAME,
    Overrides,
    RunConfig,
    config_from,
    config_path,
    read_config,
)
from qrspi_guard.diagnostics import Diagnostic
from qrspi_guard.discover import RoundRef, discover_dir, with_step
from qrspi_guard.engine import RoundResult
from qrspi_guard.engine.entries import Context
from qrspi_guard.engine.history import ConfigHistory
from qrspi_guard.engine.inputs import read_anchor
from qrspi_guard.layout import Kind as NameKind
from qrspi_guard.layout import (
    classify,
    round_side_file,
    status_file_name,
    verified_file_name,
)
from qrspi_guard.reader import ReadFailure
from qrspi_guard.records import record
from qrspi_guard.rules.bookkeeping import commit_anchor
from qrspi_guard.settings.selection import DEFAULT, Selection, apply_selection
from qrspi_guard.split.residue import is_split_residue
from qrspi_guard.status import without_timestamp, write_atomic
from qrspi_guard.textsafe import one_line
from qrspi_guard.watch.events import Event, EventSource, Kind
from qrspi_guard.watch.judge import RoundJudge, ignored, signature
from qrspi_guard.watch.policy import Policy, Probe, lease_probe, peek_frontmatter_closed
from qrspi_guard.watch.publish import (
    LineSink,
    Publisher,
    RoundOutput,
    read_previous,
    sweep_stale_temps,
)

_CONFIG_OWNER = "config:"
#: the longest single wait for events (a bound far below threading.TIMEOUT_MAX)
MAX_WAIT = 3600.0


@record
class Tracked:
    """One round the loop keeps current."""

    ref: RoundRef
    judge: RoundJudge
    run_key: str | None
    out: RoundOutput

    @property
    def writes(self) -> int:
        return self.out.writes


@record
class Options:
    settle: float = 2.0
    rescan: float = 30.0
    quiet: float = 0.5
    fmt: str = "text"  #: "text" or "json"
    events_file: str | None = None
    retry: float = 1.0  #: how often a status file that could not be written is retried


@record
class Stats:
    evaluations: int = 0
    reconciles: int = 0
    dropped_parses: int = 0


class RootGone(Exception):
    """ROOT disappeared while watching."""


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived: unwind to :meth:`Watcher.run` and exit 0.

    A BaseException, so no ``except Exception`` on the way swallows it; raised from the
    signal handler, it also interrupts a system call that would otherwise be retried
    (an ``open`` blocked on a FIFO named config.md, say)."""


#: files beside a round whose change bears on it
_SIDE_SUFFIXES = ("-verified.md", "-verifier-disabled.md", "-commit.txt", "-scope-set.txt")


class Watcher:
    """Keeps every round below *root* current. :meth:`run` returns the exit code."""

    def __init__(self, root: str, overrides: Overrides, source: EventSource,
                 options: Options | None = None, *,
                 out: Callable[[str], None] = print,
                 err: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 probe: Callable[[str], Probe] = lease_probe,
                 peek: Callable[[str], bool] = peek_frontmatter_closed,
                 write: Callable[[str, bytes], None] = write_atomic,
                 selection: Selection = DEFAULT) -> None:
        self.root = os.path.abspath(root)
        self.display_root = root
        self.overrides = overrides
        #: which causes are reported (--select/--ignore, the project configuration)
        self.selection = selection
        self.source = source
        self.opt = options or Options()
        self.out = out
        self.err = err
        self.clock = clock
        self.wall = wall
        polling = source.mode == "polling"
        self.policy = Policy(clock, probe, peek, settle=self.opt.settle, quiet=self.opt.quiet,
                             reprobe=max(self.opt.quiet, 0.05), rescan=self.opt.rescan,
                             polling=polling, poll_interval=getattr(source, "poll_interval", 0.5))
        self.rounds: dict[str, Tracked] = {}  #: round dir (absolute) -> tracked round
        self.step_dirs: dict[str, set[str]] = {}  #: step dir -> round keys in it
        self.runs: dict[str | None, RunConfig] = {}
        #: judging context shared by every round: the generation resolver remembers each
        #: run's majority until a round's evidence changes (generations.md §6)
        self.ctx = Context(overrides)
        #: config.md as of a round's commit, by (run, SHA): fetched once, never stale
        self.history = ConfigHistory()
        self.anchored: dict[tuple[str | None, str], RunConfig] = {}
        self.config_paths: dict[str, set[str | None]] = {}  #: config.md path -> run keys
        self.side_sigs: dict[str, Any] = {}  #: reconcile snapshot of side files and configs
        self.stats = Stats()
        self._need_discover = False
        self._suspects: set[str] = set()  #: round-like dirs that asked for a discovery
        self._not_rounds: set[str] = set()  #: ... and turned out not to be rounds
        self._stop = threading.Event()
        self._critical = 0  #: > 0 while a status or events write is under way
        self._stopping = False  #: shutting down: a signal no longer interrupts anything
        self.events: LineSink | None = None
        if self.opt.events_file is not None:
            self.events = LineSink(f"events file {one_line(self.opt.events_file)}", err,
                                   path=self.opt.events_file)
        self.publisher = Publisher(out, err, self.opt.fmt, self.events, write=write,
                                   critical=self.critical)

    # -- life cycle -----------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to stop (thread- and signal-safe)."""
        self._stop.set()
        self.source.put(Event(Kind.STOP))

    def on_signal(self) -> None:
        """From the signal handler: stop, and unwind at once unless a write is under way
        (then :meth:`critical` unwinds right after it) or the watcher is shutting down."""
        first = not self._stop.is_set()
        self.stop()
        if first and self._critical == 0 and not self._stopping:
            raise Stopped

    @contextlib.contextmanager
    def critical(self) -> Iterator[None]:
        """A write that a stop signal must not cut in half."""
        self._critical += 1
        try:
            yield
        finally:
            self._critical -= 1
        if self._critical == 0 and self._stop.is_set() and not self._stopping:
            raise Stopped

    @property
    def status_writes(self) -> int:
        return self.publisher.status_writes

    def run(self) -> int:
        try:
            code = self._run()
        except Stopped:
            code = 0
        finally:
            self._stopping = True
            self.source.stop()
            if self.events is not None:
                self.events.close()
        if code == 0:
            self.err(f"qrspi-guard: watch: stopped ({self.files_judged()} file(s) judged, "
                     f"{self.status_writes} status write(s))")
        return code

    def _run(self) -> int:
        if not os.path.isdir(self.root):
            why = "not a directory" if os.path.lexists(self.root) else "path not found"
            self.err(f"qrspi-guard: error: {why}: {one_line(self.display_root)}")
            return 2
        if self.events is not None:
            try:
                self.events.open()
            except OSError as exc:
                self.err(f"qrspi-guard: error: cannot open {one_line(self.opt.events_file)}: "
                         f"{exc.strerror or exc}")
                return 2
        try:
            self.source.start()
        except OSError as exc:
            self.err(f"qrspi-guard: error: cannot watch {one_line(self.display_root)}: "
                     f"{exc.strerror or exc}")
            return 2
        try:
            if self.source.note:
                self.err(f"qrspi-guard: watch: {self.source.note}")
            self.err(f"qrspi-guard: watch: scanning {one_line(self.display_root)}")
            self.discover()
            self.tick()
            self.err(f"qrspi-guard: watch: watching {one_line(self.display_root)} "
                     f"({self.source.mode}), {len(self.rounds)} round(s)")
            while not self._stop.is_set():
                events = self.source.get(self._timeout())
                if any(e.kind is Kind.STOP for e in events):
                    break
                self.apply(events)
                self.tick()
            return 0
        except RootGone:
            self.err(f"qrspi-guard: watch: {one_line(self.display_root)} was deleted; "
                     "stopping")
            return 2

    def _timeout(self) -> float | None:
        """How long to wait for events: until the policy's next deadline, or the next
        retry of a status file that could not be written."""
        deadline = self.policy.next_deadline()
        if self.publisher.has_unwritten():
            retry_at = self.clock() + self.opt.retry
            deadline = retry_at if deadline is None else min(deadline, retry_at)
        if deadline is None:
            return None
        return min(max(0.0, deadline - self.clock()), MAX_WAIT)

    def files_judged(self) -> int:
        """Files read and judged so far (each settled version once)."""
        return self.stats.dropped_parses + sum(t.judge.parses for t in self.rounds.values())

    # -- discovery ------------------------------------------------------------------
    def discover(self) -> None:
        """Find the rounds below ROOT; track new ones, drop vanished ones."""
        self._need_discover = False
        if not os.path.isdir(self.root):
            raise RootGone
        found: dict[str, RoundRef] = {}
        for item in discover_dir(self.root):
            if isinstance(item, Diagnostic):
                continue
            ref = with_step(item, self.overrides.step)
            found.setdefault(os.path.normpath(ref.round_dir), ref)
        for key in [k for k in self.rounds if k not in found]:
            self._drop(key)
        new = [k for k in found if k not in self.rounds]
        for key in sorted(new):
            self._track(key, found[key])
        self._not_rounds = (self._not_rounds | self._suspects) - set(self.rounds)
        self._suspects = set()
        for key in new:  # a later round appeared: the earlier ones are complete
            t = self.rounds[key]
            for other in self.step_dirs.get(os.path.normpath(t.ref.step_dir), ()):
                if self.rounds[other].ref.round < t.ref.round:
                    self.policy.round_complete(other)

    def _run_key(self, ref: RoundRef) -> str | None:
        return os.path.abspath(ref.artifact_dir) if ref.artifact_dir else None

    def _config_path(self, run_key: str | None) -> str | None:
        if self.overrides.config_file:
            return os.path.abspath(self.overrides.config_file)
        return os.path.join(run_key, CONFIG_NAME) if run_key else None

    def _track(self, key: str, ref: RoundRef) -> None:
        run_key = self._run_key(ref)
        if run_key not in self.runs:
            self.runs[run_key] = read_config(ref.artifact_dir, self.overrides)
            cfg = self._config_path(run_key)
            if cfg is not None:
                self.config_paths.setdefault(cfg, set()).add(run_key)
                self.side_sigs[cfg] = _sig_or_none(cfg)
        spath = (os.path.join(ref.step_dir, status_file_name(ref.round))
                 if ref.has_status_file and ref.round is not None else None)
        t = Tracked(ref, RoundJudge(ref, self.ctx), run_key, RoundOutput(spath, ref.round_dir))
        previous = read_previous(spath) if spath is not None else None
        if previous is not None:
            t.out.last_core = without_timestamp(previous)
        self.rounds[key] = t
        step_dir = os.path.normpath(ref.step_dir)
        if step_dir not in self.step_dirs:
            for name in sweep_stale_temps(step_dir, self.wall()):
                self.err(f"qrspi-guard: watch: removed {one_line(name)} in "
                         f"{one_line(ref.step_dir)}, a temp file left by an interrupted "
                         "status write")
        self.step_dirs.setdefault(step_dir, set()).add(key)
        names = t.judge.listing() or []
        newest = _mtime(key)
        for name in names:
            newest = max(newest, _mtime(os.path.join(key, name)))
            self.policy.file_event(os.path.join(key, name), key, Kind.CREATED)
        self.policy.round_seen(key, age=self.wall() - newest if newest else 0.0)
        if self._later_round_exists(t) or os.path.isfile(self._verified_path(t)):
            self.policy.round_complete(key)
        for side in self._side_files(t):
            self.side_sigs[side] = _sig_or_none(side)

    def _drop(self, key: str) -> None:
        t = self.rounds.pop(key)
        self.stats.dropped_parses += t.judge.parses
        self.publisher.forget(t.out)
        self.step_dirs.get(os.path.normpath(t.ref.step_dir), set()).discard(key)
        self.policy.round_gone(key)

    def _verified_path(self, t: Tracked) -> str:
        return os.path.join(t.ref.step_dir, verified_file_name(t.ref.round))

    def _side_files(self, t: Tracked) -> list[str]:
        n = t.ref.round
        return [os.path.join(t.ref.step_dir, f"round-{n:02d}{suffix}")
                for suffix in _SIDE_SUFFIXES]

    def _later_round_exists(self, t: Tracked) -> bool:
        return any(self.rounds[k].ref.round > t.ref.round
                   for k in self.step_dirs.get(os.path.normpath(t.ref.step_dir), ()))

    # -- events ---------------------------------------------------------------------
    def _side_owner(self, parent: str, name: str) -> str | None:
        """The round a file beside the rounds (round-NN-verified.md, ...) bears on."""
        keys = self.step_dirs.get(parent)
        if not keys:
            return None
        side = round_side_file(name)
        if side is None or side[1] not in _SIDE_SUFFIXES:
            return None
        key = os.path.join(parent, f"round-{side[0]:02d}")
        return key if key in self.rounds else None

    def apply(self, events: list[Event]) -> None:
        policy = self.policy
        for e in events:
            kind = e.kind
            if kind is Kind.LOSS:
                policy.loss()
                continue
            path = os.path.abspath(e.path) if e.path else ""
            if kind in (Kind.DIR_CREATED, Kind.DIR_DELETED):
                if kind is Kind.DIR_DELETED and path == self.root:
                    raise RootGone
                parent = os.path.dirname(path)
                if parent in self.rounds:  # a directory inside a round is an entry
                    if kind is Kind.DIR_CREATED:
                        policy.file_event(path, parent, Kind.MOVED_IN)
                    else:
                        policy.file_deleted(path, parent)
                    continue
                self._need_discover = True
                continue
            parent, name = os.path.split(path)
            if parent in self.rounds:
                if ignored(name):
                    if is_split_residue(name):  # split_incomplete comes or goes
                        policy.mark_dirty(parent)
                    continue
                if kind is Kind.DELETED:
                    policy.file_deleted(path, parent)
                elif classify(name).kind is NameKind.UNKNOWN:
                    # Tools' own temp names (`sed -i`'s sedXXXXXX, tempfile's tmpXXXX) are
                    # renamed away at once: an unknown name is judged after a quiet time.
                    policy.file_event(path, parent, Kind.MODIFIED)
                else:
                    policy.file_event(path, parent, kind)
                continue
            owner = self._side_owner(parent, name)
            if owner is not None:
                if kind is Kind.DELETED:
                    policy.mark_dirty(owner)
                else:
                    policy.file_event(path, owner, kind)
                continue
            if path in self.config_paths:
                if kind is Kind.DELETED:
                    self._reread_config(path)
                else:
                    policy.file_event(path, _CONFIG_OWNER + path, kind)
                continue
            if parent not in self._not_rounds and not ignored(name) \
                    and os.path.basename(parent).startswith("round"):
                self._suspects.add(parent)  # a file in a round we do not know (yet)
                self._need_discover = True

    def _reread_config(self, cfg: str) -> None:
        self.side_sigs[cfg] = _sig_or_none(cfg)
        for run_key in self.config_paths.get(cfg, ()):
            artifact = run_key
            self.runs[run_key] = read_config(artifact, self.overrides)
            for key, t in self.rounds.items():
                if t.run_key == run_key:
                    self.policy.mark_dirty(key)

    # -- one turn -------------------------------------------------------------------
    def tick(self) -> None:
        """Do everything that is due now, then retry status files not written yet."""
        self._tick()
        if self.publisher.has_unwritten():
            self.publisher.retry()

    def _tick(self) -> None:
        for _ in range(8):  # settle what evaluation found unseen, without waiting
            if self._need_discover:
                self.discover()
            step = self.policy.step()
            if step.rescan:
                self.reconcile()
                step2 = self.policy.step()
                step.settled += step2.settled
                step.evaluate |= step2.evaluate
            for path in step.settled:
                self._settled(path)
            again = False
            for key in sorted(step.evaluate):
                if key in self.rounds:
                    again |= self.evaluate(key)
            if not again and not self._need_discover and not self.policy.has_dirty():
                return

    def _settled(self, path: str) -> None:
        parent, name = os.path.split(path)
        t = self.rounds.get(parent)
        if t is not None:
            t.judge.judge(name)
            return
        if path in self.config_paths:
            self._reread_config(path)
            return
        owner = self._side_owner(parent, name)
        if owner is not None:
            if name == verified_file_name(self.rounds[owner].ref.round):
                self.policy.round_complete(owner)
            self.policy.mark_dirty(owner)

    def evaluate(self, key: str) -> bool:
        """Re-evaluate one round; True when it has entries never seen (settle them first)."""
        t = self.rounds[key]
        if not self.policy.is_complete(key) and (
                self._later_round_exists(t) or os.path.isfile(self._verified_path(t))):
            self.policy.round_complete(key)
        complete = self.policy.is_complete(key)
        exclude = {os.path.basename(p) for p in self.policy.unsettled(key)}
        before = t.judge.evidence
        result, unseen = t.judge.evaluate(self._config_of(t), self.overrides, complete,
                                          exclude)
        self.stats.evaluations += 1
        if t.judge.evidence != before:
            self._majority_may_change(key, t)
        if unseen:
            for name in unseen:
                self.policy.file_event(os.path.join(key, name), key, Kind.CREATED)
            self.policy.mark_dirty(key)
            return True
        self._publish(t, apply_selection(result, self.selection))
        return False

    def _majority_may_change(self, key: str, t: Tracked) -> None:
        """A round's own generation evidence changed: its run's majority may have too, so
        the run's rounds without evidence of their own are judged again (§6)."""
        assert self.ctx.resolver is not None
        self.ctx.resolver.forget()
        for other_key, other in self.rounds.items():
            if other_key != key and other.run_key == t.run_key and other.judge.evidence is None:
                self.policy.mark_dirty(other_key)

    def _config_of(self, t: Tracked) -> RunConfig:
        """The round's configuration: config.md as of its commit anchor when git has it,
        else the run's working-tree config.md (generations.md §7)."""
        worktree = self.runs[t.run_key]
        if self.overrides.config_file is not None or t.ref.artifact_dir is None:
            return worktree
        data = read_anchor(t.ref, self.ctx.sides)
        if data is None or isinstance(data, ReadFailure):
            return worktree
        sha, _ = commit_anchor(data, per_task=t.ref.is_task)
        if sha is None:
            return worktree
        cached = self.anchored.get((t.run_key, sha))
        if cached is None:
            path = config_path(t.ref.artifact_dir, self.overrides)
            assert path is not None
            blob = self.history.blobs([(path, sha)]).get((path, sha))
            cached = worktree if blob is None else config_from(
                path, t.ref.artifact_dir, blob, self.overrides, sha)
            self.anchored[(t.run_key, sha)] = cached
        return cached

    def _publish(self, t: Tracked, result: RoundResult) -> None:
        self.publisher.publish(t.out, result)

    # -- reconcile ------------------------------------------------------------------
    def reconcile(self) -> None:
        """Compare the tree (names, sizes, mtimes) with what was judged; judge what
        changed. Runs after any sign of lost events and every --rescan seconds."""
        self.stats.reconciles += 1
        self.discover()
        policy = self.policy
        for key, t in self.rounds.items():
            try:
                entries = list(os.scandir(key))
            except OSError:
                self._need_discover = True
                continue
            pending = {os.path.basename(p) for p in policy.unsettled(key)}
            present = set()
            for entry in entries:
                name = entry.name
                if ignored(name):
                    if is_split_residue(name):  # a split killed since: split_incomplete
                        policy.mark_dirty(key)
                    continue
                present.add(name)
                if name in pending:
                    continue
                try:
                    sig = signature(entry.stat(follow_symlinks=False))
                except OSError:
                    continue
                v = t.judge.verdicts.get(name)
                if v is None or v.sig != sig:
                    policy.file_event(entry.path, key, Kind.CREATED)
            if any(n not in present for n in t.judge.verdicts):
                policy.mark_dirty(key)
            for side in self._side_files(t):
                sig2 = _sig_or_none(side)
                if sig2 != self.side_sigs.get(side):
                    self.side_sigs[side] = sig2
                    if sig2 is not None and side.endswith("-verified.md"):
                        policy.round_complete(key)
                    policy.mark_dirty(key)
        for cfg in list(self.config_paths):
            if _sig_or_none(cfg) != self.side_sigs.get(cfg):
                self._reread_config(cfg)
        if self.publisher.has_unwritten():
            self.publisher.retry()


def _sig_or_none(path: str) -> tuple[int, int, int, int] | None:
    try:
        return signature(os.lstat(path))
    except OSError:
        return None


def _mtime(path: str) -> float:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def install_signal_handlers(watcher: Watcher) -> None:
    """SIGINT and SIGTERM stop the loop cleanly; SIGIO (a lease break) is ignored."""

    def handler(signum: int, frame: object) -> None:
        watcher.on_signal()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    if hasattr(signal, "SIGIO"):
        signal.signal(signal.SIGIO, signal.SIG_IGN)
