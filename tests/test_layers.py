"""The package's shape is a contract (issue 15): the import layers in pyproject.toml hold,
the public exports stay put, and no module grows past one sitting."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import qrspi_guard

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: the public API (README "Python API"); changing it is a breaking change
TOP_LEVEL = ["__version__", "check", "check_round", "round_status", "CheckResult",
             "RoundResult", "PathNotFound", "GuardError", "Diagnostic", "CATALOGUE", "Cause"]
API = ["check", "check_round", "round_status", "CheckResult", "RoundResult", "PathNotFound"]


def _lint_imports(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"},
                          timeout=300)


def test_the_import_layers_in_pyproject_hold() -> None:
    proc = _lint_imports(REPO, REPO)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_an_import_against_the_flow_breaks_the_layer_contract(tmp_path: Path) -> None:
    shutil.copytree(REPO / "qrspi_guard", tmp_path / "qrspi_guard",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "qrspi_guard" / "contract" / "upward.py").write_text(
        "from qrspi_guard.engine import check\n")
    proc = _lint_imports(tmp_path, tmp_path)
    assert proc.returncode != 0
    assert "qrspi_guard.contract is not allowed to import qrspi_guard.engine" in proc.stdout


def test_the_top_level_exports_are_pinned() -> None:
    assert sorted(qrspi_guard.__all__) == sorted(TOP_LEVEL)
    for name in TOP_LEVEL:
        assert getattr(qrspi_guard, name) is not None, name
    api = importlib.import_module("qrspi_guard.api")
    assert sorted(api.__all__) == sorted(API)
    for name in API:
        assert getattr(api, name) is getattr(qrspi_guard, name), name


def test_at_most_eight_modules_at_the_top_and_none_over_450_lines() -> None:
    package = REPO / "qrspi_guard"
    top = sorted(p.name for p in package.glob("*.py"))
    assert len(top) <= 8, top
    long = {str(p.relative_to(package)): n for p in package.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 450}
    assert long == {}


def test_every_subpackage_opens_with_a_docstring_saying_what_it_owns() -> None:
    for init in sorted((REPO / "qrspi_guard").glob("*/__init__.py")):
        module = importlib.import_module(f"qrspi_guard.{init.parent.name}")
        assert module.__doc__ and len(module.__doc__.strip()) > 40, init.parent.name


def test_per_cause_tables_outside_the_catalogue_name_only_catalogue_causes() -> None:
    from qrspi_guard.contract.causes import CATALOGUE
    from qrspi_guard.hook import message
    from qrspi_guard.output import junit
    from qrspi_guard.rules import registry

    tables = {"rules.registry.TAG_CAUSES": set(registry.TAG_CAUSES),
              "output.junit.ERROR_CAUSES": set(junit.ERROR_CAUSES)}
    for name, causes in tables.items():
        assert causes <= set(CATALOGUE), (name, causes - set(CATALOGUE))
    # the hook's guidance (allowed, example) is the catalogue's: its message module
    # keeps no table of causes beside it
    source = Path(message.__file__).read_text(encoding="utf-8")
    assert {n for n in CATALOGUE if f'"{n}"' in source} == set()
