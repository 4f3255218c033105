"""Every untrusted byte source read with the same cap (issue 24): a config.md blob at a
round's commit, --config FILE, settings files, standard input, the hook's payload --
one cap definition (qrspi_guard.parse.capped) and one reader."""

from __future__ import annotations

import io
import resource
import subprocess
from pathlib import Path

import pytest

from qrspi_guard.contract.generations import CONTRACT
from qrspi_guard.engine import history
from qrspi_guard.hook import payload
from qrspi_guard.parse import capped, frontmatter, reader
from qrspi_guard.settings import configfile as settings_files
from tests.support import SCRIPT, Run, run_main

CONFIG = "---\nsecond_reviewer: false\nverifier_enabled: false\n---\n"


def test_the_file_cap_has_one_definition_that_every_reader_uses() -> None:
    assert capped.FILE_CAP == CONTRACT.max_bytes == 1024 * 1024
    assert frontmatter.MAX_BYTES is capped.FILE_CAP
    assert reader.MAX_BYTES is capped.FILE_CAP
    assert history.MAX_BLOB is capped.FILE_CAP
    assert settings_files.MAX_BYTES is capped.FILE_CAP
    assert payload.STDIN_CAP is capped.STREAM_CAP


def test_the_capped_reader_never_holds_more_than_the_cap_of_an_endless_stream() -> None:
    class Endless(io.RawIOBase):
        served = 0

        def readinto(self, b: bytearray) -> int:  # type: ignore[override]
            b[:] = b"x" * len(b)
            self.served += len(b)
            return len(b)

    stream = Endless()
    assert capped.read_stream(stream, 1000) is None  # type: ignore[arg-type]
    assert stream.served == 1001


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.slow
def test_a_config_md_blob_over_the_cap_at_the_round_s_commit_is_never_read_into_memory(
        tmp_path: Path) -> None:
    run = Run(tmp_path / "art").config()
    for tag in ("quality-claude", "scope-claude"):
        run.clean("design", 1, tag)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "core.bigFileThreshold", "1m")  # git itself streams the blob
    with open(run.root / "config.md", "wb") as fh:  # 150 MB of config.md at that commit
        fh.write(CONFIG.encode())
        fh.truncate(150 * 1024 * 1024)
    _git(tmp_path, "add", "art/config.md")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "big")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout
    run.write("reviews/design/round-01-commit.txt", sha)
    run.config()  # the working tree's config.md is small again

    def limit() -> None:  # far less memory than the blob: only a capped read fits
        resource.setrlimit(resource.RLIMIT_AS, (150 * 1024 * 1024, 150 * 1024 * 1024))

    proc = subprocess.run([str(SCRIPT), "check", "art"], cwd=tmp_path, capture_output=True,
                          preexec_fn=limit, timeout=120)
    assert b"MemoryError" not in proc.stderr and b"internal error" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert b"1 round, 2 files: 0 errors" in proc.stdout


def test_history_never_asks_git_for_the_content_of_a_blob_over_the_cap(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "config.md").write_bytes(CONFIG.encode() + b"#" * capped.FILE_CAP)
    (tmp_path / "small.md").write_text(CONFIG)
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, check=True,
                         capture_output=True, text=True).stdout.strip()
    big, small = str(tmp_path / "config.md"), str(tmp_path / "small.md")
    got = history.ConfigHistory().blobs([(big, sha), (small, sha)])
    assert got == {(small, sha): CONFIG.encode()}


def test_a_config_option_over_the_size_cap_is_a_command_line_error_exit_2(run: Run) -> None:
    run.clean("design", 1, "quality-claude")
    big = run.write("big-config.md", CONFIG + "#" * capped.FILE_CAP)
    r = run_main("check", "--config", str(big), str(run.root))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert b"--config" in r.stderr and b"1 MiB" in r.stderr
    assert b"config_field_invalid" not in r.stdout
    w = run_main("watch", "--config", str(big), str(run.root))
    assert w.returncode == 2 and b"--config" in w.stderr


def test_a_config_option_that_cannot_be_read_is_exit_2(run: Run, tmp_path: Path) -> None:
    cfg = run.write("locked.md", CONFIG)
    cfg.chmod(0)
    try:
        if cfg.open("rb"):  # root reads anything: nothing to test
            pytest.skip("running as root")
    except PermissionError:
        pass
    try:
        r = run_main("check", "--config", str(cfg), str(run.root))
    finally:
        cfg.chmod(0o644)
    assert r.returncode == 2 and b"--config" in r.stderr
