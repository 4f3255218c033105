"""The package type-checks under ``mypy --strict`` (issue 15), like ruff keeps it lint-clean,
for every Python the project claims: a name the standard library gained after the oldest
claimed Python (``typing.dataclass_transform`` is 3.11's) is a failure here, on the
locked run, not only in ``.ci/ranges newest`` on that Python."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO, claimed_pythons


@pytest.mark.locked
@pytest.mark.parametrize("python", claimed_pythons())
def test_the_package_passes_mypy_strict(python: str, tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    # a cache of its own: nothing is written into the work tree
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", python,
         "--cache-dir", str(tmp_path / "cache"), "qrspi_guard"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (f"mypy --strict --python-version {python} qrspi_guard:\n"
                                 f"{run.stdout}{run.stderr}")
