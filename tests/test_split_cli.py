"""End-to-end tests of `qrspi-guard split`: through the console script's entry point in this
process, and the installed console script in a subprocess where a process is the point."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import run_main

SCRIPT = Path(sys.executable).parent / "qrspi-guard"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rounds"
B = b"<<<FINDING-BOUNDARY>>>"
TAG = "quality-codex"

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")


def finding(n: int, tag: str = TAG, rnd: int = 2, body: str = "The message.",
            **fields: str) -> bytes:
    values = {"finding_id": f"R{rnd}-F{n:02d}", "severity": "medium",
              "change_type": "correctness", "referenced_files": "[design.md:L1-L2]",
              "artifact": "design", "round": str(rnd), "reviewer": tag}
    values.update(fields)
    front = "".join(f"{k}: {v}\n" for k, v in values.items())
    return f"---\n{front}---\n\n{body}\n".encode()


def stdout_of(*blocks: bytes, preamble: bytes = b"Reviewing the design.\n") -> bytes:
    return preamble + b"".join(B + b"\n" + block for block in blocks)


def run(*args: str, cwd: Path, stdin: bytes | None = None,
        preexec_fn=None) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    """In this process (qrspi_guard.cli:main); in the console script's own process when
    *preexec_fn* must run in it first."""
    if preexec_fn is None:
        proc = run_main(*args, cwd=cwd, input=stdin, timeout=120)
    else:
        proc = subprocess.run([str(SCRIPT), *args], cwd=cwd, input=stdin, capture_output=True,
                              timeout=120, preexec_fn=preexec_fn)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "strict"),
                                       proc.stderr.decode("utf-8", "strict"))


def split(tmp: Path, data: bytes | None, *extra: str, tag: str = TAG,
          round_dir: str = "reviews/design/round-02",
          **kw) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    if data is None:
        return run("split", "-", round_dir, tag, *extra, cwd=tmp, **kw)
    (tmp / "out.txt").write_bytes(data)
    return run("split", "out.txt", round_dir, tag, *extra, cwd=tmp, **kw)


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    (tmp_path / "reviews" / "design" / "round-02").mkdir(parents=True)
    return tmp_path


def rnd(tmp: Path) -> Path:
    return tmp / "reviews" / "design" / "round-02"


def listing(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    lines = proc.stderr.splitlines()
    assert all(line.startswith("qrspi-guard split: ") for line in lines), proc.stderr
    return lines


# -- the reference's table ----------------------------------------------------------


def test_findings_become_numbered_files_and_their_paths_are_printed(tmp: Path) -> None:
    proc = split(tmp, stdout_of(b"\n\n" + finding(1) + b"\n\n", finding(2)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    names = ["quality-codex.finding-F01.md", "quality-codex.finding-F02.md"]
    assert proc.stdout.splitlines() == [f"reviews/design/round-02/{n}" for n in names]
    assert listing(rnd(tmp)) == dict(zip(names, [finding(1), finding(2)], strict=True))


def test_no_findings_writes_the_clean_sentinel(tmp: Path) -> None:
    proc = split(tmp, b"NO_FINDINGS\n")
    assert proc.returncode == 0, proc.stderr
    assert listing(rnd(tmp)) == {"quality-codex.clean.md":
                                 b"---\nreviewer: quality-codex\nround: 02\nfindings: 0\n---\n"}


@pytest.mark.parametrize("data,said", [
    (b"", "stdout is empty"),
    (b"\n", "stdout is empty"),
    (b"Looks fine to me.\n", "no <<<FINDING-BOUNDARY>>> line and no NO_FINDINGS sentinel"),
    (b"NO_FINDINGS\n\n", "not byte-exact"),
], ids=["empty", "lone-newline", "prose", "sentinel-two-newlines"])
def test_malformed_stdout_exits_1_with_one_line_and_no_files(tmp: Path, data: bytes,
                                                             said: str) -> None:
    proc = split(tmp, data)
    assert proc.returncode == 1
    (line,) = stderr_lines(proc)
    assert said in line
    assert proc.stdout == "" and listing(rnd(tmp)) == {}


@pytest.mark.parametrize("args,said", [
    (["split", "out.txt", "reviews/design/round-02", "Quality-Codex"], "tag grammar"),
    (["split", "out.txt", "reviews/design/round-02", "quality_codex"], "tag grammar"),
    (["split", "out.txt", "reviews/design/round-09", TAG], "does not exist"),
    (["split", "out.txt", "reviews/design", TAG], "not a round directory"),
    (["split", "out.txt", "reviews/design/round-00", TAG], "not a round directory"),
    (["split", "missing.txt", "reviews/design/round-02", TAG], "cannot read STDOUT"),
    (["split", "out.txt", "reviews/design/round-02"], "Missing argument"),
    (["split", "out.txt", "reviews/design/round-02", TAG, "--bogus"], "no such option"),
], ids=["tag-case", "tag-underscore", "round-missing", "not-round", "round-zero", "stdout-missing",
        "too-few", "unknown-option"])
def test_wrong_arguments_exit_2_and_write_nothing(tmp: Path, args: list[str], said: str) -> None:
    (tmp / "out.txt").write_bytes(stdout_of(finding(1)))
    (tmp / "reviews" / "design" / "round-00").mkdir()
    proc = run(*args, cwd=tmp)
    assert proc.returncode == 2
    assert said in proc.stderr
    assert listing(rnd(tmp)) == {}


# -- validation ---------------------------------------------------------------------


def test_a_failing_block_is_written_and_named_by_cause(tmp: Path) -> None:
    proc = split(tmp, stdout_of(finding(1), finding(2, severity="critical")))
    assert proc.returncode == 1
    lines = stderr_lines(proc)
    assert any("quality-codex.finding-F02.md" in x and "severity_out_of_enum" in x
               for x in lines)
    assert "written anyway" in lines[-1]
    assert sorted(listing(rnd(tmp))) == ["quality-codex.finding-F01.md",
                                         "quality-codex.finding-F02.md"]
    assert len(proc.stdout.splitlines()) == 2


def test_reject_invalid_writes_nothing_when_a_block_fails(tmp: Path) -> None:
    proc = split(tmp, stdout_of(finding(1), finding(2, severity="critical")),
                 "--reject-invalid")
    assert proc.returncode == 1
    assert "severity_out_of_enum" in proc.stderr and "nothing written" in proc.stderr
    assert proc.stdout == "" and listing(rnd(tmp)) == {}


def test_reject_invalid_writes_valid_output(tmp: Path) -> None:
    proc = split(tmp, stdout_of(finding(1)), "--reject-invalid")
    assert proc.returncode == 0 and list(listing(rnd(tmp))) == ["quality-codex.finding-F01.md"]


@pytest.mark.parametrize("other", ["scope-codex", "quality-claude"])
def test_impersonating_another_tag_is_reviewer_tag_mismatch(tmp: Path, other: str) -> None:
    proc = split(tmp, stdout_of(finding(1, reviewer=other)), "--reject-invalid")
    assert proc.returncode == 1
    assert "reviewer_tag_mismatch" in proc.stderr and other in proc.stderr
    assert listing(rnd(tmp)) == {}


def test_round_must_equal_the_directory(tmp: Path) -> None:
    proc = split(tmp, stdout_of(finding(1, rnd=3)))
    assert proc.returncode == 1 and "round_mismatch" in proc.stderr


def test_untrusted_text_cannot_inject_escapes_or_lines(tmp: Path) -> None:
    evil = finding(1, severity='"\\e[31mred\\nFAKE: ok"')
    proc = split(tmp, stdout_of(evil))
    assert proc.returncode == 1
    assert "\x1b" not in proc.stderr
    stderr_lines(proc)  # every line is one of ours: no injected line


def test_150_findings_number_f01_to_f150_and_check_accepts_them(tmp_path: Path) -> None:
    base = tmp_path / "run"
    shutil.copytree(FIXTURES / "causes" / "split_would_mix_attempts", base)
    round_dir = base / "reviews" / "research" / "round-01"
    (round_dir / "quality-codex.finding-F01.md").unlink()
    blocks = [finding(n, rnd=1, artifact="research") for n in range(1, 151)]
    proc = split(base, stdout_of(*blocks), round_dir="reviews/research/round-01")
    assert proc.returncode == 0, proc.stderr[:500]
    names = sorted(p.name for p in round_dir.glob("quality-codex.finding-F*.md"))
    expected = sorted(f"quality-codex.finding-F{n:02d}.md" for n in range(1, 151))
    assert names == expected
    assert "quality-codex.finding-F100.md" in names and "quality-codex.finding-F001.md" \
        not in names
    assert [Path(x).name for x in proc.stdout.splitlines()][98:100] == [
        "quality-codex.finding-F99.md", "quality-codex.finding-F100.md"]
    check = run("check", str(round_dir), cwd=base)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("data", [
    stdout_of(finding(1)).replace(b"\n", b"\r\n"),
    stdout_of(finding(1)).replace(B + b"\n", B + b"\r\n"),
    stdout_of(finding(1)).replace(B, b"  " + B),
    stdout_of(finding(1)).replace(B, b"\t" + B),
], ids=["crlf-everywhere", "crlf-boundary", "indented", "tab-indented"])
def test_crlf_and_indented_boundaries_are_not_boundaries(tmp: Path, data: bytes) -> None:
    proc = split(tmp, data)
    assert proc.returncode == 1
    (line,) = stderr_lines(proc)
    assert "no <<<FINDING-BOUNDARY>>>" in line and "boundaries must be exact" in line
    assert listing(rnd(tmp)) == {}


def test_crlf_content_between_exact_boundaries_is_crlf_line_endings(tmp: Path) -> None:
    proc = split(tmp, B + b"\n" + finding(1).replace(b"\n", b"\r\n"), "--reject-invalid")
    assert proc.returncode == 1 and "crlf_line_endings" in proc.stderr
    assert listing(rnd(tmp)) == {}


def test_dash_reads_standard_input(tmp: Path) -> None:
    proc = split(tmp, None, stdin=stdout_of(finding(1), finding(2)))
    assert proc.returncode == 0, proc.stderr
    assert len(listing(rnd(tmp))) == 2
    proc = split(tmp, None, "--replace", stdin=b"NO_FINDINGS")
    assert proc.returncode == 0 and list(listing(rnd(tmp))) == ["quality-codex.clean.md"]


# -- mixing, --replace and all-or-nothing -------------------------------------------


def fixture_copy(tmp_path: Path) -> tuple[Path, list[str]]:
    index = json.loads((FIXTURES / "causes" / "index.json").read_text())
    entry = index["split_would_mix_attempts"]
    assert entry["command"] == "split"
    shutil.copytree(FIXTURES / entry["path"], tmp_path / entry["path"])
    args = [str(tmp_path / a) for a in entry["args"][:2]] + entry["args"][2:]
    return tmp_path / entry["path"] / "reviews" / "research" / "round-01", args


def test_fixture_split_would_mix_attempts_refuses_and_changes_nothing(tmp_path: Path) -> None:
    round_dir, args = fixture_copy(tmp_path)
    before = listing(round_dir)
    proc = run("split", *args, cwd=tmp_path)
    assert proc.returncode == 1
    (line,) = stderr_lines(proc)
    assert "split_would_mix_attempts" in line and "--replace" in line
    assert proc.stdout == "" and listing(round_dir) == before


def test_no_findings_over_earlier_output_also_refuses(tmp_path: Path) -> None:
    round_dir, args = fixture_copy(tmp_path)
    before = listing(round_dir)
    (tmp_path / "clean.txt").write_bytes(b"NO_FINDINGS\n")
    proc = run("split", str(tmp_path / "clean.txt"), args[1], args[2], cwd=tmp_path)
    assert proc.returncode == 1 and "split_would_mix_attempts" in proc.stderr
    assert listing(round_dir) == before


def test_replace_after_a_stale_attempt_swaps_it_in_one_step(tmp_path: Path) -> None:
    round_dir, args = fixture_copy(tmp_path)
    (round_dir / "quality-codex.finding-F01.score.yml").write_bytes(b"score: 85\nreason: ok\n")
    (round_dir / "quality-codex.finding-F05.md").write_bytes(b"stale\n")
    proc = run("split", *args, "--replace", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stdout = Path(args[0]).read_bytes().split(B + b"\n")
    assert listing(round_dir) == {
        "quality-claude.clean.md": (round_dir / "quality-claude.clean.md").read_bytes(),
        "quality-codex.finding-F01.md": stdout[1],
        "quality-codex.finding-F02.md": stdout[2],
    }
    check = run("check", str(round_dir), cwd=tmp_path)
    assert check.returncode == 0, check.stdout


def _limit_file_size() -> None:
    # Enforced for root too; Python ignores SIGXFSZ, so the write fails with EFBIG.
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@pytest.mark.parametrize("replace", [False, True], ids=["fresh", "replace"])
def test_a_failure_in_the_middle_of_writing_leaves_no_partial_set(tmp: Path,
                                                                  replace: bool) -> None:
    d = rnd(tmp)
    if replace:
        (d / "quality-codex.finding-F01.md").write_bytes(finding(1, body="Old."))
        (d / "quality-codex.finding-F01.score.yml").write_bytes(b"score: 90\nreason: ok\n")
    (d / "scope-codex.clean.md").write_bytes(b"---\nreviewer: scope-codex\nround: 2\n"
                                             b"findings: 0\n---\n")
    before = listing(d)
    big = finding(3, body="A long pasted log line.\n" * 400)  # > 4096 bytes
    blocks = [finding(1), finding(2), big, finding(4)]
    proc = split(tmp, stdout_of(*blocks), *(["--replace"] if replace else []),
                 preexec_fn=_limit_file_size)
    assert proc.returncode == 2
    (line,) = stderr_lines(proc)
    assert "could not write the files (write quality-codex.finding-F03.md)" in line
    assert "nothing was changed" in line
    assert listing(d) == before  # no temp, no partial set, the stale attempt intact


def test_a_directory_in_the_way_fails_cleanly_with_replace(tmp: Path) -> None:
    d = rnd(tmp)
    (d / "quality-codex.finding-F01.md").write_bytes(finding(1, body="Old."))
    (d / "quality-codex.finding-F02.md").mkdir()
    before = sorted(os.listdir(d))
    proc = split(tmp, stdout_of(finding(1)), "--replace")
    assert proc.returncode == 2 and "is a directory" in proc.stderr
    assert sorted(os.listdir(d)) == before


def test_clean_sentinel_from_split_passes_check(tmp_path: Path) -> None:
    round_dir, args = fixture_copy(tmp_path)
    proc = run("split", "-", args[1], args[2], "--replace", cwd=tmp_path, stdin=b"NO_FINDINGS")
    assert proc.returncode == 0, proc.stderr
    assert sorted(listing(round_dir)) == ["quality-claude.clean.md", "quality-codex.clean.md"]
    check = run("check", str(round_dir), cwd=tmp_path)
    assert check.returncode == 0, check.stdout


# -- the behaviours upstream's own splitter tests pin (generations.md §8) ------------
# tests/unit/test-codex-splitter.bats in dfrysinger/qrspi-plus runs the splitter into
# `mktemp -d` directories (not round-NN) and twice on the same input.


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A directory like `mktemp -d` gives: not round-NN, not inside a reviews/ tree."""
    d = tmp_path / "tmp.Xq3ZbQ"
    d.mkdir()
    return d


