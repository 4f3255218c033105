"""The hook's private directories under the temporary directory: one per purpose and
user (``qrspi-guard-<purpose>-<uid>``, mode 0700), used only when it is a directory of
ours that no one else can write (else another user could plant or remove entries),
with what is older than a given age removed, a bounded batch a call.

(:mod:`qrspi_guard.hook.shellwrites` keeps the shell calls' records the same way in
its own directory; one place for both is a follow-up.)
"""

from __future__ import annotations

import os

#: at most this many entries are looked at for removal per call
PRUNE_BATCH = 64


def private_dir(purpose: str) -> str | None:
    """``<tmp>/qrspi-guard-<purpose>-<uid>``, made when missing; None when it cannot be
    made or is not ours alone."""
    import stat
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(tempfile.gettempdir(), f"qrspi-guard-{purpose}-{uid}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return None
    owner = os.getuid() if hasattr(os, "getuid") else st.st_uid
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != owner or st.st_mode & 0o077:
        return None
    return path


def prune(directory: str, older_than: float) -> None:
    """Remove entries of *directory* not modified for *older_than* seconds (a batch)."""
    import time

    cutoff = time.time() - older_than
    try:
        with os.scandir(directory) as it:
            for i, entry in enumerate(it):
                if i >= PRUNE_BATCH:
                    break
                try:
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
                except OSError:
                    continue
    except OSError:
        pass
