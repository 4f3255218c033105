"""End-to-end: the installed console script's check command, formats and side effects."""

from __future__ import annotations

import json
import os
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import FIXTURES, Run, run_main, stdout_on_tty

EXAMPLE = "example"


def test_exit_0_on_a_clean_run() -> None:
    proc = run_main("check", "valid", cwd=FIXTURES)
    assert proc.returncode == 0
    assert proc.stdout.decode().strip().endswith("0 errors, 0 warnings")


def test_exit_1_on_a_halt_with_text_lines_and_summary() -> None:
    proc = run_main("check", EXAMPLE, cwd=FIXTURES)
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert any(":4: error change_type_out_of_enum: change_type 'corectness'" in ln for ln in lines)
    assert lines[-1] == "4 rounds, 12 files: 3 errors, 0 warnings"


def test_exit_2_on_a_missing_path_with_one_line() -> None:
    proc = run_main("check", "no/such/dir")
    assert proc.returncode == 2
    assert proc.stderr.decode().strip().splitlines() == [
        "qrspi-guard check: error: path not found: no/such/dir"]


def test_exit_2_on_an_unknown_option() -> None:
    proc = run_main("check", "--no-such-option")
    assert proc.returncode == 2
    assert b"no such option '--no-such-option'" in proc.stderr
    assert b"Traceback" not in proc.stderr


def test_version_and_module_entry_point() -> None:
    import subprocess
    import sys

    proc = run_main("--version")
    assert proc.returncode == 0 and b"qrspi-guard, version" in proc.stdout
    mod = subprocess.run([sys.executable, "-m", "qrspi_guard", "check", "valid"], cwd=FIXTURES,
                         capture_output=True)
    assert mod.returncode == 0


def test_json_format_carries_path_step_round_and_summary() -> None:
    doc = json.loads(run_main("check", "--format", "json", EXAMPLE, cwd=FIXTURES).stdout)
    d = next(x for x in doc["diagnostics"] if x["cause"] == "change_type_out_of_enum")
    assert d["level"] == "error" and d["field"] == "change_type" and d["value"] == "corectness"
    assert d["step"] == "design" and d["round"] == 2 and d["line"] == 4
    assert d["file"] == "quality-claude.finding-F01.md" and d["path"].endswith(d["file"])
    assert doc["summary"] == {"rounds": 4, "files": 12, "errors": 3, "warnings": 0, "infos": 0,
                              "failed": True}
    silent = next(x for x in doc["diagnostics"] if x["cause"] == "expected_tag_no_output")
    assert silent["tag"] == "scope-claude" and "file" not in silent
    assert silent["message"] == "Reviewer scope-claude wrote no per-finding files"


def test_sarif_is_2_1_0_with_one_rule_per_cause() -> None:
    from qrspi_guard.contract.causes import CATALOGUE

    doc = json.loads(run_main("check", "--format", "sarif", EXAMPLE, cwd=FIXTURES).stdout)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rule_ids == list(CATALOGUE)
    assert {r["ruleId"] for r in run["results"]} == {
        "change_type_out_of_enum", "missing_change_type", "expected_tag_no_output"}
    for r in run["results"]:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
        assert r["level"] == "error"


def test_junit_has_a_suite_per_round_and_a_failing_case_for_a_silent_reviewer() -> None:
    proc = run_main("check", "--format", "junit", EXAMPLE, cwd=FIXTURES)
    root = ET.fromstring(proc.stdout)
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert "design/round-02" in suites
    cases = {c.get("name"): c for c in suites["design/round-02"].iter("testcase")}
    assert cases["reviewer scope-claude"].find("failure") is not None
    assert cases["reviewer scope-claude"].find("failure").get("type") == "expected_tag_no_output"
    assert cases["reviewer quality-claude"].find("failure") is None
    assert cases["quality-claude.finding-F01.md"].find("failure") is not None
    ok_cases = list(suites["goals/round-01"].iter("testcase"))
    assert ok_cases and all(c.find("failure") is None for c in ok_cases)


