"""generations.md §4 (files a run writes into or beside a round) and §8 (directories
that are not quite rounds)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.genkit import causes, check, fanin_round, finding_text, new_run, of, one, put, sidecar_md
from tests.support import run_main

Q = "quality-claude"
S = "scope-claude"
SHA = "0123456789abcdef0123456789abcdef01234567"


def _clean_round(run, step: str = "design", n: int = 1) -> Path:
    d = run.round_dir(step, n)
    for tag in (Q, S):
        run.clean(step, n, tag)
    return d


def listing(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*"))


# -- §4 inside the round ------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "round-03.diff", "round-03-verifier-disabled.md", ".round-prepare.json",
    ".round-prepare.json.tmp.4242", ".round-complete.json", ".round-complete.json.tmp",
    ".dispatch-manifest.json.tmp.Xy12Ab", ".dispatch-manifest.json.tmp", ".anything",
])
def test_orchestrator_files_inside_a_round_are_never_unknown(tmp_path: Path,
                                                             name: str) -> None:
    run = new_run(tmp_path)
    d = _clean_round(run, n=3)
    content = ("---\nreason: off\nround: 3\ncreated_by: implement\n---\n"
               if name.endswith("disabled.md") else "diff --git a/x b/x\n")
    put(d, name, content)
    result = check(run.root)
    assert "unknown_file_in_round_dir" not in causes(result)
    assert result.rounds[0].status == "ok", causes(result)


def test_hidden_directories_inside_a_round_are_ignored(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = _clean_round(run)
    put(d / ".dispatch", "quality-codex.prompt", "Review the design.\n")
    put(d / ".dispatch", "quality-codex.raw", "NO_FINDINGS\n")
    (d / ".dispatch-manifest.json.lock").mkdir()
    put(d, ".dispatch-manifest.json", json.dumps([{"tag": Q, "status": "dispatched"}]))
    result = check(run.root)
    assert result.rounds[0].status == "ok", causes(result)


@pytest.mark.parametrize("name", ["round-02.diff", "round-04-verifier-disabled.md",
                                  "round-03-verified.md", "round-03-commit.txt",
                                  "round-3.diff"])
def test_round_files_of_another_round_or_kind_inside_a_round_are_unknown(
        tmp_path: Path, name: str) -> None:
    run = new_run(tmp_path)
    d = _clean_round(run, n=3)
    put(d, name, "x\n")
    assert one(check(run.root), "unknown_file_in_round_dir").file == name


def test_kept_findings_txt_is_known_in_fan_in_rounds_only(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "scope", 50)], cleans=[S])
    put(d, "kept-findings.txt", f"/elsewhere/{Q}.finding-F01.md\n")
    assert "unknown_file_in_round_dir" not in causes(check(run.root))
    assert one(check(run.root, protocol="apply-fix"),
               "unknown_file_in_round_dir").file == "kept-findings.txt"


# -- §4 beside the round -------------------------------------------------------------


@pytest.mark.parametrize("rel", [
    "reviews/design/round-01-base.txt", "reviews/design/round-01.absorption-map.tsv",
    "reviews/design/round-01-backward-loop.flag", "reviews/design/round-01-results.md",
    "reviews/design/round-01.diff", "reviews/design/round-01-dispositions.md",
    "reviews/design/round-01-guard.json", "reviews/integration/phase-base.txt",
    "reviews/test/phase-base.txt", "reviews/implement/orchestration-boundary.md",
    "reviews/tasks/task-01/reference-gate.md", "reviews/tasks/task-01-review.md",
    "reviews/tasks/task-01/round-01-base.txt", "reviews/tasks/task-01/round-01.diff",
])
def test_orchestrator_files_beside_rounds_are_never_legacy_layout(tmp_path: Path,
                                                                  rel: str) -> None:
    run = new_run(tmp_path)
    _clean_round(run)
    run.clean("tasks/task-01", 1, Q)
    run.write(rel, "x\n")
    result = check(run.root)
    assert "legacy_layout" not in causes(result), rel
    assert not any(x.level == "error" for x in result.diagnostics), causes(result)


def test_single_file_rounds_beside_rounds_are_still_legacy_layout(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    _clean_round(run)
    run.write("reviews/design/round-01-claude.md", "# old review\n")
    assert one(check(run.root), "legacy_layout").level == "info"


# round-NN-commit.txt: an error where no upstream reader accepts it, a warning where one
# still does (artifact rounds: review-prep.sh strips blanks and takes 7..64 lowercase
# hex; task rounds: round-prepare.sh's re.match(rb"^[0-9a-f]{40}\n$"), which also takes
# a second newline).
ANCHORS = [
    # (content, level at artifact level, level in a task round); None: no diagnostic
    (SHA + "\n", None, None),
    (SHA + "\n\n", "warning", "warning"),
    ("3592b07\n", "warning", "error"),
    (SHA, "warning", "error"),
    (SHA + "\r\n", "warning", "error"),
    ("  " + SHA + "\n", "warning", "error"),
    ("a" * 64 + "\n", "warning", "error"),
    (SHA.upper() + "\n", "error", "error"),
    ("", "error", "error"),
    ("z" * 40 + "\n", "error", "error"),
    ("abcdef\n", "error", "error"),
    ("a" * 65 + "\n", "error", "error"),
    (SHA + "\n" + SHA + "\n", "error", "error"),
    ("\xff" * 40 + "\n", "error", "error"),
]


@pytest.mark.parametrize("content, artifact_level, task_level", ANCHORS)
@pytest.mark.parametrize("task", [False, True], ids=["artifact", "task"])
def test_commit_anchor_is_judged_by_the_upstream_script_that_reads_it(
        tmp_path: Path, content: str, artifact_level: str | None, task_level: str | None,
        task: bool) -> None:
    run = new_run(tmp_path)
    step = "tasks/task-01" if task else "design"
    _clean_round(run, step)
    run.write(f"reviews/{step}/round-01-commit.txt", content.encode("latin-1"))
    got = of(check(run.root), "commit_anchor_malformed")
    level = task_level if task else artifact_level
    assert [x.level for x in got] == ([level] if level else [])
    if got:
        assert got[0].file == "round-01-commit.txt"
        assert got[0].path.endswith(f"{step}/round-01-commit.txt")


def test_a_fifo_named_as_the_commit_anchor_is_a_named_cause_never_a_hang(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    _clean_round(run)
    os.mkfifo(run.root / "reviews/design/round-01-commit.txt")
    proc = run_main("check", "--format", "json", str(run.root), timeout=30)
    assert b"Traceback" not in proc.stderr
    assert "commit_anchor_malformed" in {x["cause"] for x in
                                         json.loads(proc.stdout)["diagnostics"]}


SCOPE_SETS = [
    ("", None), ("# scope-set for round 2\n", None), ("skills/design/SKILL.md\n", None),
    ("# comment\n# another\nskills/design/SKILL.md\n## Trade-offs\n<full>\n", None),
    ("skills/design/SKILL.md\n\nskills/plan/SKILL.md\n", "warning"),  # blank line
    ("skills/design/SKILL.md", "warning"),  # no final newline
    ("skills/design/SKILL.md \n", "error"), (" skills/design/SKILL.md\n", "error"),
    ("## Trade-offs \n", "error"), ("\tskills/x.md\n", "error"),
    ("skills/design/SKILL.md\r\n", "error"), ("# c\r\nskills/x.md\r\n", "error"),
    ("\xff\xfe\n", "error"),
]


@pytest.mark.parametrize("content, level", SCOPE_SETS)
@pytest.mark.parametrize("task", [False, True], ids=["artifact", "task"])
def test_scope_set_lines_are_comments_then_tags(tmp_path: Path, content: str,
                                                level: str | None, task: bool) -> None:
    run = new_run(tmp_path)
    step = "tasks/task-01" if task else "design"
    _clean_round(run, step)
    run.write(f"reviews/{step}/round-01-scope-set.txt", content.encode("latin-1"))
    got = of(check(run.root), "scope_set_malformed")
    assert [x.level for x in got] == ([level] if level else []), content


# -- §8 round-NN-<suffix>/ ---------------------------------------------------------


def test_a_suffixed_round_dir_is_bad_and_its_files_are_judged_as_round_nn(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.root / "reviews/design/round-05-fanout"
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, round_no=5))
    put(d, f"{Q}.finding-F02.md", finding_text(Q, 2, "corectness", round_no=5))
    put(d, f"{Q}.finding-F03.md", finding_text(Q, 3, round_no=4))
    put(d, f"{Q}.finding-F01.score.md", sidecar_md("abc"))
    result = check(run.root)
    bad = one(result, "bad_round_dir_name")
    assert bad.path.endswith("round-05-fanout") and bad.level == "error"
    assert causes(result, f"{Q}.finding-F01.md") == []
    assert causes(result, f"{Q}.finding-F02.md") == ["change_type_out_of_enum"]
    assert causes(result, f"{Q}.finding-F03.md") == ["round_mismatch"]
    assert causes(result, f"{Q}.finding-F01.score.md") == ["sidecar_malformed"]
    assert "expected_tag_no_output" not in causes(result)  # no matrix for it


def test_a_suffixed_round_dir_never_gets_a_status_file(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    _clean_round(run, n=5)
    d = run.root / "reviews/design/round-05-fanout"
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, "corectness", round_no=5))
    proc = run_main("check", "--write-status", str(run.root))
    assert proc.returncode == 1
    status = json.loads((run.root / "reviews/design/round-05-guard.json").read_text())
    assert status["status"] == "ok" and status["halts"] == []  # round-05's own, unclobbered
    assert sorted(p.name for p in (run.root / "reviews/design").glob("*guard*")) == [
        "round-05-guard.json"]
    proc = run_main("check", "--write-status", str(d))
    assert proc.returncode == 1
    assert json.loads((run.root / "reviews/design/round-05-guard.json").read_text()
                      )["halts"] == []


@pytest.mark.parametrize("dirname", ["round-5", "round-00", "round-05-", "roundabout",
                                     "round-x"])
def test_other_round_like_dirs_are_bad_round_dir_name_and_not_judged(tmp_path: Path,
                                                                     dirname: str) -> None:
    run = new_run(tmp_path)
    put(run.root / "reviews/design" / dirname, f"{Q}.finding-F01.md",
        finding_text(Q, 1, "corectness"))
    result = check(run.root)
    assert one(result, "bad_round_dir_name").path.endswith(dirname)
    assert "change_type_out_of_enum" not in causes(result)


# -- §8 a step directory of unknown name -------------------------------------------


def test_an_unknown_step_dir_with_rounds_is_judged_like_a_task_round(tmp_path: Path) -> None:
    run = new_run(tmp_path, "second_reviewer: true\nverifier_enabled: true\n"
                            "route: [goals, design]\n")
    step = "integration-wave-23"
    d = run.root / "reviews" / step / "round-01"
    put(d, "integration-claude.finding-F01.md",
        finding_text("integration-claude", 1, "corectness", step="integration"))
    put(d, "spec-gpt55.clean.md", "---\nreviewer: spec-gpt55\nround: 1\nfindings: 0\n---\n")
    put(d, "visual-fidelity-claude.skipped.md",
        "---\nskip_reason: empty_wireframe_paths\n---\n")
    result = check(run.root)
    warn = one(result, "unknown_step_dir")
    assert warn.level == "warning" and step in warn.message
    assert causes(result, "integration-claude.finding-F01.md") == ["change_type_out_of_enum"]
    assert not {"expected_tag_no_output", "unrouted_tag", "step_not_on_route",
                "artifact_step_mismatch", "unknown_file_in_round_dir"} & set(causes(result))
    assert result.rounds[0].expected_tags == []


def test_an_unknown_step_round_writes_its_own_status_file_only(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    _clean_round(run, "integration")
    run.write("reviews/integration/round-01-guard.json", "sentinel\n")
    d = run.root / "reviews/integration-wave-23/round-01"
    put(d, "integration-claude.finding-F01.md", finding_text("integration-claude", 1))
    run_main("check", "--write-status", str(run.root / "reviews/integration-wave-23"))
    assert (run.root / "reviews/integration/round-01-guard.json").read_text() == "sentinel\n"
    mine = json.loads((run.root / "reviews/integration-wave-23/round-01-guard.json")
                      .read_text())
    assert mine["step"] == "integration-wave-23" and mine["round"] == 1


@pytest.mark.parametrize("step", ["ci", "telemetry"])
def test_ci_and_telemetry_stay_skipped_silently(tmp_path: Path, step: str) -> None:
    run = new_run(tmp_path)
    _clean_round(run)
    put(run.root / "reviews" / step / "round-01", "task-01.json", "{}\n")
    result = check(run.root)
    assert causes(result) == [] and len(result.rounds) == 1


def test_an_unknown_step_dir_with_single_file_rounds_stays_legacy(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    _clean_round(run)
    run.write("reviews/spec-109/round-01-claude.md", "# review\n")
    result = check(run.root)
    assert one(result, "legacy_layout").level == "info"
    assert "unknown_step_dir" not in causes(result)


# -- §8 a directory named on the command line that is not round-NN -------------------


def _fixture_dir(tmp_path: Path, *rounds: int) -> Path:
    d = tmp_path / "fixture-quality"
    for i, n in enumerate(rounds, start=1):
        put(d, f"{Q}.finding-F{i:02d}.md", finding_text(Q, i, round_no=n))
    return d


def test_a_pseudo_round_takes_its_number_from_its_findings(tmp_path: Path) -> None:
    d = _fixture_dir(tmp_path, 3, 3)
    result = check(d, second_reviewer=False)
    assert [r.ref.round for r in result.rounds] == [3]
    assert causes(result) == []


def test_a_pseudo_round_takes_round_from_the_command_line(tmp_path: Path) -> None:
    d = _fixture_dir(tmp_path, 3)
    result = check(d, round_no=4, second_reviewer=False)
    assert [r.ref.round for r in result.rounds] == [4]
    assert causes(result) == ["round_mismatch"]


def test_findings_disagreeing_on_the_round_are_round_mismatch(tmp_path: Path) -> None:
    d = _fixture_dir(tmp_path, 3, 4, 4)
    m = one(check(d, second_reviewer=False), "round_mismatch")
    assert "R3" in m.message and "R4" in m.message
    assert causes(check(d, round_no=4, second_reviewer=False)) == ["round_mismatch"]


def test_a_pseudo_round_gets_the_matrix_only_with_step(tmp_path: Path) -> None:
    d = _fixture_dir(tmp_path, 3)
    assert causes(check(d, second_reviewer=False)) == []
    got = check(d, step="design", second_reviewer=False)
    assert one(got, "expected_tag_no_output").tag == S


@pytest.mark.parametrize("dirname", ["tmp.Xa81Kq", "round-tmp", "fixtures-05"])
def test_a_pseudo_round_is_never_bad_round_dir_name_and_gets_no_status_file(
        tmp_path: Path, dirname: str) -> None:
    d = tmp_path / dirname
    put(d, f"{Q}.finding-F01.md", finding_text(Q, 1, round_no=5))
    before = listing(tmp_path)
    proc = run_main("check", "--write-status", "--no-second-reviewer", "--format", "json",
                   str(d))
    doc = json.loads(proc.stdout)
    assert "bad_round_dir_name" not in {x["cause"] for x in doc["diagnostics"]}
    assert [r["round"] for r in doc["rounds"]] == [5]
    assert listing(tmp_path) == before


def test_a_finding_file_outside_any_round_is_judged_per_file(tmp_path: Path) -> None:
    f = put(tmp_path / "notes", f"{Q}.finding-F01.md",
            finding_text(Q, 1).replace("severity: high", "severity: urgent"))
    c = put(tmp_path / "notes", f"{S}.clean.md", "---\nreviewer: someone\nfindings: 2\n---\n")
    s = put(tmp_path / "notes", f"{Q}.finding-F01.score.md", sidecar_md(150))
    result = check(f, c, s)
    assert causes(result, f.name) == ["severity_out_of_enum"]
    assert "reviewer_tag_mismatch" in causes(result, c.name)
    assert "clean_nonzero_findings" in causes(result, c.name)
    assert causes(result, s.name) == ["score_out_of_range"]
    proc = run_main("check", str(f))
    assert proc.returncode == 1 and b"severity_out_of_enum" in proc.stdout


# -- §8 split into a directory not named round-NN ------------------------------------

BLOCK = """<<<FINDING-BOUNDARY>>>
---
finding_id: R{r}-F{n:02d}
severity: high
change_type: style
referenced_files: [design.md:L3]
artifact: design
round: {r}
reviewer: quality-codex
---

