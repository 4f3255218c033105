"""Shared fixtures. Helpers (runners, paths, the review-run builder) are in tests/support.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

# Every file the fast path accepts is re-judged by the full rules, in this process and in
# every console script the tests start: a difference is a failure (fastjudge.VERIFY).
os.environ["QRSPI_GUARD_VERIFY_FASTPATH"] = "1"

from hypothesis import settings  # noqa: E402

from tests.support import Run  # noqa: E402

# The same examples on every run (a failure reproduces; a pass is not luck); set
# HYPOTHESIS_PROFILE=default to explore new ones.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


@pytest.fixture(autouse=True)
def private_hook_state(tmp_path_factory: pytest.TempPathFactory,
                       monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's hook calls keep their records (hook/callstore.py) in a runtime
    directory of their own, so no test sees another's (nor the user's)."""
    runtime = tmp_path_factory.mktemp("xdg-runtime")
    runtime.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return runtime


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path / "art").config()


@pytest.fixture
def tiny_fs(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 64 KiB tmpfs (root only; skipped where mounting is not allowed)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("tmpfs cannot be mounted here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