def test_output_file_gets_the_machine_format_while_stdout_stays_text(tmp_path: Path) -> None:
    out = tmp_path / "guard.sarif"
    proc = run_main("check", "--format", "sarif", "--output", str(out), EXAMPLE, cwd=FIXTURES)
    assert proc.returncode == 1
    assert json.loads(out.read_text())["version"] == "2.1.0"
    assert proc.stdout.decode().splitlines()[-1].startswith("4 rounds, 12 files")


def test_text_is_never_coloured_off_a_terminal_or_with_no_color() -> None:
    proc = run_main("check", EXAMPLE, cwd=FIXTURES)
    assert b"\x1b[" not in proc.stdout
    proc = run_main("check", EXAMPLE, cwd=FIXTURES, env={"NO_COLOR": "1"})
    assert b"\x1b[" not in proc.stdout


def test_colour_on_a_terminal_unless_no_color() -> None:
    def on_tty(env: dict[str, str]) -> bytes:
        return stdout_on_tty("check", EXAMPLE, cwd=FIXTURES, env={**os.environ, **env})

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert b"\x1b[31merror" in on_tty({**env})
    assert b"\x1b[" not in on_tty({"NO_COLOR": "1"})


def test_strict_fails_on_warnings_and_quiet_hides_them(run: Run) -> None:
    run.finding("goals", 1, "quality-claude", text=(
        "---\nfinding_id: R1-F01\nseverity: low\nchange_type: style\n"
        "referenced_files: []\nartifact: goals\nround: 1\nreviewer: quality-claude\n---\n\n"
        "Mixed terminators in the goals list.\n\n"))
    run.clean("goals", 1, "scope-claude")
    assert run_main("check", str(run.root)).returncode == 0
    proc = run_main("check", "--strict", str(run.root))
    assert proc.returncode == 1 and b"trailing_newline" in proc.stdout
    quiet = run_main("check", "--quiet", str(run.root))
    assert b"trailing_newline" not in quiet.stdout and quiet.returncode == 0


def test_fix_normalises_trailing_newlines_only(run: Run) -> None:
    p = run.finding("goals", 1, "quality-claude")
    original = p.read_bytes()
    p.write_bytes(original + b"\n\n")
    q = run.clean("goals", 1, "scope-claude")
    q.write_bytes(q.read_bytes().rstrip(b"\n"))
    proc = run_main("check", "--fix", str(run.root))
    assert proc.returncode == 0
    assert p.read_bytes() == original
    assert q.read_bytes().endswith(b"---\n") and not q.read_bytes().endswith(b"\n\n")
    assert b"fixed trailing newline" in proc.stderr
    assert b"trailing_newline" not in proc.stdout


def test_files_given_one_by_one_are_grouped_and_their_round_checked_whole(run: Run) -> None:
    f = run.finding("design", 1, "quality-claude")
    g = run.finding("design", 1, "quality-claude", n=2)
    proc = run_main("check", "--format", "json", str(f), str(g))
    doc = json.loads(proc.stdout)
    assert len(doc["rounds"]) == 1
    # the round is judged whole: scope-claude never wrote
    assert {d["cause"] for d in doc["diagnostics"]} == {"expected_tag_no_output"}


def test_several_paths_at_once(tmp_path: Path) -> None:
    proc = run_main("check", "--format", "json", "valid", EXAMPLE, cwd=FIXTURES)
    doc = json.loads(proc.stdout)
    assert doc["summary"]["rounds"] == 4 + len(json.loads(
        run_main("check", "--format", "json", "valid", cwd=FIXTURES).stdout)["rounds"])


def test_overrides_check_a_bare_round_directory(tmp_path: Path) -> None:
    bare = tmp_path / "design" / "round-01"
    bare.mkdir(parents=True)
    Run(tmp_path).clean("design", 1, "quality-claude")  # writes under reviews/, unused
    (bare / "quality-claude.clean.md").write_text(
        "---\nreviewer: quality-claude\nround: 1\nfindings: 0\n---\n")
    proc = run_main("check", "--format", "json", str(bare))
    assert {d["cause"] for d in json.loads(proc.stdout)["diagnostics"]} == {"config_missing"}
    proc = run_main("check", "--format", "json", "--no-second-reviewer", str(bare))
    causes = [(d["cause"], d.get("tag")) for d in json.loads(proc.stdout)["diagnostics"]]
    assert causes == [("expected_tag_no_output", "scope-claude")]
    proc = run_main("check", "--no-second-reviewer", "--step", "research", str(bare))
    assert proc.returncode == 0


