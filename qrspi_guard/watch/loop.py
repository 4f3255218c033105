"""The watch loop: start-up scan, incremental re-evaluation, reconcile scans, output.

State lives on disk: the loop rebuilds everything from the tree at start, keeps one
cached verdict per settled file (:class:`~.judge.RoundJudge`), and rewrites a round's
status file only when its content (apart from ``checked_at``) changes
(:mod:`.publish` writes it, and retries a failed write until it succeeds).

Stopping: SIGINT and SIGTERM stop the loop with exit 0 wherever it is, at start-up too (a
blocked scan is interrupted), but a status or events write is finished first.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from qrspi_guard import voice
from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.layout import Kind as NameKind
from qrspi_guard.contract.layout import (
    RoundRef,
    classify,
    is_split_residue,
    round_number,
    status_file_name,
    verified_file_names,
)
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine import RoundResult
from qrspi_guard.engine.discover import discover_dir, with_step
from qrspi_guard.engine.entries import Context
from qrspi_guard.engine.sides import SideFiles
from qrspi_guard.judge import Judge
from qrspi_guard.output.status import without_timestamp, write_atomic
from qrspi_guard.settings.selection import DEFAULT, Selection
from qrspi_guard.textsafe import one_line
from qrspi_guard.watch.configs import WatchedConfigs, run_key
from qrspi_guard.watch.events import EventKind, EventSource, FsEvent
from qrspi_guard.watch.judge import RoundJudge, ignored
from qrspi_guard.watch.links import LinkedRounds, linked_rounds
from qrspi_guard.watch.options import Options as Options
from qrspi_guard.watch.policy import Policy, Probe, lease_probe, peek_frontmatter_closed
from qrspi_guard.watch.publish import (
    LineSink,
    Publisher,
    RoundOutput,
    read_previous,
    sweep_stale_temps,
)
from qrspi_guard.watch.reconcile import mtime_or_zero, reconcile_rounds, sig_or_none
from qrspi_guard.watch.registry import Registry, Tracked

_CONFIG_OWNER = "config:"
#: the longest single wait for events (a bound far below threading.TIMEOUT_MAX)
MAX_WAIT = 3600.0


class RootGone(Exception):
    """ROOT disappeared while watching."""


class Stopped(BaseException):
    """SIGINT or SIGTERM arrived: unwind to :meth:`Watcher.run`, exit 0. A BaseException
    no ``except Exception`` swallows; raised from the signal handler, it also interrupts a
    system call that would be retried (an ``open`` blocked on a FIFO named config.md)."""


class Watcher:
    """Keeps every round below *root* current. :meth:`run` returns the exit code."""

    def __init__(self, root: str, overrides: Overrides, source: EventSource,
                 options: Options | None = None, *,
                 out: Callable[[str], object] = print,
                 err: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time,
                 probe: Callable[[str], Probe] = lease_probe,
                 peek: Callable[[str], bool] = peek_frontmatter_closed,
                 write: Callable[[str, bytes], None] = write_atomic,
                 selection: Selection = DEFAULT, judge: Judge | None = None,
                 on_result: Callable[[RoundResult, float | None], None] | None = None,
                 turn: Callable[[], Any] | None = None) -> None:
        self.on_result = on_result
        self.turn = turn or contextlib.nullcontext  #: wraps each turn (the live view's)
        self.root = os.path.abspath(root)
        self.display_root = root
        #: the one judge every round is judged by (the settings found from ROOT)
        self.judge = judge or Judge.using(overrides, selection)
        self.overrides = self.judge.overrides
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
        self.registry = Registry()
        self.rounds = self.registry.rounds  #: round dir (absolute) -> tracked round
        #: judging context shared by every round: the generation resolver remembers each
        #: run's majority until a round's evidence changes (generations.md §6)
        self.ctx = Context(self.overrides, SideFiles(cache=True))  # forgotten on change
        self.configs = WatchedConfigs(self.overrides, self.ctx.sides)
        self.side_sigs: dict[str, Any] = {}  #: reconcile snapshot of side files and configs
        #: files judged in rounds no longer tracked (their judges are gone)
        self.dropped_parses = 0
        self._need_discover = False
        self._suspects: set[str] = set()  #: round-like dirs that asked for a discovery
        self._not_rounds: set[str] = set()  #: ... and turned out not to be rounds
        self._links = LinkedRounds()  #: rounds a symbolic link stands in place of
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
        self.source.put(FsEvent(EventKind.STOP))

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
            self._say(f"stopped ({voice.plural(self.files_judged(), 'file')} judged, "
                      f"{voice.plural(self.status_writes, 'status write')})")
        return code

    def _say(self, what: str) -> None:
        self.err(voice.line("watch", what))

    def _fail(self, what: str) -> int:
        self.err(voice.error_line("watch", what))
        return 2

    def _run(self) -> int:
        shown = one_line(self.display_root)
        if not os.path.isdir(self.root):
            why = "not a directory" if os.path.lexists(self.root) else "path not found"
            return self._fail(f"{why}: {shown}")
        if self.events is not None:
            try:
                self.events.open()
            except OSError as exc:
                return self._fail(f"cannot open {one_line(self.opt.events_file)}: "
                                  f"{exc.strerror or exc}")
        try:
            self.source.start()
        except OSError as exc:
            return self._fail(f"cannot watch {shown}: {exc.strerror or exc}")
        try:
            if self.source.note:
                self._say(self.source.note)
            self._say(f"scanning {shown}")
            self.discover()
            self.tick()
            self._say(f"watching {shown} ({self.source.mode}), "
                      f"{voice.plural(len(self.rounds), 'round')}")
            while not self._stop.is_set():
                events = self.source.get(self._timeout())
                if any(e.kind is EventKind.STOP for e in events):
                    break
                with self.turn():  # what a turn changes is drawn once, at its end
                    self.apply(events)
                    self.tick()
            return 0
        except RootGone:
            return self._fail(f"{shown} was deleted; stopping")

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
        return self.dropped_parses + sum(t.judge.parses for t in self.rounds.values())

    # -- discovery ------------------------------------------------------------------
    def discover(self) -> None:
        """Find the rounds below ROOT; track new ones, drop vanished ones."""
        self._need_discover = False
        if not os.path.isdir(self.root):
            raise RootGone
        found: dict[str, RoundRef] = {}
        diags: list[Diagnostic] = []
        for item in discover_dir(self.root):
            if isinstance(item, Diagnostic):
                diags.append(item)
                continue
            ref = with_step(item, self.overrides.step)
            found.setdefault(os.path.normpath(ref.round_dir), ref)
        linked = linked_rounds(diags, {k: t.ref for k, t in self.rounds.items()},
                               self.overrides.step)
        for key in [k for k in self.rounds if k not in found]:
            self._drop(key)
        self._links.publish(linked, self.configs, self.judge.selection,
                            self.publisher.publish)
        new = [k for k in found if k not in self.rounds]
        for key in sorted(new):
            self._track(key, found[key])
        self._not_rounds = (self._not_rounds | self._suspects) - set(self.rounds)
        self._suspects = set()
        for other in self.registry.earlier_than(new):  # a later round appeared
            self.policy.round_complete(other)

    def _track(self, key: str, ref: RoundRef) -> None:
        cfg = self.configs.track(ref)
        if cfg is not None:
            self.side_sigs[cfg] = sig_or_none(cfg)
        spath = (os.path.join(ref.step_dir, status_file_name(ref.round))
                 if ref.has_status_file and ref.round is not None else None)
        t = Tracked(ref, RoundJudge(ref, self.ctx), run_key(ref), RoundOutput(spath, ref.round_dir))
        previous = read_previous(spath) if spath is not None else None
        if previous is not None:
            t.out.last_core = without_timestamp(previous)
        if self.registry.add(key, t):
            for name in sweep_stale_temps(t.step_key, self.wall()):
                self._say(f"removed {one_line(name)} in {one_line(ref.step_dir)}, a temp "
                          "file left by an interrupted status write")
        names = t.judge.listing() or []
        newest = mtime_or_zero(key)
        for name in names:
            newest = max(newest, mtime_or_zero(os.path.join(key, name)))
            self.policy.file_event(os.path.join(key, name), key, EventKind.CREATED)
        self.policy.round_seen(key, age=self.wall() - newest if newest else 0.0)
        if self.registry.later_round_exists(t) or any(
            os.path.isfile(p) for p in t.verified_paths()):
            self.policy.round_complete(key)
        for side in t.side_files():
            self.side_sigs[side] = sig_or_none(side)

    def _drop(self, key: str) -> None:
        t = self.registry.drop(key)
        self.dropped_parses += t.judge.parses
        self.publisher.forget(t.out)
        self.policy.round_gone(key)

    # -- events ---------------------------------------------------------------------
    def apply(self, events: list[FsEvent]) -> None:
        policy = self.policy
        for e in events:
            kind = e.kind
            if kind in (EventKind.LOSS, EventKind.MODE):
                if kind is EventKind.MODE:  # fell back to polling: say so, then reconcile
                    self._say(one_line(e.detail))
                    policy.now_polling(getattr(self.source, "poll_interval", 0.5))
                policy.loss()
                self.ctx.sides.forget()
                continue
            path = os.path.abspath(e.path) if e.path else ""
            if os.path.dirname(path) not in self.rounds:  # a step's listing may change
                self.ctx.sides.forget(os.path.dirname(path))
            if kind in (EventKind.DIR_CREATED, EventKind.DIR_DELETED):
                if kind is EventKind.DIR_DELETED and path == self.root:
                    raise RootGone
                parent = os.path.dirname(path)
                if parent in self.rounds:  # a directory inside a round is an entry
                    if kind is EventKind.DIR_CREATED:
                        policy.file_event(path, parent, EventKind.MOVED_IN)
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
                if kind is EventKind.DELETED:
                    policy.file_deleted(path, parent)
                elif classify(name).kind is NameKind.UNKNOWN:
                    # Tools' own temp names (`sed -i`'s sedXXXXXX, tempfile's tmpXXXX) are
                    # renamed away at once: an unknown name is judged after a quiet time.
                    policy.file_event(path, parent, EventKind.MODIFIED)
                else:
                    policy.file_event(path, parent, kind)
                continue
            owner = self.registry.side_owner(parent, name)
            if owner is not None:
                if kind is EventKind.DELETED:
                    policy.mark_dirty(owner)
                else:
                    policy.file_event(path, owner, kind)
                continue
            if path in self.configs.paths:
                if kind is EventKind.DELETED:
                    self._reread_config(path)
                else:
                    policy.file_event(path, _CONFIG_OWNER + path, kind)
                continue
            if round_number(name) is not None and kind is not EventKind.DELETED:
                self._need_discover = True  # a `round-NN` that is no directory: a link?
                continue
            if parent not in self._not_rounds and not ignored(name) \
                    and os.path.basename(parent).startswith("round"):
                self._suspects.add(parent)  # a file in a round we do not know (yet)
                self._need_discover = True

    def _reread_config(self, cfg: str) -> None:
        self.side_sigs[cfg] = sig_or_none(cfg)
        for key in self.configs.reread(cfg):
            for round_key, t in self.rounds.items():
                if t.run_key == key:
                    self.policy.mark_dirty(round_key)

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
        if path in self.configs.paths:
            self._reread_config(path)
            return
        owner = self.registry.side_owner(parent, name)
        if owner is not None:
            if name in verified_file_names(self.rounds[owner].number):
                self.policy.round_complete(owner)
            self.policy.mark_dirty(owner)

    def evaluate(self, key: str) -> bool:
        """Re-evaluate one round; True when it has entries never seen (settle them first)."""
        t = self.rounds[key]
        evident = self.registry.later_round_exists(t) or any(
            os.path.isfile(p) for p in t.verified_paths())
        if not self.policy.is_complete(key) and evident:
            self.policy.round_complete(key)
        complete = self.policy.is_complete(key)
        # completed by the quiet time alone: a silent reviewer's halt says so (report.md)
        t.out.quiet = self.opt.settle if complete and not evident else None
        exclude = {os.path.basename(p) for p in self.policy.unsettled(key)}
        before = t.judge.evidence
        config = self.configs.of(t.ref)
        result = self.judge.judge(t.ref, run=config, ctx=self.ctx, complete=complete,
                                  cache=t.judge.begin(exclude), ignore_temp=True)
        unseen = t.judge.unseen
        if t.judge.evidence != before:
            self._majority_may_change(key, t)
        if unseen:
            for name in unseen:
                self.policy.file_event(os.path.join(key, name), key, EventKind.CREATED)
            self.policy.mark_dirty(key)
            return True
        self._publish(t, result)
        return False

    def _majority_may_change(self, key: str, t: Tracked) -> None:
        """A round's own generation evidence changed: its run's majority may have too, so
        the run's rounds without evidence of their own are judged again (§6)."""
        assert self.ctx.resolver is not None
        self.ctx.resolver.forget()
        for other_key, other in self.rounds.items():
            if other_key != key and other.run_key == t.run_key and other.judge.evidence is None:
                self.policy.mark_dirty(other_key)

    def _publish(self, t: Tracked, result: RoundResult) -> None:
        self.publisher.publish(t.out, result)
        if self.on_result is not None:  # the live overview (report.md)
            self.on_result(result, t.out.quiet)

    # -- reconcile ------------------------------------------------------------------
    def reconcile(self) -> None:
        """Compare the tree (names, sizes, mtimes) with what was judged; judge what
        changed. Runs after any sign of lost events and every --rescan seconds."""
        self.ctx.sides.forget()
        self.discover()
        if not reconcile_rounds(self.rounds, self.policy, self.side_sigs):
            self._need_discover = True
        for cfg in list(self.configs.paths):
            if sig_or_none(cfg) != self.side_sigs.get(cfg):
                self._reread_config(cfg)
        if self.publisher.has_unwritten():
            self.publisher.retry()
