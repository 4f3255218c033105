"""Adopt and undo: the plan carried out, under the checkout's lock.

Both take an exclusive ``flock`` on the checkout's ``scripts/`` directory (there is no
lock file to leave behind; a killed run releases it), then read everything afresh and
plan. A plan with a refused or failed step writes nothing: adopt and undo do all of it
or none of it. ``--dry-run`` plans without the lock and writes nothing at all (not even
the state directory).

The order of the writes, per script, makes every kill resumable by running the same
command again (:mod:`qrspi_guard.adopt.plan` recognises each state in between):

- adopt: the original kept (atomic), its manifest entry (atomic), then the wrapper
  renamed over the script; a kill before the last rename leaves upstream's script in
  place and its copy kept, and the next adopt only writes the wrapper;
- undo: the original renamed over the wrapper, with its mode, then the kept copy
  removed, then its manifest entry; a kill in between leaves the original in place and
  the next undo only tidies up. When no script is adopted any more, the state
  directory is removed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from qrspi_guard.adopt import extras as extra
from qrspi_guard.adopt.dropins import DROPINS, DropIn, sha256
from qrspi_guard.adopt.extras import Extra, Wanted
from qrspi_guard.adopt.plan import DROP, FORGET, RESTORE, WRAP, Step, plan_adopt, plan_undo
from qrspi_guard.adopt.store import (
    Manifest,
    Original,
    Seen,
    Store,
    Where,
    locate,
    look,
    sweep_temps,
)
from qrspi_guard.adopt.wrapper import Wrapper
from qrspi_guard.errors import GuardError, OutputError, PathNotFound, UsageError
from qrspi_guard.output.files import write_in
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import field, record
from qrspi_guard.textsafe import one_line

#: how long adopt or undo waits for another one at work on the same checkout
LOCK_WAIT = 30.0


class LockBusy(GuardError):
    """Another adopt or undo held the checkout's lock for longer than we wait."""


@record(frozen=True)
class Outcome:
    """What adopt or undo did (or, dry, would do): a step per script."""

    where: Where
    steps: list[Step]
    dry_run: bool
    extras: list[Extra] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return any(s.blocked for s in self.steps) or any(e.refused for e in self.extras)

    @property
    def failed(self) -> bool:
        """A step that can never go ahead (not even with --force)."""
        return any(s.error is not None for s in self.steps)


def _scripts_dir(checkout: str) -> Dir:
    """The checkout's ``scripts/``, opened without following a link. Raises
    :class:`GuardError` (exit 2) for a directory that is not an upstream checkout."""
    shown = one_line(checkout)
    if not os.path.exists(checkout):
        raise PathNotFound(checkout)
    if not os.path.isdir(checkout):
        raise UsageError(f"{shown} is not a directory")
    try:
        with Dir.named(checkout) as top:
            return top.subdir("scripts")
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise UsageError(f"{shown}/scripts: {exc.strerror or exc}") from None
    names = ", ".join(d.script for d in DROPINS)
    raise UsageError(f"{shown} is not an upstream checkout: it has no scripts/ directory "
                     f"(looked for {names})")