def test_write_status_writes_the_round_status_file_beside_the_round(tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "ex"
    shutil.copytree(FIXTURES / EXAMPLE, work, symlinks=True)
    proc = run_main("check", "--write-status", str(work))
    assert proc.returncode == 1
    design = next(work.rglob("reviews/design"))
    doc = json.loads((design / "round-02-guard.json").read_text())
    assert doc["schema"] == "qrspi-guard/round-status/1"
    assert doc["step"] == "design" and doc["round"] == 2 and doc["status"] == "halt"
    assert doc["expected_tags"] == ["quality-claude", "scope-claude"]
    assert doc["reported_tags"] == ["quality-claude"] and doc["awaiting"] == ["scope-claude"]
    assert {h["cause"] for h in doc["halts"]} == {
        "change_type_out_of_enum", "missing_change_type", "expected_tag_no_output"}
    typo = next(h for h in doc["halts"] if h["cause"] == "change_type_out_of_enum")
    assert typo == {"cause": "change_type_out_of_enum", "level": "error",
                    "file": "quality-claude.finding-F01.md", "line": 4, "field": "change_type",
                    "value": "corectness", "message": typo["message"]}
    assert json.loads((design / "round-01-guard.json").read_text())["status"] == "ok"
    assert not list(design.glob("round-02/*guard*"))  # never inside the round
    assert not list(design.glob(".guard-*"))  # no temp left behind
    # a fix on disk clears the halt on the next run
    f = design / "round-02" / "quality-claude.finding-F01.md"
    f.write_text(f.read_text().replace("corectness", "correctness"))
    run_main("check", "--write-status", str(work))
    doc = json.loads((design / "round-02-guard.json").read_text())
    assert "change_type_out_of_enum" not in {h["cause"] for h in doc["halts"]}


def test_write_status_is_atomic_for_a_concurrent_reader(tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "ex"
    shutil.copytree(FIXTURES / EXAMPLE, work, symlinks=True)
    run_main("check", "--write-status", str(work))
    target = next(work.rglob("round-02-guard.json"))
    bad: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                json.loads(target.read_bytes())
            except ValueError as exc:
                bad.append(str(exc))

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in range(5):
            run_main("check", "--write-status", str(work))
    finally:
        stop.set()
        t.join()
    assert bad == []


def test_without_write_status_check_writes_nothing(tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "ex"
    shutil.copytree(FIXTURES / EXAMPLE, work, symlinks=True)
    before = sorted(str(p) for p in work.rglob("*"))
    run_main("check", str(work))
    assert sorted(str(p) for p in work.rglob("*")) == before


def test_github_format_escapes_injection_and_writes_the_step_summary(run: Run,
                                                                    tmp_path: Path) -> None:
    evil = "x%0A::error::pwned\r\n::warning file=a,line=1::boom,\x1b[31m:"
    run.finding("goals", 1, "quality-claude", change_type=json.dumps(evil))
    for n in range(2, 14):
        run.finding("goals", 1, "quality-claude", n=n, severity="urgent")
    summary = tmp_path / "summary.md"
    proc = run_main("check", "--format", "github", str(run.root),
                   env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1
    out = proc.stdout.decode()
    n_diags = len(json.loads(run_main("check", "--format", "json", str(run.root)).stdout)[
        "diagnostics"])
    commands = [ln for ln in out.split("\n") if ln.startswith("::")]
    # one command per diagnostic plus the cut notice: the finding added no line
    assert len(commands) == n_diags + 1
    assert len(out.split("\n")) == n_diags + 3  # + summary line + final newline
    assert "\r" not in out and "\x1b" not in out
    first = next(c for c in commands if "change_type_out_of_enum" in c)
    assert "%250A" in first  # GitHub's escaping applied to the message
    for c in commands:
        kind, _, rest = c[2:].partition(" ")
        assert kind in ("error", "warning", "notice")
    assert commands[0].startswith("::notice title=qrspi-guard::GitHub shows only 10 "
                                  "annotations of each type per step")
    assert "not shown as annotations: 4 errors, 0 warnings, 0 notices" in commands[0]
    table = summary.read_text()
    assert table.count("| error |") == 14 and "`severity_out_of_enum`" in table
    assert "\x1b" not in table


def test_text_output_escapes_terminal_sequences_from_a_finding(run: Run) -> None:
    run.finding("goals", 1, "quality-claude", change_type='"\\e]0;owned\\a\\e[2J\\nFAKE: line"')
    proc = run_main("check", str(run.root))
    out = proc.stdout
    assert b"\x1b" not in out and b"\x07" not in out
    assert not any(line.startswith(b"FAKE") for line in out.splitlines())


def test_relative_paths_from_inside_the_tree_find_the_run_config(run: Run) -> None:
    run.clean("design", 1, "quality-claude")
    round_dir = run.root / "reviews" / "design" / "round-01"
    for cwd, arg in ((round_dir, "."), (round_dir, ".."), (round_dir.parent, "."),
                     (run.root / "reviews", "."), (run.root / "reviews", "design/round-01")):
        doc = json.loads(run_main("check", "--format", "json", arg, cwd=cwd).stdout)
        assert [(d["cause"], d.get("tag")) for d in doc["diagnostics"]] == [
            ("expected_tag_no_output", "scope-claude")], (cwd, arg)
    proc = run_main("check", "--write-status", ".", cwd=round_dir)
    assert proc.returncode == 1
    assert (round_dir.parent / "round-01-guard.json").exists()


def test_usage_errors_are_one_line_on_stderr() -> None:
    for args, head in ((["check", "--no-such-option"], "qrspi-guard check: error: "),
                       (["check", "--format", "xml"], "qrspi-guard check: error: "),
                       (["nosuch"], "qrspi-guard: error: ")):
        proc = run_main(*args)
        assert proc.returncode == 2
        err = proc.stderr.decode()
        assert err.startswith(head) and err.count("\n") == 1, err


def test_a_mistyped_step_is_exit_2_not_a_silent_pass(run: Run) -> None:
    run.clean("plan", 1, "quality-claude")
    proc = run_main("check", "--step", "plna", str(run.root))
    assert proc.returncode == 2 and b"unknown step 'plna'" in proc.stderr
    assert run_main("check", "--step", "plan", str(run.root)).returncode == 1
    assert run_main("check", "--step", "implement-gate", str(run.root)).returncode == 1


def test_symlinked_round_and_step_directories_are_reported_not_skipped(run: Run,
                                                                        tmp_path: Path) -> None:
    real = Run(tmp_path / "real")
    real.clean("design", 1, "quality-claude")
    (run.root / "reviews" / "design").mkdir(parents=True)
    (run.root / "reviews" / "design" / "round-01").symlink_to(
        real.root / "reviews" / "design" / "round-01")
    (run.root / "reviews" / "goals").symlink_to(real.root / "reviews" / "design")
    run.clean("research", 1, "quality-claude")
    (run.root / "reviews" / "research" / "round-01" / "dirlink").symlink_to(tmp_path)
    doc = json.loads(run_main("check", "--format", "json", str(run.root)).stdout)
    got = sorted((d["cause"], Path(d["path"]).name) for d in doc["diagnostics"])
    assert got == [("symlink_in_round_dir", "dirlink"), ("symlink_in_round_dir", "goals"),
                   ("symlink_in_round_dir", "round-01")]


def test_sarif_uris_are_percent_encoded(run: Run) -> None:
    d = run.round_dir("research", 1)
    (d / "notes a#b?%41.md").write_text("x")
    run.clean("research", 1, "quality-claude")
    doc = json.loads(run_main("check", "--format", "sarif", str(run.root)).stdout)
    (result,) = doc["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.endswith("/notes%20a%23b%3F%2541.md")


def test_a_legacy_file_passed_directly_is_reported_as_legacy(run: Run) -> None:
    legacy = run.write("reviews/design/round-01-claude.md", "old round\n")
    doc = json.loads(run_main("check", "--format", "json", str(legacy)).stdout)
    assert [d["cause"] for d in doc["diagnostics"]] == ["legacy_layout"]