The summary repeats the goal twice.
"""


def test_split_into_a_mktemp_dir_takes_the_round_from_the_finding_ids(tmp_path: Path) -> None:
    d = tmp_path / "tmp.Q81xkZ"
    d.mkdir()
    stdout = (BLOCK.format(r=3, n=1) + BLOCK.format(r=3, n=2)).encode()
    proc = run_main("split", "-", str(d), "quality-codex", input=stdout)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in d.iterdir()) == ["quality-codex.finding-F01.md",
                                                   "quality-codex.finding-F02.md"]
    assert not list(tmp_path.glob("*guard*"))


def test_split_findings_disagreeing_on_the_round_is_round_mismatch(tmp_path: Path) -> None:
    d = tmp_path / "tmp.Q81xkZ"
    d.mkdir()
    stdout = (BLOCK.format(r=3, n=1) + BLOCK.format(r=4, n=2)).encode()
    proc = run_main("split", "-", str(d), "quality-codex", input=stdout)
    assert proc.returncode == 1 and b"round_mismatch" in proc.stderr
    proc = run_main("split", "--replace", "--round", "3", "-", str(d), "quality-codex",
                   input=BLOCK.format(r=3, n=1).encode())
    assert proc.returncode == 0, proc.stderr


def test_split_no_findings_without_round_writes_the_fan_in_splitters_clean(
        tmp_path: Path) -> None:
    d = tmp_path / "tmp.Q81xkZ"
    d.mkdir()
    proc = run_main("split", "-", str(d), "quality-codex", input=b"NO_FINDINGS")
    assert proc.returncode == 0, proc.stderr
    assert (d / "quality-codex.clean.md").read_text() == \
        "---\nreviewer: quality-codex\nfindings: 0\n---\n"
    e = tmp_path / "tmp.other"
    e.mkdir()
    proc = run_main("split", "--round", "7", "-", str(e), "quality-codex", input=b"NO_FINDINGS\n")
    assert proc.returncode == 0, proc.stderr
    assert "round: 7\n" in (e / "quality-codex.clean.md").read_text()
    assert causes(check(d, second_reviewer=False)) == []


@pytest.mark.parametrize("name, content, cause", [
    (f"{Q}.finding-F1.md", finding_text(Q, 1), "bad_finding_filename"),
    (f"Q{Q}.finding-F01.md", finding_text(Q, 1), "bad_tag_name"),
    ("quality-codex.NO_FINDINGS", "", "clean_noncanonical"),
])
@pytest.mark.parametrize("named", ["file", "directory"])
def test_reviewer_output_with_a_bad_name_outside_a_round_is_never_ignored(
        tmp_path: Path, name: str, content: str, cause: str, named: str) -> None:
    f = put(tmp_path / "fixture", name, content)
    result = check(f if named == "file" else f.parent, second_reviewer=False)
    assert cause in causes(result)