def into(scratch: Path, data: bytes, *extra: str) -> subprocess.CompletedProcess[str]:
    (scratch.parent / "reviewer.out").write_bytes(data)
    return run("split", "reviewer.out", scratch.name, TAG, *extra, cwd=scratch.parent)


def test_findings_into_a_scratch_directory_take_their_finding_ids_round(scratch: Path) -> None:
    data = stdout_of(finding(1, rnd=3), finding(2, rnd=3),
                     preamble=b"This preamble is not part of any finding.\n")
    proc = into(scratch, data)
    assert proc.returncode == 0, proc.stderr
    assert listing(scratch) == {"quality-codex.finding-F01.md": finding(1, rnd=3),
                                "quality-codex.finding-F02.md": finding(2, rnd=3)}
    assert b"preamble" not in b"".join(listing(scratch).values())


@pytest.mark.parametrize("data", [b"NO_FINDINGS\n", b"NO_FINDINGS"], ids=["12-byte", "11-byte"])
def test_no_findings_into_a_scratch_directory_writes_only_a_roundless_clean_sentinel(
        scratch: Path, data: bytes) -> None:
    proc = into(scratch, data)
    assert proc.returncode == 0, proc.stderr
    assert listing(scratch) == {
        "quality-codex.clean.md": b"---\nreviewer: quality-codex\nfindings: 0\n---\n"}


