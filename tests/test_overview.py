"""`qrspi-guard status` and the step summary's overview (report.md): drawn from the one
judge's rounds, so they agree with `check` round by round; untrusted text inert in every
format."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support import FIXTURES, SCRIPT, Run, run_cli, run_main, stdout_on_tty

EXAMPLES = [FIXTURES / "example", FIXTURES / "example-fanin"]
EVERY_FIXTURE = sorted([FIXTURES / "valid", *EXAMPLES,
                        *(p for p in (FIXTURES / "causes").iterdir() if p.is_dir())])


def status_json(*args: str) -> dict:
    proc = run_main("status", "--format", "json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def status_rounds(doc: dict) -> dict[str, dict]:
    return {r["path"]: r for run in doc["runs"] for s in run["steps"] for r in s["rounds"]}


@pytest.mark.parametrize("fixture", EVERY_FIXTURE, ids=lambda p: p.name)
def test_status_json_agrees_with_check_json_round_by_round(fixture: Path) -> None:
    path = os.path.relpath(fixture)
    check = json.loads(run_main("check", "--format", "json", path).stdout)
    status = status_rounds(status_json(path))
    assert sorted(status) == sorted(r["path"] for r in check["rounds"])
    for r in check["rounds"]:
        got = status[r["path"]]
        assert (got["status"], got["errors"], got["warnings"], got["awaiting"],
                got["expected_tags"], got["protocol"]) == (
            r["status"], r["errors"], r["warnings"], r["awaiting"], r["expected_tags"],
            r["protocol"]), r["path"]
    halted = {h["cause"] for r in status.values() for h in r["halts"]} | {
        h["cause"] for h in status_json(path)["other_halts"]}
    assert halted == {d["cause"] for d in check["diagnostics"] if d["level"] == "error"}


def test_status_of_both_example_runs_at_once_names_every_halt_with_its_fix() -> None:
    doc = status_json(*(os.path.relpath(p) for p in EXAMPLES))
    halts = [h for r in status_rounds(doc).values() for h in r["halts"]]
    from qrspi_guard.contract.causes import cause

    assert len(halts) == 5 == doc["summary"]["errors"]  # one per defect
    assert all(h["fix"] == cause(h["cause"]).fix for h in halts)
    design = next(s for run in doc["runs"] for s in run["steps"]
                  if s["step"] == "design" and "fanin" in run["path"])
    assert design["series"] == [4, 2] and design["current"] == 2
    current = design["rounds"][-1]
    assert {v["tag"]: v["state"] for v in current["reviewers"]} == {
        "quality-claude": "findings", "scope-claude": "clean", "quality-codex": "error",
        "scope-codex": "clean"}
    assert current["verifier"] == {"kept": 1, "dropped": 0}


def test_status_exits_0_on_halts_and_2_on_a_missing_path_or_a_bad_option() -> None:
    assert run_main("status", str(FIXTURES / "example")).returncode == 0
    missing = run_main("status", "no/such/path")
    assert missing.returncode == 2 and b"no/such/path" in missing.stderr
    assert run_main("status", "--format", "yaml").returncode == 2
    assert run_main("status", "--select", "no_such_cause", str(FIXTURES)).returncode == 2


def test_status_applies_the_rule_selection_as_check_does() -> None:
    path = str(FIXTURES / "example-fanin")
    doc = status_json("--ignore", "expected_tag_no_output", path)
    assert "expected_tag_no_output" not in json.dumps(doc)
    task = next(r for r in status_rounds(doc).values() if "task-01/round-02" in r["path"])
    assert task["status"] == "ok"


def test_status_off_a_terminal_is_ascii_and_draws_grid_halts_fixes_and_series() -> None:
    proc = run_main("status", str(FIXTURES / "example-fanin"))
    out = proc.stdout.decode()
    assert out.isascii() and "\x1b" not in out
    assert "| tasks/task-01 | + ok     | X halt 1 |" in out
    assert "spec-gpt55           error: expected_tag_no_output" in out
    assert "fix: Re-dispatch the reviewer" in out
    assert re.search(r"^  design +round +01 02$", out, re.M)
    assert re.search(r"^ +findings +4  2$", out, re.M)


def test_status_names_the_rounds_above_each_convergence_series_and_aligns_every_number(
        ) -> None:
    out = run_main("status", "--ascii", str(FIXTURES / "example-fanin")).stdout.decode()
    block = out.split("convergence (per step, each series by round):\n")[1].split("\n\n")[0]
    lines = block.splitlines()
    heads = [i for i, ln in enumerate(lines) if re.match(r"^  \S", ln)]
    assert [lines[i].split()[0] for i in heads] == ["goals", "design", "tasks/task-01"]
    design = lines[heads[1]:heads[2]]
    assert design[0].split()[1:] == ["round", "01", "02"]
    columns = [m.end() for m in re.finditer(r"\d+", design[0])]
    named = {}
    for ln in design[1:]:
        assert [m.end() for m in re.finditer(r"\d+", ln)] == columns, ln  # under its round
        named[ln.split()[0]] = [int(n) for n in ln.split()[1:]]
    assert named == {"findings": [4, 2], "kept": [2, 1], "dropped": [2, 0], "clarity": [0, 1],
                     "correctness": [2, 1], "scope": [1, 0], "style": [1, 0]}


def test_the_report_chart_names_its_rounds_axes_and_bars() -> None:
    html = run_main("report", "-o", "-", str(FIXTURES / "example-fanin")).stdout.decode()
    assert "findings per round: round 01: 4, round 02: 2" in html  # the design caption
    assert 'class="axis">round</text>' in html  # the x axis is named
    assert "<title>round 02: 2 finding(s), kept 1, dropped 0</title>" in html
    assert "a bar of its findings, stacked by <code>change_type</code>" in html  # legend


def test_the_markdown_overview_names_each_step_s_rounds_beside_its_series() -> None:
    md = run_main("status", "--format", "markdown", str(FIXTURES / "example-fanin")).stdout
    rows = [ln for ln in md.decode().splitlines() if ln.startswith("| `design` | 01 02 |")]
    assert rows and rows[0].startswith("| `design` | 01 02 | 4 2 | 2 1 | 2 0 |")


def test_steps_come_in_protocol_order_and_unknown_steps_after_by_name(run: Run) -> None:
    run.config()
    for step in ("test", "zeta-extra", "plan", "goals", "alpha-extra", "design"):
        run.clean(step, 1, "quality-claude")
    run.clean("tasks/task-10", 1, "spec-claude")
    run.clean("tasks/task-02", 1, "spec-claude")
    doc = status_json(str(run.root))
    assert [s["step"] for s in doc["runs"][0]["steps"]] == [
        "goals", "design", "plan", "tasks/task-02", "tasks/task-10", "test",
        "alpha-extra", "zeta-extra"]


def test_status_on_a_terminal_uses_box_drawing_and_colour_unless_no_color() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    tty = stdout_on_tty("status", str(FIXTURES / "example-fanin"), env=env).decode()
    assert "│ tasks/task-01 │" in tty and "✗" in tty and "\x1b[" in tty
    plain = stdout_on_tty("status", str(FIXTURES / "example-fanin"),
                          env={**env, "NO_COLOR": "1"}).decode()
    assert "\x1b[" not in plain and "│" in plain
    ascii_ = stdout_on_tty("status", "--ascii", str(FIXTURES / "example-fanin"),
                           env={**env, "NO_COLOR": "1"}).decode()
    assert ascii_.isascii()


# -- untrusted text in Markdown ----------------------------------------------------------

HOSTILE = ("[passed](https://evil.example/phish) ![badge](https://evil.example/ok.svg) "
           "<img src=x onerror=alert(1)> https://evil.example www.evil.example "
           "a@evil.example ``` | cell | **bold** <!-- x")


def hostile_run(run: Run) -> None:
    run.config()
    run.finding("goals", 1, "quality-claude", change_type=json.dumps(HOSTILE))
    run.write("reviews/goals/round-01/[x](https:evil.example)|<b>.md", "x\n")


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.code_depth = 0
        self.outside: list[str] = []
        self.rows: list[int] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        if tag == "code":
            self.code_depth += 1
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th"):
            self.rows[-1] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "code":
            self.code_depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.code_depth:
            self.outside.append(data)


def rendered(markdown: str) -> _Html:
    from markdown_it import MarkdownIt

    html = MarkdownIt("gfm-like", {"linkify": False, "html": True}).render(markdown)
    parser = _Html()
    parser.feed(html)
    return parser


def assert_inert(markdown: str) -> None:
    page = rendered(markdown)
    assert not {"a", "img", "b", "strong", "script"} & set(page.tags), page.tags
    assert "evil.example" not in "".join(page.outside)  # only ever inside code spans
    table_widths = [n for n in page.rows]
    assert table_widths  # there are tables, and within each the rows agree
    for line in markdown.splitlines():
        if line.startswith("| ") and "evil" in line:
            head = markdown[:markdown.index(line)].rstrip("\n").rsplit("\n\n", 1)[-1]
            cols = head.splitlines()[0].count(" | ") + 1
            assert len(re.split(r"(?<!\\)\|", line)) - 2 == cols, line


def test_status_markdown_never_renders_finding_text_as_a_link_image_or_html(run: Run) -> None:
    hostile_run(run)
    proc = run_main("status", "--format", "markdown", str(run.root))
    assert proc.returncode == 0
    assert_inert(proc.stdout.decode())


def test_the_step_summary_holds_the_overview_then_every_diagnostic_all_inert(
        run: Run, tmp_path: Path) -> None:
    hostile_run(run)
    summary = tmp_path / "summary.md"
    proc = run_main("check", "--format", "github", str(run.root),
                    env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1
    text = summary.read_text()
    order = [text.index(s) for s in ("## qrspi-guard", "| step | round 01 |",
                                     "### Halts", "### Convergence", "### Every diagnostic")]
    assert order == sorted(order)
    assert "Write `<tag>.clean.md`" in text or "fix" in text
    assert_inert(text)


def test_a_step_summary_fifo_with_no_reader_is_warned_about_not_waited_for(
        run: Run, tmp_path: Path) -> None:
    run.config()
    run.finding("goals", 1, "quality-claude", severity="urgent")
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    proc = run_cli("check", "--format", "github", str(run.root),
                   env={"GITHUB_STEP_SUMMARY": str(fifo)}, timeout=60)
    assert proc.returncode == 1  # the gate's verdict
    assert b"warning: step summary: cannot append to" in proc.stderr


def test_the_overview_stays_within_its_limit_and_says_what_it_left_out() -> None:
    from qrspi_guard.overview.build import judged
    from qrspi_guard.overview.markdown import render

    ov = judged([str(FIXTURES / "example"), str(FIXTURES / "example-fanin")])
    whole = render(ov)
    cut = render(ov, limit=len(whole.encode()) // 2)
    assert len(cut.encode()) <= len(whole.encode()) // 2
    assert "Left out to stay under GitHub's 1 MiB step summary limit:" in cut


# -- what is imported ---------------------------------------------------------------------

def imported(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    full = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    full.update(env or {}, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.run([str(SCRIPT), *args], capture_output=True, env=full, timeout=60)
    return set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", proc.stderr.decode(),
                          re.M))


@pytest.mark.parametrize("args", [["check", str(FIXTURES / "example")],
                                  ["check", "--format", "github", str(FIXTURES / "example")]])
def test_check_without_a_step_summary_imports_no_overview_jinja2_or_rich(args: list[str]) -> None:
    names = imported(args)
    assert "qrspi_guard.engine" in names
    assert not {"jinja2", "rich", "qrspi_guard.overview", "markupsafe"} & names


def test_the_report_imports_jinja2_and_status_does_not(tmp_path: Path) -> None:
    assert "jinja2" in imported(["report", str(FIXTURES / "example"), "-o",
                                 str(tmp_path / "r.html")])
    names = imported(["status", str(FIXTURES / "example")])
    assert "qrspi_guard.overview" in names and "jinja2" not in names


def test_status_is_in_the_command_table_with_an_example_in_its_help() -> None:
    for command in ("status", "report"):
        proc = run_main(command, "--help")
        assert proc.returncode == 0 and b"Examples:" in proc.stdout
    assert sys.modules  # the help did not need a tree


def test_hostile_file_and_step_names_are_escaped_in_every_view(run: Run, tmp_path: Path) -> None:
    run.config()
    run.clean("goals", 1, "quality-claude")
    evil = "\x1b[31mred\x1b]0;title\x07"
    step = run.root / "reviews" / f"step{evil}" / "round-01"
    step.mkdir(parents=True)
    (step / "quality-claude.clean.md").write_text(
        "---\nreviewer: quality-claude\nround: 1\nfindings: 0\n---\n")
    (run.root / "reviews/goals/round-01" / f"quality-claude.finding-F01{evil}.md").write_text(
        "x\n")
    (run.root / "reviews/goals/round-01").joinpath(os.fsdecode(b"bad\xff.md")).write_text("x\n")
    for fmt in ("text", "markdown"):
        proc = run_main("status", "--format", fmt, str(run.root), env={"NO_COLOR": "1"})
        assert proc.returncode == 0
        assert b"\x1b" not in proc.stdout and b"\x07" not in proc.stdout, fmt
        assert b"\\x1b[31mred" in proc.stdout
    out = tmp_path / "r.html"
    assert run_main("report", str(run.root), "-o", str(out)).returncode == 0
    html = out.read_bytes()
    assert b"\x1b" not in html and b"\x07" not in html
    html.decode("utf-8")  # valid UTF-8: an undecodable name is shown escaped
    assert "%FF.md" in html.decode() or "bad\\xff.md" in html.decode()
