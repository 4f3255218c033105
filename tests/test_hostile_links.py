"""Symbolic links swapped in where check never follows one (issue 24): split, status
files and --fix write relative to directory descriptors opened without following links
(qrspi_guard.parse.nofollow), so a round, step or reviews directory that is a link -- or
becomes one during the run -- is refused, never written through."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from qrspi_guard.judge import Judge
from qrspi_guard.output.status import write_status
from qrspi_guard.parse.nofollow import Dir, open_round_dir
from tests.support import FINDING, Run, run_main

TAGS = ("quality-claude", "scope-claude")


def _full_round(run: Run, step: str = "design", n: int = 1) -> Path:
    for tag in TAGS:
        run.clean(step, n, tag)
    return run.round_dir(step, n)


def _everything_in(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_split_refuses_a_round_directory_that_is_a_symbolic_link(tmp_path: Path, run: Run) -> None:
    elsewhere = tmp_path / "elsewhere" / "round-01"
    elsewhere.mkdir(parents=True)
    (run.root / "reviews" / "design").mkdir(parents=True)
    (run.root / "reviews" / "design" / "round-01").symlink_to(elsewhere)
    out = tmp_path / "out.txt"
    out.write_text("NO_FINDINGS\n")
    checked = run_main("check", str(run.root))
    assert b"symlink_in_round_dir" in checked.stdout  # what check calls it
    r = run_main("split", str(out), str(run.root / "reviews/design/round-01"), "quality-claude")
    assert r.returncode == 2, r.stderr
    assert b"symbolic link" in r.stderr and b"symlink_in_round_dir" in r.stderr
    assert list(elsewhere.iterdir()) == []


def test_split_refuses_a_round_under_a_step_directory_that_is_a_symbolic_link(
        tmp_path: Path, run: Run) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "round-01").mkdir(parents=True)
    (run.root / "reviews").mkdir()
    (run.root / "reviews" / "design").symlink_to(elsewhere)
    out = tmp_path / "out.txt"
    out.write_text("NO_FINDINGS\n")
    r = run_main("split", str(out), str(run.root / "reviews/design/round-01"), "quality-claude")
    assert r.returncode == 2, r.stderr
    assert list((elsewhere / "round-01").iterdir()) == []


def test_a_step_directory_swapped_for_a_link_after_judging_gets_no_status_file_through_it(
        tmp_path: Path, run: Run) -> None:
    round_dir = _full_round(run)
    result = Judge.for_path(str(round_dir)).round(str(round_dir))
    assert result is not None and result.status == "ok"
    step = run.root / "reviews" / "design"
    outside = tmp_path / "outside"
    outside.mkdir()
    step.rename(tmp_path / "design.real")
    step.symlink_to(outside)
    with pytest.raises(OSError) as caught:
        write_status(result)
    assert "symbolic link" in str(caught.value)
    assert _everything_in(outside) == []


_SWAPPER = """
import os, sys, time
step, outside, stop = sys.argv[1:]
held = step + ".held"
n = 0
print("ready", flush=True)
while not os.path.exists(stop):
    os.rename(step, held)
    os.symlink(outside, step)
    time.sleep(0.001)  # the racer dwells in each state, as long in one as in the other
    os.unlink(step)
    os.rename(held, step)
    time.sleep(0.001)
    n += 1
