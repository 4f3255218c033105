"""A dispatch manifest's commands (``await_cmd``, ``split_cmd``): checked, then run
without a shell, bounded in time (loop.md ``await``).

The manifest is a file anything with the round's path can write, so its commands are
untrusted: each is ``shlex``-split (never given to a shell); its argv[0] must not start
with ``-``; a bare name must be on :data:`BARE_NAMES` (found on the absolute entries of
``PATH``); a path must resolve (symbolic links followed) under an exec root, and never
into a place reviewers write (:func:`reviewer_writable`: the round directory and, in a
run's layout, the whole ``reviews/`` tree), even when an exec root holds it. The exec
roots themselves come from ``QRSPI_AWAIT_EXEC_ROOTS`` and the repository ``await`` was
started in (:func:`exec_roots`), never from the round. The program run is the resolved
path, so a link swapped after the check changes nothing. Each command runs in its own
process group with its output discarded; past its timeout the whole group is killed.
"""

from __future__ import annotations

import os
import shlex
import signal
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # imported when a command runs: a drain with none starts faster
    import subprocess

#: bare program names a manifest may use without a path (upstream's allow-list)
BARE_NAMES = frozenset({"codex"})
#: the environment variable naming extra exec roots, colon-separated
ROOTS_ENV = "QRSPI_AWAIT_EXEC_ROOTS"
#: how long a timed-out command's group gets between SIGTERM and SIGKILL
KILL_GRACE = 1.0


@record(frozen=True)
class Checked:
    """A command that may run: the argv to run (argv[0] resolved), or why it may not."""

    argv: tuple[str, ...] = ()
    refusal: str | None = None


@record(frozen=True)
class Ran:
    """How a command ended: ``ok``, or the one-line cause (``failure``)."""

    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None


@record(frozen=True)
class Writable:
    """A place reviewers write, resolved, and how a message names it."""

    path: str
    label: str


def reviewer_writable(round_dir: str) -> tuple[Writable, ...]:
    """The places reviewers write, for a drain of *round_dir* (loop.md): the round
    directory and, in a run's layout, the whole ``reviews/`` tree above it."""
    from qrspi_guard.parse.nofollow import reviews_tree

    out = [Writable(os.path.realpath(round_dir), "the round directory")]
    tree = reviews_tree(round_dir)
    if tree is not None:
        out.append(Writable(os.path.realpath(tree), "the run's reviews/ tree"))
    return tuple(out)


def writable_holding(path: str, writable: Sequence[Writable]) -> Writable | None:
    """The place of *writable* that holds the resolved *path*, if any."""
    return next((w for w in writable if _under(path, w.path)), None)


def exec_roots(env_value: str | None, toplevel: str | None) -> list[str]:
    """The exec roots, resolved: each existing directory of *env_value* (colon-separated)
    and ``<toplevel>/scripts``."""
    candidates = [p for p in (env_value or "").split(":") if p]
    if toplevel:
        candidates.append(os.path.join(toplevel, "scripts"))
    roots = []
    for path in candidates:
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in roots:
            roots.append(real)
    return roots


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _which(name: str) -> str | None:
    """*name* on the absolute entries of PATH (a relative entry would mean the cwd)."""
    import shutil

    entries = [p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
               if os.path.isabs(p)]
    found = shutil.which(name, path=os.pathsep.join(entries))
    return os.path.realpath(found) if found else None


def check_command(text: object, kind: str, cwd: str, roots: Sequence[str],
                  writable: Sequence[Writable]) -> Checked:
    """*text* (a manifest's ``await_cmd`` or ``split_cmd``, *kind*) as an argv that may
    run from *cwd*, or the refusal naming *kind*. Never runs anything."""
    if not isinstance(text, str):
        return Checked(refusal=f"{kind} is not a string; refused")
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        return Checked(refusal=f"{kind} parse error: {one_line(str(exc), 80)}; refused")
    if not argv:
        return Checked(refusal=f"{kind} is empty after parsing; refused")
    exe = argv[0]
    shown = one_line(exe, 60)
    if exe.startswith("-"):
        return Checked(refusal=f"{kind} rejected: argv[0] {shown} must not start with '-'")
    if "/" not in exe:
        if exe not in BARE_NAMES:
            return Checked(refusal=f"{kind} rejected: bare name {shown} is not in the "
                                   f"allowlist ({', '.join(sorted(BARE_NAMES))}); use a path "
                                   "under an exec root")
        resolved = _which(exe)
        if resolved is None:
            return Checked(refusal=f"{kind} failed: {shown} is not on PATH")
    else:
        resolved = os.path.realpath(os.path.join(cwd, exe))
        if not any(_under(resolved, root) for root in roots):
            return Checked(refusal=f"{kind} rejected: {shown} resolves outside the exec roots "
                                   f"({ROOTS_ENV} and <git top level>/scripts)")
    place = writable_holding(resolved, writable)
    if place is not None:
        return Checked(refusal=f"{kind} rejected: {shown} resolves inside {place.label}, "
                               "which reviewers write")
    if not (os.path.isfile(resolved) and os.access(resolved, os.X_OK)):
        return Checked(refusal=f"{kind} failed: {shown} is not an executable file")
    return Checked(argv=(resolved, *argv[1:]))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the command's process group, SIGKILL after a grace; reaps the leader."""
    import subprocess

    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
            if sig == signal.SIGTERM:
                _kill_rest(proc.pid)
            return
        except subprocess.TimeoutExpired:
            continue


def _kill_rest(pgid: int) -> None:
    """The leader is gone; any member of its group still there is killed too."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


#: the signals that unwind a running drain (``cli.process.term_as_exit``, Ctrl-C): held
#: from the start of a command until its group can be killed on them
_UNWINDING = frozenset({signal.SIGTERM, signal.SIGHUP, signal.SIGINT})


def run_command(argv: Sequence[str], kind: str, cwd: str, timeout: float) -> Ran:
    """Run a checked *argv* in *cwd*, no shell, output discarded, in its own process
    group. Past *timeout* seconds the group is killed: ``Ran`` names the timeout. If
    this process is interrupted meanwhile (a signal raising SystemExit, Ctrl-C), the
    group is killed before the interruption goes on: the signals that interrupt are
    held from before the command starts until the wait that kills on them, so none can
    land between the start and that wait (the command itself gets the mask it would
    have had)."""
    import subprocess
    from functools import partial

    held = signal.pthread_sigmask(signal.SIG_BLOCK, _UNWINDING)
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True,
                                preexec_fn=partial(signal.pthread_sigmask,
                                                   signal.SIG_SETMASK, held))
    except BaseException as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if not isinstance(exc, OSError):
            raise
        return Ran(f"{kind} could not start: {one_line(exc.strerror or str(exc), 80)}")
    try:
        # a signal held since before the start is handled here, where it kills the group
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return Ran(f"{kind} timed out after {timeout:g} s (--timeout); its process group "
                   "was killed")
    except BaseException:
        _kill_group(proc)
        raise
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return Ran(f"{kind} was killed by {name}")
    if code != 0:
        return Ran(f"{kind} failed (exit {code})")
    return Ran()
