"""Packaging a user can trust: the wheel's licence metadata, py.typed, typed top-level
exports (mypy on a user script), and bytecode compiled on install."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
import zipfile
from pathlib import Path

import pytest

from tests.support import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(out), str(REPO)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and ("No matching distribution" in proc.stderr
                                 or "Could not find a version" in proc.stderr):
        pytest.skip("setuptools>=77 cannot be fetched for the build")
    assert proc.returncode == 0, proc.stderr
    (whl,) = out.glob("*.whl")
    return whl


def test_pyproject_declares_an_spdx_licence_with_a_new_enough_setuptools() -> None:
    doc = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert doc["project"]["license"] == "MIT"
    assert not any(c.startswith("License ::") for c in doc["project"]["classifiers"])
    req = next(r for r in doc["build-system"]["requires"] if r.startswith("setuptools"))
    assert int(re.search(r">=(\d+)", req).group(1)) >= 77
    assert 'tomli>=1.1; python_version < "3.11"' in doc["project"]["dependencies"]
    assert "OWNER" not in json.dumps(doc["project"].get("urls", {}))  # no placeholder
    assert doc["project"]["dynamic"] == ["version"]  # the version lives in __init__ only
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.slow
def test_the_wheel_carries_the_licence_py_typed_and_the_one_version(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "qrspi_guard/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: MIT" in meta
    assert not [ln for ln in meta.splitlines() if ln.startswith("Project-URL") and "OWNER" in ln]
    from qrspi_guard import __version__

    assert f"\nVersion: {__version__}\n" in meta
    assert "Classifier: Typing :: Typed" in meta


USER_SCRIPT = """\
from qrspi_guard import CATALOGUE, Diagnostic, check, check_round, round_status

result = check("docs")
reveal_type(result)
reveal_type(result.diagnostics[0])
reveal_type(CATALOGUE)
reveal_type(check_round)
reveal_type(round_status)
"""


@pytest.mark.slow
def test_mypy_sees_the_real_types_of_the_top_level_exports(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                    "--no-deps", str(wheel)], check=True, capture_output=True, timeout=300)
    (tmp_path / "user.py").write_text(USER_SCRIPT)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--python-executable", str(py),
                           "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           "user.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # py.typed: no missing stubs
    revealed = re.findall(r'Revealed type is "(.*)"', proc.stdout)
    assert revealed[:3] == ["qrspi_guard.engine.results.CheckResult",
                            "qrspi_guard.contract.diagnostics.Diagnostic",
                            "builtins.dict[builtins.str, qrspi_guard.contract.causes.Cause]"] or \
        revealed[:3] == ["qrspi_guard.engine.results.CheckResult",
                         "qrspi_guard.contract.diagnostics.Diagnostic",
                         "dict[str, qrspi_guard.contract.causes.Cause]"]
    assert "RoundResult" in revealed[3] and "Any" not in revealed[3]
    assert all(t != "Any" for t in revealed)


def test_the_top_level_names_are_still_imported_lazily() -> None:
    code = ("import sys, qrspi_guard; assert 'qrspi_guard.engine' not in sys.modules; "
            "from qrspi_guard import check; assert 'qrspi_guard.engine' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_uv_compiles_bytecode_on_install_when_asked_as_documented(wheel: Path,
                                                                  tmp_path: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    if not Path(uv).exists():
        pytest.skip("uv is not installed")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True, timeout=120)
    subprocess.run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    "--no-deps", "--compile-bytecode", str(wheel)], check=True, timeout=300)
    pyc = list(venv.rglob("qrspi_guard/__pycache__/*.pyc"))
    assert pyc, "no bytecode compiled"
