"""What adopt can also set up in the project whose rounds the loop writes, and undo
takes out again: the agent hook, the pre-commit entry, a baseline of today's rounds.

Each is done by the core that owns it: the hook by ``hook install``'s
(:func:`qrspi_guard.hook.install.change`, the same settings, backup and checks), the
baseline by ``check --write-baseline``'s (the project's judge, then
:func:`qrspi_guard.output.baseline.render`), the pre-commit entry by
:mod:`qrspi_guard.adopt.precommit`. Each is planned before anything is written (a
settings file that does not parse, a config adopt cannot append to: nothing is
written), and each is recorded in the manifest *before* it is made, so that undo,
even after a kill, removes only what adopt made: a hook that was installed already,
a config that already names the guard, or a baseline file already there is left out
of the record and of undo.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from qrspi_guard.adopt import precommit
from qrspi_guard.adopt.dropins import sha256
from qrspi_guard.adopt.store import Manifest, Seen, Store, look
from qrspi_guard.errors import OutputError
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line


@record(frozen=True)
class Wanted:
    """The extras asked for: hooks of these runtimes at *scope*, the pre-commit entry,
    a baseline file (relative to *project*)."""

    project: str
    hooks: tuple[str, ...] = ()
    scope: str = "project"
    pre_commit: bool = False
    baseline: str | None = None

    def any(self) -> bool:
        return bool(self.hooks or self.pre_commit or self.baseline)


@record(frozen=True)
class Extra:
    """One extra's part of the plan: *note* for the user, *run* makes it (None: nothing
    to do), *refused* keeps the whole plan from running."""

    what: str
    note: str
    run: Callable[[Store, Manifest], None] | None = None
    refused: str | None = None
    warning: str | None = None
    #: what to do by hand instead (several lines), with *refused*
    hint: str = ""


def _record(store: Store, manifest: Manifest, key: str, item: dict[str, Any]) -> None:
    """Record *item* under *key* before it is made (see the module docstring)."""
    store.open(create=True)
    items = manifest.extras.setdefault(key, [])
    if item not in items:
        items.append(item)
        store.write_manifest(manifest)


def _unrecord(store: Store, manifest: Manifest, key: str, item: dict[str, Any]) -> None:
    items = manifest.extras.get(key, [])
    if item in items:
        items.remove(item)
        if not items:
            del manifest.extras[key]
        store.write_manifest(manifest)


def _write(path: str, data: bytes) -> None:
    from qrspi_guard.output.files import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise OutputError(f"cannot write {one_line(path)}: {exc.strerror or exc}; it is "
                          "as it was") from None


def _seen(path: str) -> Seen:
    """What stands at *path* (its directory as named; the file itself never followed)."""
    try:
        with Dir.named(os.path.dirname(path)) as d:
            return look(d, os.path.basename(path))
    except FileNotFoundError:
        return Seen("missing")
    except OSError as exc:
        return Seen("odd", why=f"cannot be read: {exc.strerror or exc}")


def _read(path: str) -> str | None:
    seen = _seen(path)
    if seen.kind == "missing":
        return None
    if seen.kind != "file" or seen.data is None:
        raise OutputError(f"{one_line(path)} {seen.why}; not changed")
    return seen.data.decode("utf-8", "surrogateescape")


def plan(wanted: Wanted, guard: tuple[str, ...], prog: str) -> list[Extra]:
    """The extras of *wanted* (no writes). *guard* is what the pre-commit entry runs,
    *prog* the hook's program (``hook install``'s, shell-quoted)."""
    from qrspi_guard.hook.install import change, settings_path, warnings
    from qrspi_guard.hook.runtimes import BY_NAME

    project = os.path.abspath(wanted.project)
    extras = []
    for runtime in wanted.hooks:
        path = settings_path(runtime, wanted.scope, cwd=project)
        events, text, _ = change(path, runtime, False, True, prog)
        what = f"{BY_NAME[runtime].display} hook ({wanted.scope}: {one_line(path)})"
        said = warnings(runtime, text, one_line(path))
        hook: dict[str, Any] = {"runtime": runtime, "settings": path,
                                "created": not os.path.lexists(path)}

        def install(store: Store, manifest: Manifest, item: dict[str, Any] = hook) -> None:
            _record(store, manifest, "hooks", item)
            change(item["settings"], item["runtime"], False, False, prog)

        extras.append(Extra(what, "installed" if events else "already installed",
                            install if events else None,
                            warning="; ".join(said) if said else None))
    baseline = os.path.join(project, wanted.baseline) if wanted.baseline else None
    if wanted.pre_commit:
        path = os.path.join(project, precommit.FILE)
        old = _read(path)
        edit = precommit.add(old, guard, wanted.baseline)
        entry: dict[str, Any] = {"path": path, "added": edit.added, "created": old is None}

        def add(store: Store, manifest: Manifest, item: dict[str, Any] = entry,
                text: str | None = edit.text) -> None:
            assert text is not None
            _record(store, manifest, "pre_commit", item)
            _write(item["path"], text.encode("utf-8", "surrogateescape"))

        extras.append(Extra(
            f"pre-commit entry ({one_line(path)})",
            "already names the guard" if edit.present else "added",
            add if edit.text is not None else None, refused=edit.refused, hint=edit.hint))
    if baseline is not None:
        exists = os.path.lexists(baseline)

        def write(store: Store, manifest: Manifest, path: str = baseline) -> None:
            item = {"path": path}
            _record(store, manifest, "baseline", item)
            data = _baseline_text(project, path).encode()
            _write(path, data)
            _unrecord(store, manifest, "baseline", item)
            _record(store, manifest, "baseline", {"path": path, "sha256": sha256(data)})

        extras.append(Extra(f"baseline ({one_line(baseline)})",
                            "there already; kept as it is" if exists else
                            "written: today's diagnostics", None if exists else write))
    return extras


def _baseline_text(project: str, path: str) -> str:
    """``check --write-baseline``'s text for every round under *project*."""
    from qrspi_guard.judge import judges_for, merge
    from qrspi_guard.output.baseline import render, root_for

    result = merge([judge.paths(group or [project])
                    for judge, group in judges_for([project])])
    return render(result.diagnostics, root_for(path))