print(n, flush=True)
"""


@contextmanager
def _swapping(step: Path, outside: Path) -> Iterator[list[int]]:
    """A racing process that keeps swapping *step* for a link to *outside* and back
    until the block ends (then *step* is the real directory again); yields a list that
    holds the number of swaps once the block is over."""
    stop = step.parent / ".stop-swapping"
    proc = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(step), str(outside), str(stop)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    swaps: list[int] = []
    try:
        yield swaps
    finally:
        stop.touch()
        out, _ = proc.communicate(timeout=30)
        stop.unlink()
        swaps.append(int(out))


def test_write_status_never_writes_through_a_step_directory_swapped_for_a_link_mid_run(
        tmp_path: Path, run: Run) -> None:
    round_dir = _full_round(run)
    judge = Judge.for_path(str(round_dir))
    result = judge.round(str(round_dir))
    assert result is not None
    outside = tmp_path / "outside"
    outside.mkdir()
    written = refused = 0
    with _swapping(run.root / "reviews" / "design", outside) as swaps:
        for _ in range(400):
            try:
                write_status(result)
                written += 1
            except OSError:
                refused += 1
    assert swaps[0] > 0
    assert _everything_in(outside) == []
    assert written > 0  # the real directory still gets its file between swaps
    assert (round_dir.parent / "round-01-guard.json").is_file()


def test_check_write_status_racing_a_step_directory_link_swap_never_writes_outside(
        tmp_path: Path, run: Run) -> None:
    _full_round(run)
    outside = tmp_path / "outside"
    outside.mkdir()
    codes = set()
    with _swapping(run.root / "reviews" / "design", outside):
        for _ in range(40):
            codes.add(run_main("check", "--write-status", str(run.root)).returncode)
    assert _everything_in(outside) == []
    assert codes <= {0, 1, 2}


def test_fix_never_writes_through_a_round_directory_swapped_for_a_link(
        tmp_path: Path, run: Run) -> None:
    round_dir = _full_round(run)
    (round_dir / "quality-claude.clean.md").write_text(
        "---\nreviewer: quality-claude\nround: 1\nfindings: 0\n---")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "quality-claude.clean.md").write_text("theirs")
    with _swapping(round_dir, outside):
        for _ in range(25):
            run_main("check", "--fix", str(run.root))
    assert (outside / "quality-claude.clean.md").read_text() == "theirs"
    assert _everything_in(outside) == ["quality-claude.clean.md"]


def test_round_paths_open_the_user_s_own_links_but_none_from_reviews_down(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "reviews" / "design").mkdir(parents=True)
    (tmp_path / "mine").symlink_to(real)  # the user's own link above the run: followed
    fd = open_round_dir(str(tmp_path / "mine" / "reviews" / "design"))
    os.close(fd)
    (real / "reviews" / "plan").symlink_to(real / "reviews" / "design")
    with pytest.raises(OSError) as caught:
        Dir.round_path(str(tmp_path / "mine" / "reviews" / "plan"))
    assert "symbolic link" in str(caught.value)


def test_fix_never_adds_a_newline_that_takes_a_file_over_the_size_cap(run: Run) -> None:
    _full_round(run)
    (run.round_dir("design", 1) / "quality-claude.clean.md").unlink()
    head = FINDING.format(round=1, n=1, severity="high", change_type="correctness",
                          step="design", artifact="design", tag="quality-claude")
    # a finding of exactly 1 MiB (the cap, still parsed) without its final newline
    text = head + "x" * (1024 * 1024 - len(head.encode()))
    finding = run.finding("design", 1, "quality-claude", text=text)
    assert finding.stat().st_size == 1024 * 1024
    before = run_main("check", "--format", "json", str(run.root))
    assert b"trailing_newline" in before.stdout and b"file_too_large" not in before.stdout
    fixed = run_main("check", "--fix", str(run.root))
    after = run_main("check", "--format", "json", str(run.root))
    assert b"file_too_large" not in fixed.stdout + after.stdout
    assert after.returncode == before.returncode == 0
    assert finding.stat().st_size == 1024 * 1024  # left as it was, its warning kept


@pytest.mark.parametrize("halting", ["round-01", "round-001"])
def test_round_01_and_round_001_never_share_a_status_file_the_stray_one_is_named(
        run: Run, halting: str) -> None:
    import json

    step = run.root / "reviews" / "design"
    for name in ("round-01", "round-001"):
        for tag in TAGS:
            (step / name).mkdir(parents=True, exist_ok=True)
            (step / name / f"{tag}.clean.md").write_text(
                f"---\nreviewer: {tag}\nround: 1\nfindings: 0\n---\n")
    (step / halting / "notes.txt").write_text("raw stdout\n")  # unknown_file_in_round_dir
    r = run_main("check", "--format", "json", "--write-status", str(run.root))
    doc = json.loads(r.stdout)
    assert r.returncode == 1
    named = [d for d in doc["diagnostics"] if d["cause"] == "bad_round_dir_name"]
    assert [Path(d["path"]).name for d in named] == ["round-001"]
    assert "round-01" in named[0]["message"]
    assert [Path(x["path"]).name for x in doc["rounds"]] == ["round-01"]
    status = json.loads((step / "round-01-guard.json").read_text())
    assert status["status"] == ("halt" if halting == "round-01" else "ok")
    assert status["status"] == doc["rounds"][0]["status"]


def test_check_never_passes_a_bad_round_by_reading_through_a_link_swapped_in_mid_run(
        tmp_path: Path, run: Run) -> None:
    bad = FINDING.format(round=1, n=1, severity="urgent", change_type="correctness",
                         step="design", artifact="design", tag="quality-claude")
    good = bad.replace("urgent", "high")
    round_dir = _full_round(run)
    (round_dir / "quality-claude.clean.md").unlink()
    (round_dir / "quality-claude.finding-F01.md").write_text(bad)
    outside = tmp_path / "outside"  # the same names, every file passing
    outside.mkdir()
    (outside / "quality-claude.finding-F01.md").write_text(good)
    (outside / "scope-claude.clean.md").write_text(
        (round_dir / "scope-claude.clean.md").read_text())
    (round_dir / "quality-claude.finding-F01.md").write_text(good)
    assert run_main("check", str(run.root)).returncode == 0  # the outside files pass
    (round_dir / "quality-claude.finding-F01.md").write_text(bad)
    assert run_main("check", str(run.root)).returncode == 1
    codes = []
    with _swapping(round_dir, outside):
        for _ in range(40):
            codes.append(run_main("check", str(run.root)).returncode)
    assert set(codes) == {1}, codes


def test_round_001_named_on_the_command_line_never_writes_round_01_s_status_file(
        run: Run) -> None:
    import json

    step = run.root / "reviews" / "design"
    for name in ("round-01", "round-001"):
        for tag in TAGS:
            (step / name).mkdir(parents=True, exist_ok=True)
            (step / name / f"{tag}.clean.md").write_text(
                f"---\nreviewer: {tag}\nround: 1\nfindings: 0\n---\n")
    (step / "round-01" / "notes.txt").write_text("raw stdout\n")
    assert run_main("check", "--write-status", str(step / "round-01")).returncode == 1
    assert json.loads((step / "round-01-guard.json").read_text())["status"] == "halt"
    run_main("check", "--write-status", str(step / "round-001"))
    assert json.loads((step / "round-01-guard.json").read_text())["status"] == "halt"


def test_check_names_a_round_reached_through_a_link_as_the_walk_does_never_judging_it(
        tmp_path: Path, run: Run) -> None:
    elsewhere = tmp_path / "elsewhere" / "round-01"
    elsewhere.mkdir(parents=True)
    for tag in TAGS:
        (elsewhere / f"{tag}.clean.md").write_text(
            f"---\nreviewer: {tag}\nround: 1\nfindings: 0\n---\n")
    (run.root / "reviews" / "design").mkdir(parents=True)
    (run.root / "reviews" / "design" / "round-01").symlink_to(elsewhere)
    for path in (run.root, run.root / "reviews" / "design" / "round-01"):
        r = run_main("check", str(path))
        assert r.returncode == 1 and b"symlink_in_round_dir" in r.stdout, r.stdout
        assert b"0 rounds" in r.stdout
