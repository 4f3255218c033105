"""Helpers for adopt's and doctor's tests: a stand-in upstream checkout (the fixture's
tiny scripts, never upstream's own), its git, and snapshots of a tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support import REPO, run_cli

FIXTURE = REPO / "fixtures" / "adopt"
#: the fixture scripts' hashes, as ``adopt --known`` reads them
KNOWN = FIXTURE / "known.sha256"
SCRIPTS = ("scripts/review-prep.sh", "scripts/round-prepare.sh", "scripts/await-round.sh",
           "scripts/verifier-fan-in.sh")
#: modes that git cannot carry: set after the copy, so undo must give each back
MODES = {"scripts/review-prep.sh": 0o700, "scripts/round-prepare.sh": 0o644,
         "scripts/await-round.sh": 0o755, "scripts/verifier-fan-in.sh": 0o750}
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(top: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(top)}
    return subprocess.run(["git", "-C", str(top), *args], check=True, capture_output=True,
                          env=env).stdout.decode()


def checkout(tmp_path: Path, with_git: bool = True, name: str = "qrspi-plus") -> Path:
    """A copy of the fixture checkout, committed (with git) with the modes of MODES."""
    co = tmp_path / name
    shutil.copytree(FIXTURE / "checkout", co)
    for script, mode in MODES.items():
        os.chmod(co / script, mode)
    if with_git:
        git(co, "init", "-q")
        git(co, "add", "-A")
        git(co, "commit", "-q", "-m", "upstream")
    return co


def adopt(co: Path, *args: str, known: bool = True, env: dict[str, str] | None = None,
          ) -> subprocess.CompletedProcess[bytes]:
    """The installed console script: ``adopt CO [--known KNOWN] ARGS``."""
    extra = ("--known", str(KNOWN)) if known and "--undo" not in args else ()
    return run_cli("adopt", str(co), *extra, *args, env=env)


def tree(root: Path) -> dict[str, tuple[str, bytes | str, int, int]]:
    """Every entry below *root* (``.git`` included): kind, bytes or link target, mode
    and mtime, to prove that a command wrote nothing."""
    out: dict[str, tuple[str, bytes | str, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p), st.st_mode, st.st_mtime_ns)
            elif p.is_dir():
                out[rel] = ("dir", b"", st.st_mode, st.st_mtime_ns)
            else:
                out[rel] = ("file", p.read_bytes(), st.st_mode, st.st_mtime_ns)
    return out


def scripts_state(co: Path) -> dict[str, tuple[bytes, int]]:
    """The four scripts' bytes and permission bits."""
    return {s: ((co / s).read_bytes(), (co / s).stat().st_mode & 0o7777) for s in SCRIPTS}