def plan_undo(manifest: Manifest) -> list[Extra]:
    """What undo takes out: each extra adopt recorded, when it is still as adopt left it
    (otherwise it stays, with a warning)."""
    from qrspi_guard.hook.install import change
    from qrspi_guard.hook.runtimes import BY_NAME

    extras = []
    for item in list(manifest.extras.get("hooks", [])):
        runtime, path = item.get("runtime"), item.get("settings")
        if runtime not in BY_NAME or not isinstance(path, str):
            continue
        events, _, _ = change(path, runtime, True, True)

        def uninstall(store: Store, manifest: Manifest, item: dict[str, Any] = item) -> None:
            change(item["settings"], item["runtime"], True, False)
            if item.get("created"):
                _remove_emptied(item["settings"])
            _unrecord(store, manifest, "hooks", item)

        extras.append(Extra(f"{BY_NAME[runtime].display} hook ({one_line(path)})",
                            "removed" if events else "not there any more", uninstall))
    for item in list(manifest.extras.get("pre_commit", [])):
        extras.append(_undo_pre_commit(item))
    for item in list(manifest.extras.get("baseline", [])):
        extras.append(_undo_baseline(item))
    return extras


def _remove_emptied(path: str) -> None:
    """A settings file adopt created, emptied by the hook's uninstall (``{}``): removed
    with the backup uninstall kept of it, and its directory when that is empty too, so
    the project is as before adopt. A file holding anything else stays: it is read under
    the lock every writer of the settings takes, so one written meanwhile is kept."""
    from qrspi_guard.hook.install import BACKUP_SUFFIX, load, settings_lock

    if not os.path.lexists(path):
        return
    with settings_lock(path):
        doc, _, _ = load(path)
        if doc != {}:
            return
        for name in (path, path + BACKUP_SUFFIX):
            try:
                os.unlink(name)
            except FileNotFoundError:
                pass
    try:
        os.rmdir(os.path.dirname(path))
    except OSError:
        pass


def _undo_pre_commit(item: dict[str, Any]) -> Extra:
    path = str(item.get("path"))
    text = _read(path)
    what = f"pre-commit entry ({one_line(path)})"
    edit = (precommit.remove(text, str(item.get("added", ""))) if text is not None
            else precommit.Edit(None))

    def take_out(store: Store, manifest: Manifest) -> None:
        if edit.text is not None:
            if item.get("created") and edit.text.strip() == "repos:":
                os.unlink(path)
            else:
                _write(path, edit.text.encode("utf-8", "surrogateescape"))
        _unrecord(store, manifest, "pre_commit", item)

    note = "removed" if edit.text is not None else (
        "not there any more" if text is None else "left as it is")
    return Extra(what, note, take_out, warning=edit.refused)


def _undo_baseline(item: dict[str, Any]) -> Extra:
    path = str(item.get("path"))
    what = f"baseline ({one_line(path)})"
    seen = _seen(path)
    same = seen.data is not None and sha256(seen.data) == item.get("sha256")

    def take_out(store: Store, manifest: Manifest) -> None:
        if same:
            os.unlink(path)
        _unrecord(store, manifest, "baseline", item)

    if same:
        return Extra(what, "removed (unchanged since adopt wrote it)", take_out)
    return Extra(what, "kept: changed since adopt wrote it" if seen.kind == "file"
                 else "not there any more", take_out)
