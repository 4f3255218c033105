"""The npm tools the slow tests drive, at the exact versions tests/npm/package-lock.json
pins: installed once per lock file with ``npm ci`` into a cache
(``$XDG_CACHE_HOME/qrspi-guard-tests/npm-<hash of the lock>``, else under ``~/.cache``),
shared by every test, session and checkout with the same lock.

``npm ci`` runs in a directory beside the cache's and is renamed into place when it
succeeded, under an ``flock``, so a run killed half-way or two sessions at once never
leave a half-installed cache. Where npm is missing or the install fails, :func:`tools`
says why, for the test to skip with.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

PINS = Path(__file__).resolve().parent / "npm"
#: npm ci of every pin, on a cold npm cache: about 15 s here; bounded
INSTALL_TIMEOUT = 900


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "qrspi-guard-tests"


@functools.cache
def tools() -> Path | str:
    """The installed ``node_modules`` directory, or why there is none."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    lock = (PINS / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock + (PINS / "package.json").read_bytes()).hexdigest()[:16]
    root = cache_root()
    final = root / f"npm-{digest}"
    done = final / "node_modules" / ".qrspi-guard-installed"
    if done.exists():
        return final / "node_modules"
    import fcntl

    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"npm-{digest}.lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        if done.exists():
            return final / "node_modules"
        work = root / f"npm-{digest}.partial-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(PINS / name, work / name)
        try:
            proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                                  cwd=work, capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as exc:
            shutil.rmtree(work, ignore_errors=True)
            return f"npm ci failed: {exc}"
        if proc.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            return f"npm ci failed: {(proc.stderr or proc.stdout).strip()[-300:]}"
        (work / "node_modules" / ".qrspi-guard-installed").write_text(digest + "\n")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(work, final)
    return final / "node_modules"


#: set by .ci/run: a pinned tool that cannot be installed fails the tests that drive it
#: instead of skipping them, so the gate never passes without the runtimes it promises
NEED = "QRSPI_GUARD_TESTS_NEED_NPM"


def required(what: str, *parts: str) -> Path:
    """:func:`binary`, or the test skipped saying why (failed where :data:`NEED` is set)."""
    import pytest

    got = binary(*parts)
    if isinstance(got, Path):
        return got
    why = f"{what} is not available: {got}"
    if os.environ.get(NEED):
        pytest.fail(f"{why} ({NEED} is set)")
    pytest.skip(why)


def binary(*parts: str) -> Path | str:
    """A file under the installed ``node_modules`` (``.bin/claude``, say), or why not."""
    got = tools()
    if isinstance(got, str):
        return got
    path = got.joinpath(*parts)
    return path if path.exists() else f"{'/'.join(parts)} is not in the npm install"