@contextmanager
def _locked(scripts: Dir, checkout: str, on_wait: Callable[[], None] | None) -> Iterator[None]:
    import fcntl
    import time

    from qrspi_guard.engine.roundlock import flock_within

    try:
        fcntl.flock(scripts.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        if on_wait is not None:
            on_wait()
        if not flock_within(scripts.fd, time.monotonic() + LOCK_WAIT):
            raise LockBusy(f"another adopt or undo is at work on {one_line(checkout)} "
                           f"(waited {LOCK_WAIT:g} s); nothing changed") from None
    try:
        sweep_temps(scripts)  # a killed run's, now that none is at work here
        yield
    finally:
        fcntl.flock(scripts.fd, fcntl.LOCK_UN)


def _steps(scripts: Dir, store: Store, manifest: Manifest,
           decide: Callable[[DropIn, Seen, Seen, Original | None], Step]) -> list[Step]:
    return [decide(d, look(scripts, d.name), store.original(d.script),
                   manifest.originals.get(d.script)) for d in DROPINS]


def adopt(checkout: str, want: Wrapper, *, force: bool = False, dry_run: bool = False,
          known: dict[str, dict[str, str]] | None = None, wanted: Wanted | None = None,
          prog: str = "", on_wait: Callable[[], None] | None = None) -> Outcome:
    """Replace the checkout's drop-in scripts with wrappers running *want*, then set up
    the extras *wanted* (the hook running *prog*, ``hook install``'s program)."""
    where = locate(checkout)

    def decide(d: DropIn, cur: Seen, kept: Seen, entry: Original | None) -> Step:
        return plan_adopt(d, cur, kept, entry, want, force, known)

    def extras() -> list[Extra]:
        return extra.plan(wanted, want.guard, prog) if wanted is not None else []

    with _scripts_dir(checkout) as scripts:
        if dry_run:
            with Store(where) as store:
                store.open(create=False)
                steps = _steps(scripts, store, store.manifest(), decide)
                return Outcome(where, steps, True, extras())
        with _locked(scripts, checkout, on_wait), Store(where) as store:
            store.open(create=False)
            store.sweep()
            manifest = store.manifest()
            outcome = Outcome(where, _steps(scripts, store, manifest, decide), False,
                              extras())
            if outcome.blocked:
                return outcome
            for step in outcome.steps:
                if step.action == WRAP and step.writes:
                    _wrap(scripts, store, manifest, step)
            for item in outcome.extras:
                if item.run is not None:
                    item.run(store, manifest)
            return outcome


def _wrap(scripts: Dir, store: Store, manifest: Manifest, step: Step) -> None:
    script = step.dropin.script
    assert step.data is not None and step.mode is not None
    if step.keep is not None:
        store.open(create=True)
        if store.original(script).data != step.keep:
            store.keep(script, step.keep)
        entry = Original(sha256(step.keep), step.mode)
        if manifest.originals.get(script) != entry:
            manifest.originals[script] = entry
            store.write_manifest(manifest)
    _write_script(scripts, step.dropin.name, step.data, step.mode)


def _write_script(scripts: Dir, name: str, data: bytes, mode: int) -> None:
    try:
        write_in(scripts, name, data, mode, shown=scripts.join(name))
    except OSError as exc:
        raise OutputError(f"cannot write {one_line(scripts.join(name))}: "
                          f"{exc.strerror or exc}; it is as it was") from None


def undo(checkout: str, *, force: bool = False, dry_run: bool = False,
         on_wait: Callable[[], None] | None = None) -> Outcome:
    """Put back every script adopt replaced, byte for byte and with its mode, and take
    out the extras it recorded."""
    where = locate(checkout)

    def decide(d: DropIn, cur: Seen, kept: Seen, entry: Original | None) -> Step:
        return plan_undo(d, cur, kept, entry, force)

    with _scripts_dir(checkout) as scripts:
        if dry_run:
            with Store(where) as store:
                store.open(create=False)
                manifest = store.manifest()
                return Outcome(where, _steps(scripts, store, manifest, decide), True,
                               extra.plan_undo(manifest))
        with _locked(scripts, checkout, on_wait), Store(where) as store:
            if not store.open(create=False):
                return Outcome(where, _steps(scripts, store, Manifest({}, {}), decide), False)
            store.sweep()
            manifest = store.manifest()
            outcome = Outcome(where, _steps(scripts, store, manifest, decide), False,
                              extra.plan_undo(manifest))
            if outcome.blocked:
                return outcome
            for step in outcome.steps:
                if not step.writes:
                    continue
                script = step.dropin.script
                if step.action == RESTORE:
                    assert step.data is not None and step.mode is not None
                    _write_script(scripts, step.dropin.name, step.data, step.mode)
                if step.action in (RESTORE, DROP):
                    store.drop(script)
                if step.action in (RESTORE, DROP, FORGET) and script in manifest.originals:
                    del manifest.originals[script]
                    store.write_manifest(manifest)
            for item in outcome.extras:
                if item.run is not None:
                    item.run(store, manifest)
            store.tidy()
            return outcome
