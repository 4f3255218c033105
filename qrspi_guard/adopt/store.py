"""Where adopt keeps the scripts it replaced, and reading what is on disk.

The originals go in the checkout's git directory, ``.git/qrspi-guard-adopt/``, when the
checkout has one (a ``.git`` directory, or a ``.git`` file naming one, as a linked
worktree has): there ``git status`` shows only the four scripts as modified, ``git
clean -fdx`` cannot delete them, and nothing copies them along with the tree (a plugin
installed from the checkout). A checkout without git (an unpacked archive) keeps them
in ``.qrspi-guard-adopt/`` beside ``scripts/``, with a ``.gitignore`` of ``*`` inside.

Inside: ``originals/<script name>`` (each the script's bytes, mode 0600: an original
may have had no read permission) and ``manifest.json``, ``{"version": 1,
"originals": {"scripts/NAME.sh": {"sha256", "mode"}}, "extras": {...}}``: the sha256
proves a copy intact before undo restores it, the mode is the one undo gives back.

Every write is :func:`qrspi_guard.output.files.write_in` (temp file, fsync, rename,
directory fsync) relative to a directory descriptor, and every name below the checkout
and the state directory is opened without following a link.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from qrspi_guard.errors import InputError, OutputError
from qrspi_guard.output.files import TEMP_PREFIX, TEMP_SUFFIX, write_in
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.capped import FILE_CAP, Refused, read_regular
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

STATE = "qrspi-guard-adopt"
DOT_STATE = ".qrspi-guard-adopt"
MANIFEST = "manifest.json"
ORIGINALS = "originals"
MANIFEST_VERSION = 1
#: a script, an original or the manifest larger than this is not read
MAX_BYTES = FILE_CAP


@record(frozen=True)
class Seen:
    """What stands at a script's path: ``file`` (with its bytes and mode), ``missing``,
    or ``odd`` (a link, a directory, a FIFO, too large, unreadable: *why* says which)."""

    kind: str
    data: bytes | None = None
    mode: int | None = None
    why: str = ""


def look(d: Dir, name: str, follow: bool = False, cap: int = MAX_BYTES) -> Seen:
    """The file *name* in *d*, read without blocking and with a size cap, and (unless
    *follow*: a file the user named) without following a link
    (:func:`~qrspi_guard.parse.capped.read_regular`)."""
    try:
        data, st = read_regular(name, cap, follow=follow, dir_fd=d.fd)
    except FileNotFoundError:
        return Seen("missing")
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            return Seen("odd", why="is a symbolic link")
        return Seen("odd", why=f"cannot be read: {exc.strerror or exc}")
    except Refused as exc:
        if exc.too_large:
            return Seen("odd", why=f"is larger than {cap >> 10} KiB or not a regular file")
        return Seen("odd", why="is not a regular file")
    return Seen("file", data, stat.S_IMODE(st.st_mode))


@record(frozen=True)
class Where:
    """A checkout and its state directory (*parent*/*name*)."""

    checkout: str
    parent: str
    name: str

    @property
    def state(self) -> str:
        return os.path.join(self.parent, self.name)

    @property
    def in_git(self) -> bool:
        return self.name == STATE

    def shown(self) -> str:
        """The state directory as a user reads it: relative to the checkout when below."""
        rel = os.path.relpath(self.state, self.checkout)
        return one_line(rel if not rel.startswith("..") else self.state)


def locate(checkout: str) -> Where:
    """Where *checkout*'s adoption state lives (see the module docstring)."""
    checkout = os.path.abspath(checkout)
    dotgit = os.path.join(checkout, ".git")
    if os.path.isdir(dotgit):
        return Where(checkout, dotgit, STATE)
    if os.path.isfile(dotgit):
        gitdir = _gitdir_of(dotgit)
        if gitdir is not None:
            return Where(checkout, os.path.normpath(os.path.join(checkout, gitdir)), STATE)
    return Where(checkout, checkout, DOT_STATE)


def _gitdir_of(dotgit: str) -> str | None:
    """The directory a ``.git`` file names (``gitdir: PATH``), when it is one; read
    without waiting (a FIFO swapped in after the look is None, never a hang)."""
    try:
        head, _ = read_regular(dotgit, 4096)
    except Refused as exc:
        if not exc.too_large:
            return None
        head = exc.data  # the first line is all it needs
    except OSError:
        return None
    line = head.decode("utf-8", "replace").split("\n", 1)[0].strip()
    if not line.startswith("gitdir:"):
        return None
    path = os.path.join(os.path.dirname(dotgit), line[len("gitdir:"):].strip())
    return path if os.path.isdir(path) else None


@record(frozen=True)
class Original:
    """A kept script: its bytes' sha256 and its permission bits."""

    sha256: str
    mode: int


@record
class Manifest:
    originals: dict[str, Original]
    extras: dict[str, Any]

    def empty(self) -> bool:
        return not self.originals and not self.extras

    def to_json(self) -> bytes:
        doc = {"version": MANIFEST_VERSION,
               "originals": {k: {"sha256": v.sha256, "mode": v.mode}
                             for k, v in sorted(self.originals.items())},
               "extras": self.extras}
        return (jsondoc.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode()


def parse_manifest(data: bytes, shown: str) -> Manifest:
    """The manifest in *data*. Raises :class:`InputError` naming *shown*."""
    bad = InputError(f"{shown} is not a manifest adopt wrote; leave it alone or remove "
                     "the directory it is in")
    try:
        doc = jsondoc.loads(data)
    except jsondoc.JsonError:
        raise bad from None
    if not isinstance(doc, dict) or doc.get("version") != MANIFEST_VERSION:
        raise bad
    raw, extras = doc.get("originals"), doc.get("extras", {})
    if not isinstance(raw, dict) or not isinstance(extras, dict) or not all(
            isinstance(items, list) and all(isinstance(i, dict) for i in items)
            for items in extras.values()):
        raise bad
    originals = {}
    for script, entry in raw.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                and type(entry.get("mode")) is int and 0 <= entry["mode"] <= 0o7777):
            raise bad
        originals[script] = Original(entry["sha256"], entry["mode"])
    return Manifest(originals, extras)


class Store:
    """The state directory of one checkout, opened (or not there yet)."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self._dir: Dir | None = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._dir is not None:
            self._dir.close()
            self._dir = None

    def _fail(self, what: str, exc: OSError) -> OutputError:
        return OutputError(f"{self.where.shown()}: cannot {what}: {exc.strerror or exc}")

    def open(self, create: bool) -> bool:
        """Open the state directory (creating it with *create*); False when it is not
        there. A link in its place is refused."""
        if self._dir is not None:
            return True
        try:
            parent = Dir.named(self.where.parent)
        except OSError as exc:
            raise self._fail("open its parent", exc) from None
        with parent:
            made = False
            if create:
                try:
                    os.mkdir(self.where.name, 0o700, dir_fd=parent.fd)
                    made = True
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise self._fail("create it", exc) from None
            try:
                self._dir = parent.subdir(self.where.name)
            except FileNotFoundError:
                return False
            except OSError as exc:
                raise self._fail("open it", exc) from None
            if made:
                parent.fsync()
        if not self.where.in_git:
            self._write(".gitignore", b"# qrspi-guard adopt: its kept scripts\n*\n", 0o644,
                        only_if_missing=True)
        return True

    @property
    def dir(self) -> Dir:
        assert self._dir is not None, "Store.open first"
        return self._dir

    def _write(self, name: str, data: bytes, mode: int, only_if_missing: bool = False,
               where: Dir | None = None) -> None:
        d = where or self.dir
        if only_if_missing and d.exists(name):
            return
        try:
            write_in(d, name, data, mode, shown=d.join(name))
        except OSError as exc:
            raise self._fail(f"write {one_line(name)}", exc) from None

    def sweep(self) -> None:
        """:func:`sweep_temps` in the state directory and ``originals/``."""
        if self._dir is None:
            return
        sweep_temps(self.dir)
        d = self._originals(create=False)
        if d is not None:
            with d:
                sweep_temps(d)

    def manifest(self) -> Manifest:
        """The manifest (an empty one when there is none yet)."""
        if self._dir is None:
            return Manifest({}, {})
        seen = look(self.dir, MANIFEST)
        if seen.kind == "missing":
            return Manifest({}, {})
        shown = f"{self.where.shown()}/{MANIFEST}"
        if seen.kind != "file" or seen.data is None:
            raise InputError(f"{shown} {seen.why}; not changed")
        return parse_manifest(seen.data, shown)

    def write_manifest(self, manifest: Manifest) -> None:
        self._write(MANIFEST, manifest.to_json(), 0o600)

    def _originals(self, create: bool) -> Dir | None:
        if create:
            try:
                os.mkdir(ORIGINALS, 0o700, dir_fd=self.dir.fd)
            except FileExistsError:
                pass
            except OSError as exc:
                raise self._fail("create originals/", exc) from None
        try:
            return self.dir.subdir(ORIGINALS)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._fail("open originals/", exc) from None

    def original(self, script: str) -> Seen:
        """The kept copy of *script* (``missing`` when there is none)."""
        if self._dir is None:
            return Seen("missing")
        d = self._originals(create=False)
        if d is None:
            return Seen("missing")
        with d:
            return look(d, _name(script))

    def keep(self, script: str, data: bytes) -> None:
        """Keep *data* as *script*'s original (old-or-new)."""
        d = self._originals(create=True)
        assert d is not None
        with d:
            self._write(_name(script), data, 0o600, where=d)

    def drop(self, script: str) -> None:
        """Remove *script*'s kept copy (gone already is fine)."""
        d = self._originals(create=False)
        if d is None:
            return
        with d:
            try:
                d.unlink(_name(script))
                d.fsync()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._fail(f"remove originals/{_name(script)}", exc) from None

    def tidy(self) -> None:
        """Remove the state directory when it holds nothing adopt still needs: after an
        undo, ``git status`` and the checkout are as before adopt."""
        if self._dir is None or not self.manifest().empty():
            return
        d = self._originals(create=False)
        if d is not None:
            with d:
                if d.listdir():
                    return
        for name in (MANIFEST, ".gitignore"):
            try:
                self.dir.unlink(name)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._fail(f"remove {name}", exc) from None
        for name in (ORIGINALS,):
            try:
                os.rmdir(name, dir_fd=self.dir.fd)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._fail(f"remove {name}/", exc) from None
        self._dir.close()
        self._dir = None
        try:
            with Dir.named(self.where.parent) as parent:
                os.rmdir(self.where.name, dir_fd=parent.fd)
                parent.fsync()
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTEMPTY, errno.EEXIST):
                raise self._fail("remove it", exc) from None


def sweep_temps(d: Dir) -> None:
    """Remove the temp files a killed write left in *d* (``.guard-*.tmp``, made only by
    :func:`~qrspi_guard.output.files.write_in`). Call it holding the checkout's lock:
    no other adopt or undo is writing there then."""
    try:
        names = d.listdir()
    except OSError:
        return
    for name in names:
        if name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX):
            try:
                d.unlink(name)
            except OSError:
                pass


def _name(script: str) -> str:
    return script.rsplit("/", 1)[-1]
