"""`qrspi-guard hook install` / `uninstall`: the hook's entries in a runtime's settings.

Each runtime reads ``<its directory>/settings.json`` (project: the current directory;
user: the home directory; Claude Code's is ``.claude``, Gemini CLI's ``.gemini``), which
holds ``hooks.<Event>`` as a list of groups ``{"matcher": <tool-name regex>, "hooks":
[<hook>, ...]}``. The runtime's module (:mod:`qrspi_guard.hook.runtimes`) gives its
event names, its matchers and its hook entry (a Gemini hook also carries a ``name``
and a ``timeout`` in milliseconds), and what in its settings keeps a hook from
running (Gemini's ``hooks.disabled``).

Install adds one group per event, whose hook runs ``<program> hook --event <event>``,
unless a hook of ours is there already (so it is idempotent; one whose program
differs is updated). The program works from the agent's shell whatever its PATH: the
``--command`` given, else the absolute path of the running console script (else
``<python> -m qrspi_guard``), quoted for the shell. Uninstall removes exactly our
hooks, whatever their program, and the groups, event lists and
``hooks`` object that the removal leaves empty. Every other key, in ``hooks`` too
(Gemini's ``disabled``, say), is kept. The file is rewritten atomically (a temporary
file in the same directory, fsync, rename) with its mode, after a copy of the old file
is kept beside it as ``settings.json.qrspi-guard.bak``. The rewrite keeps others'
writes: it holds an exclusive ``flock`` on the settings directory (:func:`settings_lock`,
which every writer here takes), reads the file again just before the write, merges into
that, and renames only while the file is still what it read (else reads and merges
again), so an edit made since, by another install or by hand, is not lost. (A writer
that takes no lock, an editor say, can then lose only a write that lands between that
last look and the rename.)

A settings file that does not parse, is not a JSON object, has ``hooks`` of the wrong
shape, is a symbolic link (a rename would replace the link with a file) or is
read-only is left alone: :class:`~qrspi_guard.errors.GuardError`, exit 2.

After an install, :func:`warnings` says what would keep the hooks from running: a
Gemini hook named in ``hooks.disabled``, or a project-scope Gemini install in a folder
Gemini CLI does not trust.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from qrspi_guard.errors import InputError, OutputError
from qrspi_guard.hook.runtimes import BY_NAME
from qrspi_guard.output.files import TargetChanged
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.textsafe import one_line

SETTINGS = "settings.json"
BACKUP_SUFFIX = ".qrspi-guard.bak"
COMMAND = "{program} hook --event {event}"
#: a hook command of ours, whatever its program (a path to qrspi-guard, or -m qrspi_guard)
_OURS = re.compile(r"""(?:^|.*[\s/'"])(?:qrspi-guard|-m\s+qrspi_guard)['"]?\s+hook\s+--event\s+"""
                   r"(pre|post)\s*$")
#: settings files larger than this are not read
MAX_SETTINGS = 4 << 20
#: how long install waits for another writer's lock on the settings, seconds
LOCK_WAIT = 30.0
#: how many times install reads and merges again a file that changed under it
MAX_TRIES = 20


def settings_path(runtime: str, scope: str, cwd: str | None = None,
                  home: str | None = None) -> str:
    """The settings file of *runtime* for *scope*."""
    base = (cwd or os.getcwd()) if scope == "project" else (home or os.path.expanduser("~"))
    return os.path.join(base, BY_NAME[runtime].directory, SETTINGS)


def program(given: str | None = None, argv0: str | None = None) -> str:
    """The program the hook command runs: *given* (``--command``) as it is, else the
    running console script's absolute path, else the ``qrspi-guard`` beside this
    Python, else ``<python> -m qrspi_guard``; quoted for a shell."""
    if given:
        return given
    argv0 = sys.argv[0] if argv0 is None else argv0
    for candidate in (argv0, os.path.join(os.path.dirname(sys.executable), "qrspi-guard")):
        if (candidate and os.path.basename(candidate).startswith("qrspi-guard")
                and os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            return shlex.quote(os.path.abspath(candidate))
    return f"{shlex.quote(sys.executable)} -m qrspi_guard"


def command_for(event: str, prog: str | None = None) -> str:
    return COMMAND.format(program=prog or program(), event=event)


def our_hook(runtime: str, event: str, prog: str | None = None) -> dict[str, Any]:
    """The hook entry install adds for *event* ("pre" or "post")."""
    return BY_NAME[runtime].hook_entry(event, command_for(event, prog))


def ours(hook: object, event: str) -> bool:
    """Whether *hook* (one entry of a settings file's hook list) is the guard's hook for
    *event* (``pre``/``post``): the command runs a qrspi-guard's ``hook --event``."""
    if not (isinstance(hook, dict) and hook.get("type") == "command"):
        return False
    m = _OURS.match(str(hook.get("command", "")))
    return m is not None and m.group(1) == event


def _hooks_of(doc: dict[str, Any], path: str, create: bool) -> dict[str, Any] | None:
    hooks = doc.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = doc["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InputError(f"{one_line(path)}: \"hooks\" is not an object; not changed")
    return hooks


def _event_list(hooks: dict[str, Any], name: str, path: str) -> list[Any] | None:
    groups = hooks.get(name)
    if groups is not None and not isinstance(groups, list):
        raise InputError(f"{one_line(path)}: \"hooks.{name}\" is not a list; not changed")
    return groups


def merge(doc: dict[str, Any], runtime: str, path: str = SETTINGS,
          prog: str | None = None) -> list[str]:
    """Add the hook's groups to *doc* in place (or point ours at *prog*); the events
    changed (empty: all there as they should be)."""
    hooks = _hooks_of(doc, path, create=True)
    assert hooks is not None
    prog = prog or program()
    added = []
    for name, event, matcher in BY_NAME[runtime].install_entries():
        groups = _event_list(hooks, name, path)
        mine = [h for g in groups or () if isinstance(g, dict)
                and isinstance(g.get("hooks"), list) for h in g["hooks"] if ours(h, event)]
        if mine:
            want = command_for(event, prog)
            if any(h["command"] != want for h in mine):
                for h in mine:
                    h["command"] = want
                added.append(name)
            continue
        hooks.setdefault(name, []).append({"matcher": matcher,
                                           "hooks": [our_hook(runtime, event, prog)]})
        added.append(name)
    return added


def unmerge(doc: dict[str, Any], runtime: str, path: str = SETTINGS) -> list[str]:
    """Remove the hook's entries from *doc* in place; the events they were removed from."""
    hooks = _hooks_of(doc, path, create=False)
    if hooks is None:
        return []
    removed = []
    for name, event, _ in BY_NAME[runtime].install_entries():
        groups = _event_list(hooks, name, path)
        if not groups:
            continue
        kept, changed = [], False
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(ours(h, event) for h in inner):
                changed = True
                rest = [h for h in inner if not ours(h, event)]
                if not rest:
                    continue
                group = {**group, "hooks": rest}
            kept.append(group)
        if changed:
            removed.append(name)
            if kept:
                hooks[name] = kept
            else:
                del hooks[name]
    if removed and not hooks:
        del doc["hooks"]
    return removed


def load(path: str) -> tuple[dict[str, Any] | None, bytes | None, int | None]:
    """(the parsed settings, their bytes, the file's mode), or Nones when the file does
    not exist. Raises :class:`GuardError` for a file that must be left alone."""
    doc, data, st = _load(path)
    return doc, data, None if st is None else stat.S_IMODE(st.st_mode)


def _load(path: str) -> tuple[dict[str, Any] | None, bytes | None, os.stat_result | None]:
    """:func:`load`, with the file's ``fstat`` in place of its mode."""
    from qrspi_guard.hook.jsonfile import Unreadable, read

    shown = one_line(path)
    try:
        data, st = read(path, MAX_SETTINGS, follow=False)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{shown} is a symbolic link; not changed (edit the file it "
                             "points to, or replace the link with a file)") from None
        raise InputError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
    except Unreadable as exc:
        raise InputError(f"{shown} is {exc}; not changed") from None
    try:
        doc = jsondoc.loads(data, bom=True)
    except jsondoc.JsonError as exc:
        raise InputError(f"{shown} does not parse as JSON ({one_line(exc.reason, 120)}); "
                         "not changed") from None
    if not isinstance(doc, dict):
        raise InputError(f"{shown} is JSON but not an object; not changed")
    return doc, data, st


def render(doc: dict[str, Any]) -> str:
    return jsondoc.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def write_atomic(path: str, data: bytes, mode: int | None,
                 unchanged: Callable[[Dir, str], bool] | None = None) -> None:
    """*data* into *path* with :func:`qrspi_guard.output.files.write_atomic` (temporary
    file beside it, fsync, rename, fsync the directory): on any failure the old file is
    untouched and no temporary is left. *unchanged*: asked right before the rename
    (:class:`~qrspi_guard.output.files.TargetChanged` when it says no). Raises
    OutputError."""
    from qrspi_guard.output.files import write_atomic as atomic

    try:
        atomic(path, data, mode, unchanged)
    except OSError as exc:
        raise OutputError(f"{one_line(path)}: cannot write: {exc.strerror or exc}") from None


@contextmanager
def settings_lock(path: str) -> Iterator[None]:
    """Hold the lock every writer of the settings file *path* takes: an exclusive
    ``flock`` on its directory (made when missing), released however the process ends.
    Raises OutputError when the directory cannot be made or another holds the lock
    past :data:`LOCK_WAIT` seconds."""
    from qrspi_guard.engine.roundlock import LockTimeout, round_lock

    directory = os.path.dirname(path) or os.curdir
    try:
        os.makedirs(directory, exist_ok=True)
        with round_lock(directory, timeout=LOCK_WAIT):
            yield
    except LockTimeout:
        raise OutputError(f"{one_line(path)}: another process held its lock for "
                          f"{LOCK_WAIT:g} s; not changed") from None
    except OSError as exc:
        raise OutputError(f"{one_line(directory)}: cannot create or lock: "
                          f"{exc.strerror or exc}") from None


def change(path: str, runtime: str, remove: bool, dry_run: bool,
           prog: str | None = None) -> tuple[list[str], str, str | None]:
    """Install (or with *remove*, uninstall) the hook in the settings file at *path*.

    Returns the events changed, the merged file's text and the backup's path (None when
    there was no old file); writes nothing when nothing changes or under *dry_run*.
    The write is a read-modify-write that keeps others' writes: under
    :func:`settings_lock`, the file is read again just before it is written and the
    hook merged into what it holds then, and the rename happens only while the file is
    still what was read (else it is read and merged again): an edit made meanwhile, by
    another install or by hand, is kept. Raises :class:`GuardError` when it cannot.
    """
    events, text, _, _ = _edited(path, runtime, remove, prog)
    if dry_run or not events:
        return events, text, None
    with settings_lock(path):
        for _ in range(MAX_TRIES):
            events, text, old, st = _edited(path, runtime, remove, prog)
            if not events:
                return events, text, None
            mode = None if st is None else stat.S_IMODE(st.st_mode)
            backup = None
            if old is not None:
                backup = path + BACKUP_SUFFIX
                write_atomic(backup, old, mode)
            try:
                write_atomic(path, text.encode("utf-8"), mode, _still(st))
            except TargetChanged:
                continue
            return events, text, backup
    raise OutputError(f"{one_line(path)} changed {MAX_TRIES} times while it was being "
                      "written; not changed")


def _edited(path: str, runtime: str, remove: bool, prog: str | None,
            ) -> tuple[list[str], str, bytes | None, os.stat_result | None]:
    """The file as it is now, with the hook merged in (or taken out): (the events
    changed, the new text, the old bytes, the old file's ``fstat``)."""
    doc, old, st = _load(path)
    if st is not None and not st.st_mode & 0o222:
        raise OutputError(f"{one_line(path)} is read-only; not changed")
    if doc is None:
        doc = {}
    events = unmerge(doc, runtime, path) if remove else merge(doc, runtime, path, prog)
    return events, render(doc), old, st


def _still(st: os.stat_result | None) -> Callable[[Dir, str], bool]:
    """Whether a settings file is still the one whose ``fstat`` was *st* (None: there
    was none): same file, size, and modification and change times."""
    def unchanged(d: Dir, name: str) -> bool:
        try:
            now = d.lstat(name)
        except FileNotFoundError:
            return st is None
        return st is not None and _identity(now) == _identity(st)

    return unchanged


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def warnings(runtime: str, doc_text: str, shown: str, scope: str = "user",
             base: str = "") -> list[str]:
    """What keeps one of our hooks from running, one line each: in the settings install
    wrote (*doc_text*, the file *shown*; Gemini CLI's ``hooks.disabled``), or where they
    are (*scope*, under *base*; a folder Gemini CLI does not trust)."""
    rt = BY_NAME[runtime]
    try:
        doc = jsondoc.loads(doc_text, bom=True)
    except jsondoc.JsonError:
        doc = None
    return (rt.warnings(doc, shown) if isinstance(doc, dict) else []) + \
        rt.place_warnings(scope, base)
