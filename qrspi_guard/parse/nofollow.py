"""Round paths opened without following symbolic links: directory descriptors.

check's walk never follows a link standing where a `reviews/`, step or round directory
would be (`symlink_in_round_dir`). Everything that acts on such a directory — a status
file written beside a round, split's files written into one, a round read — opens it
here: :func:`open_round_dir` opens the part of the path above `reviews/` as the user
named it (their own links are theirs; so is a path with no `reviews/` at all: a bare
round, a ``mktemp -d`` split target), then every component from `reviews/` down one by one,
relative to the previous descriptor, with ``O_NOFOLLOW | O_DIRECTORY``. A link swapped
in at any of those places, before or during the run, is ``ELOOP`` ("a symbolic link,
never followed"), never a write somewhere else; and once a :class:`Dir` is open, every
name is resolved relative to its descriptor (``dir_fd=``), never by re-resolving the
path, so a swap after the open changes nothing either.
"""

from __future__ import annotations

import errno
import os
import stat
from types import TracebackType

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)
#: a directory the user named: their own links are followed
_NAMED_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: the name of the directory below which a run's directories are never followed
REVIEWS = "reviews"
#: the deepest tree :meth:`Dir.remove_tree` removes (a scratch directory, never deep)
MAX_REMOVE_DEPTH = 32


def link_refused(shown: str) -> OSError:
    return OSError(errno.ELOOP, "a symbolic link stands there (never followed)", shown)


def _components(path: str) -> tuple[str, list[str]]:
    """(the part opened as named, the components opened one by one without following):
    everything from the last `reviews` component down; a path with no `reviews`
    component (a bare round, ``mktemp -d``) is the user's own and opened as named."""
    norm = os.path.abspath(path)  # `..` from inside a round is still below reviews/
    parts = [p for p in norm.split(os.sep) if p]
    cut = len(parts)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] == REVIEWS:
            cut = i
            break
    return os.sep + os.sep.join(parts[:cut]), parts[cut:]


def reviews_tree(path: str) -> str | None:
    """The `reviews` directory *path* is in or below (its last component so named, the
    path made absolute), or None when no component of *path* is `reviews`."""
    head, below = _components(path)
    return os.path.join(head, REVIEWS) if below else None


def open_round_dir(path: str, create: bool = False) -> int:
    """A descriptor of directory *path*, its `reviews/`-and-below components opened
    without following links. With *create*, missing directories are made on the way:
    the part above `reviews/` as named, each one below relative to its parent's
    descriptor (never through a link). Raises OSError (``ELOOP`` naming *path*
    for a link)."""
    head, below = _components(path)
    if create:
        os.makedirs(head, exist_ok=True)
    fd = os.open(head, _NAMED_FLAGS)
    try:
        for part in below:
            if create:
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                nxt = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
                    raise link_refused(path) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


class Dir:
    """An open directory; every name is resolved relative to its descriptor, and never
    through a symbolic link at the last component. *path* is for messages only."""

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path

    @classmethod
    def round_path(cls, path: str, create: bool = False) -> Dir:
        """:func:`open_round_dir`. Raises OSError."""
        return cls(open_round_dir(path, create), path)

    @classmethod
    def named(cls, path: str) -> Dir:
        """A directory the user named (``--output``'s, a settings file's): opened as
        named, links followed. Raises OSError."""
        return cls(os.open(path or os.curdir, _NAMED_FLAGS), path or os.curdir)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def join(self, name: str) -> str:
        """The display path of *name* in this directory."""
        return os.path.join(self.path, name)

    def listdir(self) -> list[str]:
        return os.listdir(self.fd)

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        """``open(name)`` relative to the directory, never through a link."""
        return os.open(name, flags | NOFOLLOW, mode, dir_fd=self.fd)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def exists(self, name: str) -> bool:
        """Whether anything (a link too) has *name* here."""
        try:
            self.lstat(name)
        except FileNotFoundError:
            return False
        return True

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def rename(self, src: str, dst: str) -> None:
        os.rename(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(name, dir_fd=self.fd)

    def fsync(self) -> None:
        os.fsync(self.fd)

    def mkdir(self, name: str, mode: int = 0o777) -> None:
        os.mkdir(name, mode, dir_fd=self.fd)

    def remove_tree(self, name: str, depth: int = 0) -> None:
        """Remove the directory *name* here and all it holds, every step relative to a
        descriptor opened without following links (a link inside is removed, never
        followed). Past :data:`MAX_REMOVE_DEPTH` levels it stops (``ELOOP``). Raises
        OSError."""
        if depth > MAX_REMOVE_DEPTH:
            raise OSError(errno.ELOOP, f"nested more than {MAX_REMOVE_DEPTH} levels deep")
        with self.subdir(name) as d:
            for entry in d.listdir():
                if stat.S_ISDIR(d.lstat(entry).st_mode):
                    d.remove_tree(entry, depth + 1)
                else:
                    d.unlink(entry)
        os.rmdir(name, dir_fd=self.fd)

    def subdir(self, name: str) -> Dir:
        """A directory inside this one, opened without following a link."""
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, self.fd):
                raise link_refused(self.join(name)) from None
            raise
        return Dir(fd, self.join(name))