def test_the_round_option_gives_a_scratch_directory_its_round(scratch: Path) -> None:
    proc = into(scratch, b"NO_FINDINGS\n", "--round", "3")
    assert proc.returncode == 0, proc.stderr
    assert listing(scratch)["quality-codex.clean.md"] == (
        b"---\nreviewer: quality-codex\nround: 3\nfindings: 0\n---\n")
    other = scratch.parent / "other"
    other.mkdir()
    (scratch.parent / "f.txt").write_bytes(stdout_of(finding(1, rnd=3)))
    proc = run("split", "f.txt", "other", TAG, "--round", "4", cwd=scratch.parent)
    assert proc.returncode == 1 and "round_mismatch" in proc.stderr


@pytest.mark.parametrize("data,said", [
    (b"The reviewer wrote prose and neither a boundary nor the sentinel.\n", "malformed"),
    (b"", "empty"),
], ids=["malformed", "empty"])
def test_malformed_or_empty_input_into_a_scratch_directory_writes_nothing(
        scratch: Path, data: bytes, said: str) -> None:
    proc = into(scratch, data)
    assert proc.returncode == 1
    (line,) = stderr_lines(proc)
    assert said in line
    assert listing(scratch) == {}


def test_a_rerun_on_the_same_input_succeeds_and_touches_nothing(scratch: Path) -> None:
    data = stdout_of(finding(1, rnd=3), finding(2, rnd=3))
    first = into(scratch, data)
    assert first.returncode == 0, first.stderr
    stats = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in scratch.iterdir()}
    before = listing(scratch)
    second = into(scratch, data)
    assert second.returncode == 0 and second.stderr == ""
    assert second.stdout == first.stdout  # the same paths: they stand for this input
    assert listing(scratch) == before
    assert {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in scratch.iterdir()} == stats


