"""Every output path the user names (`check --output`, `report -o`, `check
--write-baseline`, the step summary) is opened so that a FIFO, a device or a link can
neither hang nor redirect the write (cli.md "Files the guard reads and writes"): a FIFO
is written only while a reader is there, anything else that is not a regular file is
one line and exit 2. Real processes: a hang shows only there."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.support import FIXTURES, run_cli, run_main

EXAMPLE = FIXTURES / "example"
#: each output option, as the argv that writes PATH ({} is the path)
WRITERS = {
    "check --output": ["check", "--format", "json", "--output", "{}", str(EXAMPLE)],
    "report -o": ["report", str(EXAMPLE), "-o", "{}"],
    "check --write-baseline": ["check", "--write-baseline", "{}", str(EXAMPLE)],
}


def argv(which: str, path: Path | str) -> list[str]:
    return [a.replace("{}", str(path)) for a in WRITERS[which]]


@pytest.mark.parametrize("which", WRITERS)
def test_an_output_fifo_with_no_reader_is_one_line_and_exit_2_never_a_hang(
        tmp_path: Path, which: str) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    proc = run_cli(*argv(which, fifo), timeout=30)  # a hang fails here
    assert proc.returncode == 2, proc.stderr
    assert b"a FIFO that nobody reads" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("which", WRITERS)
def test_an_output_fifo_with_a_reader_gets_the_whole_output(tmp_path: Path,
                                                            which: str) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader is there first
    keep = os.open(fifo, os.O_WRONLY)  # no end of file before the guard's writer comes
    os.set_blocking(fd, True)
    got: list[bytes] = []

    def read() -> None:
        while chunk := os.read(fd, 65536):
            got.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        proc = run_cli(*argv(which, fifo), timeout=60)
    finally:
        os.close(keep)  # the end of file, now that the guard has exited
        reader.join(timeout=30)
        os.close(fd)
    assert proc.returncode in (0, 1), proc.stderr
    data = b"".join(got)
    assert data.startswith(b"<!DOCTYPE html>" if which == "report -o" else b"{")
    assert data.rstrip().endswith(b"</html>" if which == "report -o" else b"}")


@pytest.mark.parametrize("which", WRITERS)
def test_an_output_path_that_is_a_link_a_device_or_a_directory_is_refused(
        tmp_path: Path, which: str) -> None:
    real = tmp_path / "real"
    real.write_text("kept\n")
    link = tmp_path / "link"
    link.symlink_to(real)
    for target, words in ((link, b"a symbolic link"), ("/dev/null", b"a device"),
                          (tmp_path, b"directory")):
        proc = run_main(*argv(which, target))
        assert proc.returncode == 2 and words in proc.stderr, (target, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1
    assert real.read_text() == "kept\n"


def test_a_step_summary_that_is_a_link_is_refused_not_written_through(
        tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.md"
    real.write_text("kept\n")
    link = tmp_path / "summary.md"
    link.symlink_to(real)
    proc = run_main("check", "--format", "github", str(EXAMPLE),
                    env={"GITHUB_STEP_SUMMARY": str(link)})
    assert proc.returncode == 1  # the gate's verdict; the summary is a warning
    assert b"warning: step summary: cannot append to" in proc.stderr
    assert b"a symbolic link" in proc.stderr
    assert real.read_text() == "kept\n"
