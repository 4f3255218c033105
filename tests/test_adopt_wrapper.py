"""adopt's wrappers as bash runs them, read back by adopt, and the table of scripts and
known versions."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qrspi_guard.adopt.dropins import BY_NAME, DROPINS, KNOWN, DropIn, read_known, version_of
from qrspi_guard.adopt.wrapper import Wrapper, by_hand, marked, parse, render
from qrspi_guard.cli import COMMANDS
from tests.adoptkit import FIXTURE
from tests.adoptkit import KNOWN as KNOWN_FILE


def _fake_guard(tmp_path: Path) -> Path:
    """A stand-in guard that prints its arguments and the exec roots, one a line."""
    guard = tmp_path / "a dir" / "it's the guard"
    guard.parent.mkdir()
    guard.write_text("#!/usr/bin/env bash\n"
                     "printf '%s\\n' \"$@\" \"roots=${QRSPI_AWAIT_EXEC_ROOTS-}\"\n")
    guard.chmod(0o755)
    return guard


@pytest.mark.parametrize("dropin", DROPINS, ids=lambda d: d.command)
def test_a_wrapper_passes_its_arguments_to_the_guard_word_for_word(tmp_path: Path,
                                                                    dropin: DropIn) -> None:
    guard = _fake_guard(tmp_path)
    d = dropin
    script = tmp_path / "scripts" / d.name
    script.parent.mkdir()
    script.write_bytes(render(d, Wrapper((str(guard),), "upstream")))
    out = subprocess.run(["bash", str(script), "a b", "", "$HOME", "--x"], capture_output=True,
                         env={"PATH": "/usr/bin:/bin", "QRSPI_AWAIT_EXEC_ROOTS": "/r"},
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().split("\n")[:-1]
    extra = ["--halt-on", "upstream"] if d.command == "fan-in" else []
    assert lines[:-1] == [d.command, *extra, "a b", "", "$HOME", "--x"]
    # the await wrapper adds its own directory (resolved) to the drain's exec roots
    roots = f"roots=/r:{script.parent.resolve()}" if d.command == "await" else "roots=/r"
    assert lines[-1] == roots


def test_the_await_wrapper_resolves_its_directory_whatever_cdpath_says(tmp_path: Path) -> None:
    guard = _fake_guard(tmp_path)
    d = BY_NAME["await-round.sh"]
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / d.name).write_bytes(render(d, Wrapper((str(guard),))))
    out = subprocess.run(["bash", "scripts/await-round.sh"], capture_output=True, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin", "CDPATH": str(tmp_path)})
    assert out.stdout.decode().split("\n")[-2] == f"roots={(tmp_path / 'scripts').resolve()}"


def test_a_wrapper_can_run_the_guard_through_its_python(tmp_path: Path) -> None:
    d = BY_NAME["verifier-fan-in.sh"]
    script = tmp_path / d.name
    wrapper = Wrapper((sys.executable, "-m", "qrspi_guard"), "all")
    script.write_bytes(render(d, wrapper))
    assert parse(d, script.read_bytes()) == wrapper
    out = subprocess.run(["bash", str(script), str(tmp_path / "none")], capture_output=True)
    assert out.returncode == 2 and b"round-dir does not exist" in out.stderr


@pytest.mark.parametrize("guard", ["/opt/qrspi guard/bin/qrspi-guard", "/x/it's/qrspi-guard",
                                   "/x/$(reboot)/`id`/qrspi-guard"])
def test_a_wrapper_is_read_back_exactly_and_an_edit_is_not_ours(guard: str) -> None:
    for d in DROPINS:
        want = Wrapper((guard,), "upstream" if d.command == "fan-in" else None)
        data = render(d, want)
        assert parse(d, data) == want and marked(data) and not by_hand(d, data)
        for edited in (data + b"echo more\n", data.replace(b"exit 127", b"exit 0"),
                       data.replace(b"execfail", b"nullglob")):
            assert parse(d, edited) is None and marked(edited)
        other = next(o for o in DROPINS if o != d)
        assert parse(other, data) is None  # another script's wrapper is not this one's


def test_a_guard_path_with_a_control_character_cannot_be_written() -> None:
    with pytest.raises(ValueError):
        render(DROPINS[0], Wrapper(("/x/a\nrm -rf ~/qrspi-guard",)))


def test_hand_written_wrappers_are_recognised_as_the_readme_wrote_them() -> None:
    fan_in, await_ = BY_NAME["verifier-fan-in.sh"], BY_NAME["await-round.sh"]
    assert by_hand(fan_in, b'#!/usr/bin/env bash\nexec qrspi-guard fan-in "$@"\n')
    assert by_hand(fan_in, b'#!/bin/sh\nexec /v/bin/qrspi-guard fan-in --halt-on upstream "$@"\n')
    readme = (b'#!/usr/bin/env bash\nQRSPI_AWAIT_EXEC_ROOTS="${QRSPI_AWAIT_EXEC_ROOTS:+'
              b'$QRSPI_AWAIT_EXEC_ROOTS:}$(dirname "$0")" exec qrspi-guard await "$@"\n')
    assert by_hand(await_, readme) and not by_hand(fan_in, readme)
    assert by_hand(fan_in, b"#!/bin/sh\nexec python3 -m qrspi_guard fan-in \"$@\"\n")
    assert not by_hand(fan_in, b'#!/usr/bin/env bash\nexec qrspi-guard await "$@"\n')
    assert not by_hand(fan_in, (FIXTURE / "checkout/scripts/verifier-fan-in.sh").read_bytes())


def test_every_drop_in_is_a_command_with_known_versions() -> None:
    assert [d.script for d in DROPINS] == sorted(KNOWN, key=[d.script for d in DROPINS].index)
    for d in DROPINS:
        assert d.command in COMMANDS and d.script == f"scripts/{d.name}"
        assert KNOWN[d.script], d.script
        for digest in KNOWN[d.script]:
            assert re.fullmatch(r"[0-9a-f]{64}", digest)


def test_the_fixture_known_file_lists_the_fixture_scripts() -> None:
    known = read_known(str(KNOWN_FILE))
    for d in DROPINS:
        data = (FIXTURE / "checkout" / d.script).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        assert version_of(d.script, digest, known) is not None, d.script
        assert version_of(d.script, digest) is None  # never built in
    assert os.access(FIXTURE / "checkout/scripts/verifier-fan-in.sh", os.R_OK)
