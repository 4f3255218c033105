"""`await` trusts nothing a reviewer can write (issue 29, loop.md "await"): what runs is
fixed from QRSPI_AWAIT_EXEC_ROOTS and the repository the command was started in; the
manifest is read under one set of JSON rules and re-read before it is written back; the
round is listed once; a step or round directory that is a link is never written
through."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_main
from tests.test_loop_await import drain, output, pending, stub, write_manifest


@pytest.fixture
def rd(tmp_path: Path) -> Path:
    d = tmp_path / "round-01"
    (d / ".dispatch").mkdir(parents=True)
    return d


# -- the manifest's JSON ----------------------------------------------------------------

def test_a_number_json_cannot_carry_back_is_named_and_never_rewritten_as_infinity(
        rd: Path, tmp_path: Path) -> None:
    path = rd / ".dispatch-manifest.json"
    original = b'[{"tag": "q", "mode": "first_party", "status": "done", "cost": 1e400}]'
    path.write_bytes(original)
    proc = drain(rd)
    assert proc.returncode == 1, output(proc)
    assert "1e400 is too large" in output(proc)
    assert path.read_bytes() == original  # never `Infinity`, which is not JSON
    assert not (rd / ".round-complete.json").exists()


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_manifest_holding_nan_or_infinity_is_a_named_error_and_left_as_it_was(
        rd: Path, constant: str) -> None:
    path = rd / ".dispatch-manifest.json"
    original = f'[{{"tag": "q", "mode": "first_party", "x": {constant}}}]'.encode()
    path.write_bytes(original)
    proc = drain(rd)
    assert proc.returncode == 1 and f"{constant} is not JSON" in output(proc)
    assert path.read_bytes() == original


def test_a_nul_byte_in_a_manifest_command_is_a_named_error_not_an_internal_error(
        rd: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    ran = tmp_path / "ran"
    a = stub(bin_dir, "a.sh", f'touch "{ran}"')
    path = write_manifest(rd, [pending("q", f"{a}\0 --x")])
    original = path.read_bytes()
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1, output(proc)
    assert "internal error" not in output(proc)
    assert "entry 1's await_cmd holds a NUL byte" in output(proc)
    assert path.read_bytes() == original and not ran.exists()


def test_a_manifest_entry_with_a_duplicate_key_is_a_named_error(rd: Path) -> None:
    path = rd / ".dispatch-manifest.json"
    original = b'[{"tag": "q", "tag": "other", "mode": "first_party"}]'
    path.write_bytes(original)
    proc = run_main("await", "--round-dir", str(rd))
    assert proc.returncode == 1 and "the key 'tag' appears twice" in output(proc)
    assert path.read_bytes() == original
