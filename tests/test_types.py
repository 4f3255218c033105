"""The package type-checks under ``mypy --strict`` (issue 15), like ruff keeps it lint-clean."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.locked
def test_the_package_passes_mypy_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    # a cache of its own: nothing is written into the work tree
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "qrspi_guard"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"mypy --strict qrspi_guard:\n{run.stdout}{run.stderr}"
