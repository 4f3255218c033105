"""Issue 12's defects in the core, each pinned by a regression test named for it.

#1 integers of any size, #2 a legal-looking finding number, #7 FIFOs where regular
files belong, #15 a deeply nested tree: each is the field's or file's named cause, or a
completed run, never `internal error`, a crash or a hang.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qrspi_guard import check
from qrspi_guard.engine import check_paths
from tests.support import FINDING, Run, run_main

BIG = "1" * 5000


def causes(result: object) -> dict[str, str]:
    return {d.cause: d.level for d in result.diagnostics}  # type: ignore[attr-defined]


# -- #1 integers of any size ----------------------------------------------------------


@pytest.mark.parametrize("field,value,cause", [
    ("finding_id", f"R{BIG}-F01", "finding_id_malformed"),
    ("finding_id", f"R1-F{BIG}", "finding_id_malformed"),
    ("round", BIG, "round_not_integer"),
    ("severity", "0777" + "7" * 4996, "severity_out_of_enum"),
    ("change_type", BIG, "change_type_out_of_enum"),
    ("artifact", BIG, "artifact_step_mismatch"),  # a string (of digits), not a number
], ids=["id-round", "id-number", "round", "octal-severity", "change-type", "artifact"])
def test_a_5000_digit_number_in_a_finding_is_the_fields_own_cause(
        run: Run, field: str, value: str, cause: str) -> None:
    text = FINDING.format(round=1, n=1, tag="quality-claude", step="goals", severity="high",
                          change_type="correctness", artifact="goals")
    lines = [f"{field}: {value}" if line.startswith(f"{field}:") else line
             for line in text.split("\n")]
    run.finding("goals", 1, "quality-claude", text="\n".join(lines))
    proc = run_main("check", "--format", "json", str(run.root))
    assert proc.returncode == 1, proc.stderr
    got = {d["cause"]: d for d in json.loads(proc.stdout)["diagnostics"]}
    assert cause in got
    assert len(got[cause].get("value", "")) <= 200  # the value is cut, never printed whole


@pytest.mark.parametrize("score,cause", [(BIG, "score_out_of_range"),
                                         ("0" + BIG, "score_out_of_range"),
                                         ("-" + BIG, "score_out_of_range")])
def test_a_5000_digit_sidecar_score_is_out_of_range(run: Run, score: str, cause: str) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("design", 1, "quality-claude")
    run.write("reviews/design/round-01/quality-claude.finding-F01.score.yml",
              f"score: {score}\nreason: fine\n")
    assert cause in causes(check(str(run.root)))


def test_a_5000_digit_fan_in_score_is_malformed_not_a_crash(run: Run) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("design", 1, "quality-claude")
    run.write("reviews/design/round-01/quality-claude.finding-F01.score.md",
              f"---\nverifier_status: passed\nscore: {BIG}\n---\n")
    assert "sidecar_malformed" in causes(check(str(run.root)))


@pytest.mark.parametrize("config", [f"second_reviewer: {BIG}\n", f"codex_reviews: 0{BIG}\n",
                                    f"verifier_enabled: {BIG}\n", f"pipeline: {BIG}\n"])
def test_a_5000_digit_config_value_is_config_field_invalid(run: Run, config: str) -> None:
    if not config.startswith(("second_reviewer", "codex_reviews")):
        config = "second_reviewer: false\n" + config
    run.config(config)
    run.clean("research", 1, "quality-claude")
    assert "config_field_invalid" in causes(check(str(run.root)))


def test_5000_digit_verified_totals_are_a_mismatch(run: Run) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("design", 1, "quality-claude")
    run.clean("design", 1, "scope-claude")
    run.write("reviews/design/round-01/quality-claude.finding-F01.score.yml",
              "score: 90\nreason: real\n")
    run.write("reviews/design/round-01-verified.md",
              f"---\nscored: {BIG}\nkept: 1\ndropped: 0\nfailed: 0\nclean: 1\n---\n")
    assert "verified_totals_mismatch" in causes(check(str(run.root)))


def test_a_round_directory_of_hundreds_of_digits_is_read_as_a_round(run: Run) -> None:
    # a name holds at most 255 bytes, well inside the 1,000-digit bound that keeps int()
    # away from Python's limit; the round is legal, if absurd, and costs one round
    (run.root / "reviews" / "goals" / f"round-{'1' * 240}").mkdir(parents=True)
    got = check(str(run.root))
    assert [r.ref.round for r in got.rounds] == [int("1" * 240)]
    assert "bad_round_dir_name" not in causes(got)


def test_a_5000_digit_number_in_a_hook_write_blocks_it(run: Run) -> None:
    path = run.round_dir("goals", 1) / "quality-claude.finding-F01.md"
    content = FINDING.format(round=BIG, n=1, tag="quality-claude", step="goals",
                             severity="high", change_type="correctness", artifact="goals")
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(run.root),
               "tool_input": {"file_path": str(path), "content": content}}
    proc = run_main("hook", input=json.dumps(payload).encode())
    assert proc.returncode == 2  # refused, never failed open
    assert b"round_not_integer" in proc.stderr or b"finding_id_malformed" in proc.stderr


# -- #2 a legal-looking finding number ---------------------------------------------------


@pytest.mark.parametrize("number", ["50000000", "999999999999", "9" * 200])
def test_a_huge_finding_number_costs_what_one_file_costs(run: Run, number: str) -> None:
    name = f"quality-claude.finding-F{number}.md"
    text = FINDING.format(round=1, n=1, tag="quality-claude", step="goals", severity="high",
                          change_type="correctness", artifact="goals")
    (run.round_dir("goals", 1) / name).write_text(text.replace("R1-F01", f"R1-F{number}"))
    run.clean("goals", 1, "scope-claude")
    result = check(str(run.root))
    gap = [d for d in result.diagnostics if d.cause == "fnum_gap"]
    # the gap is named in a few numbers and counted, never enumerated (10^12 would not end)
    assert len(gap) == 1 and "F01, F02" in gap[0].message and "more" in gap[0].message


# -- #7 FIFOs and devices where regular files belong --------------------------------------


def test_a_fifo_named_config_md_is_config_missing_not_a_hang(run: Run) -> None:
    (run.root / "config.md").unlink()
    os.mkfifo(run.root / "config.md")
    run.clean("research", 1, "quality-claude")
    proc = run_main("check", "--format", "json", str(run.root), timeout=30)
    assert proc.returncode == 1
    (diag,) = [d for d in json.loads(proc.stdout)["diagnostics"] if d["cause"] == "config_missing"]
    assert "not a regular file" in diag["message"]


@pytest.mark.parametrize("rel", ["reviews/design/round-01-verified.md",
                                 "reviews/design/round-01-commit.txt",
                                 "reviews/design/round-01-scope-set.txt",
                                 "reviews/design/round-01-verifier-disabled.md",
                                 "reviews/design/round-01/.verifier-fan-in-audit.json",
                                 "reviews/design/round-01/kept-findings.txt"])
def test_a_fifo_in_place_of_a_bookkeeping_file_is_named_not_a_hang(run: Run, rel: str) -> None:
    run.config("second_reviewer: false\nverifier_enabled: true\n")
    run.finding("design", 1, "quality-claude")
    run.clean("design", 1, "scope-claude")
    os.mkfifo(run.root / rel)
    proc = run_main("check", "--format", "json", str(run.root), timeout=30)
    assert proc.returncode in (0, 1), proc.stderr
    messages = " ".join(d["message"] for d in json.loads(proc.stdout)["diagnostics"])
    assert "not a regular file" in messages


def test_a_character_device_in_a_round_is_unreadable_not_read(run: Run) -> None:
    run.clean("research", 1, "quality-claude")
    link = run.round_dir("research", 1) / "quality-codex.clean.md"
    try:
        os.mknod(link, 0o644 | 0o020000, os.makedev(1, 5))  # /dev/zero's numbers
    except PermissionError:
        pytest.skip("mknod needs root")
    assert "unreadable_file" in causes(check(str(run.root)))


# -- #15 deep trees -----------------------------------------------------------------------


def test_a_thousand_nested_directories_do_not_stop_the_walk(tmp_path: Path) -> None:
    deep = str(tmp_path)
    for _ in range(1000):  # (pathlib and os.makedirs recurse: build it level by level)
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
    Run(tmp_path / "art").config().clean("research", 1, "quality-claude")
    try:
        result = check_paths([str(tmp_path)])
        assert [r.ref.step for r in result.rounds] == ["research"]
        assert not result.failed()
    finally:  # shutil.rmtree (pytest's clean-up) recurses too: take it down level by level
        while deep != str(tmp_path):
            os.rmdir(deep)
            deep = os.path.dirname(deep)


def test_a_path_that_cannot_be_listed_is_exit_2(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root lists any directory (the unreadable_dir tests cover root)")
    target = tmp_path / "locked"
    target.mkdir()
    os.chmod(target, 0)
    try:
        proc = run_main("check", str(target))
    finally:
        os.chmod(target, 0o755)
    assert proc.returncode == 2 and proc.stderr.count(b"\n") == 1


def test_a_fifo_named_by_config_is_exit_2_never_opened(run: Run, tmp_path: Path) -> None:
    fifo = tmp_path / "config-fifo.md"
    os.mkfifo(fifo)
    run.clean("research", 1, "quality-claude")
    proc = run_main("check", "--config", str(fifo), str(run.root), timeout=30)
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_named_by_config_is_exit_2_never_read(run: Run, device: str) -> None:
    run.clean("research", 1, "quality-claude")
    proc = run_main("check", "--config", device, str(run.root), timeout=30)
    assert proc.returncode == 2 and proc.stderr.count(b"\n") == 1
    assert f"Invalid value for --config: {device!r} is not a regular file".encode() \
        in proc.stderr