def test_a_rerun_on_different_input_is_still_split_would_mix_attempts(scratch: Path) -> None:
    assert into(scratch, stdout_of(finding(1, rnd=3), finding(2, rnd=3))).returncode == 0
    before = listing(scratch)
    proc = into(scratch, stdout_of(finding(1, rnd=3)))
    assert proc.returncode == 1 and "split_would_mix_attempts" in proc.stderr
    assert listing(scratch) == before


def test_a_rerun_into_a_real_round_on_the_same_input_succeeds(tmp: Path) -> None:
    data = stdout_of(finding(1), finding(2))
    assert split(tmp, data).returncode == 0
    before = listing(rnd(tmp))
    proc = split(tmp, data)
    assert proc.returncode == 0 and listing(rnd(tmp)) == before
    assert split(tmp, b"NO_FINDINGS\n").returncode == 1  # a different attempt


def test_a_round_option_that_disagrees_with_a_round_nn_directory_is_exit_2(tmp: Path) -> None:
    proc = split(tmp, stdout_of(finding(1)), "--round", "3")
    assert proc.returncode == 2 and "--round 3 disagrees" in proc.stderr
    assert listing(rnd(tmp)) == {}
    assert split(tmp, stdout_of(finding(1)), "--round", "2").returncode == 0
