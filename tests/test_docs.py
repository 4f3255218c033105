"""The README's generated parts and promises stay true."""

from __future__ import annotations

import subprocess
import sys

from qrspi_guard.contract.causes import markdown_table
from tests.support import REPO


def test_readme_cause_section_is_generated_from_the_catalogue() -> None:
    text = (REPO / "README.md").read_text()
    start, end = "<!-- causes:start -->\n", "<!-- causes:end -->"
    section = text[text.index(start) + len(start):text.index(end)]
    hint = "regenerate with: qrspi-guard explain --list --format markdown"
    assert section == markdown_table(), hint


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    test_cmd = (".venv/bin/pip install -q --require-hashes -r requirements/test.txt && "
                ".venv/bin/pip install -q --no-deps --no-build-isolation -e . && "
                ".venv/bin/python -m pytest")
    assert test_cmd in readme
    assert test_cmd in ci


def test_ruff_is_clean() -> None:
    ruff = [sys.executable, "-m", "ruff", "check", "qrspi_guard", "tests", "benchmarks"]
    proc = subprocess.run(ruff, cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
