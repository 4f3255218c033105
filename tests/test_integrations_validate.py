"""The runtimes' own validators pass the plugin, its marketplace and the extension
(issue 31): ``claude plugin validate --strict`` (warnings are errors) and ``gemini
extensions validate``, at the versions tests/npm pins."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.npmtools import required
from tests.runtimes import Claude, Gemini

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def cli(name: str) -> Path:
    return required(f"the real {name}", ".bin", name)


@pytest.mark.parametrize("what", [".", "integrations/claude-code"])
def test_claude_plugin_validate_strict_passes_the_marketplace_and_the_plugin(
        tmp_path: Path, what: str) -> None:
    rt = Claude(cli("claude"), tmp_path / "home", "/usr/bin:/bin")
    proc = rt.cli_run("plugin", "validate", "--strict", str(ROOT / what), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout


def test_gemini_extensions_validate_passes_the_extension(tmp_path: Path) -> None:
    rt = Gemini(cli("gemini"), tmp_path / "home", "/usr/bin:/bin")
    proc = subprocess.run([str(rt.cli), "extensions", "validate",
                           str(ROOT / "integrations" / "gemini-cli")], cwd=tmp_path,
                          env=rt.env(), text=True, capture_output=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "successfully validated" in proc.stdout + proc.stderr
