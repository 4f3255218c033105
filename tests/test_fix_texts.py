"""Fix texts that work when followed: every cause whose fix is an edit to a file has it
applied, as its catalogue text writes it, to a copy of the cause's fixture, and the cause
is gone, with no new one in its place.

Each recipe below takes its literal text from the fix's code spans (``span(i)``, with
the fix's own placeholders such as ``<tag>`` filled in from the fixture): a fix text
that changes what it tells a person to write changes what the test writes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.codespans import spans
from tests.support import FIXTURES, SCRIPT, run_main

INDEX = json.loads((FIXTURES / "causes" / "index.json").read_text())

#: causes whose fix is not an edit to a file, and why
NOT_EDITS = {
    "legacy_layout": "nothing to do: an info about history",
    "unreadable_dir": "a permission to change (chmod), set up by the test that makes it",
    "split_incomplete": "a command to run again (split), tested in test_split_reliability",
    "split_would_mix_attempts": "an option to pass (split --replace), tested in test_split",
}


class Fx:
    """A copy of one cause's fixture and its fix text's code spans."""

    def __init__(self, cause: str, tmp: Path) -> None:
        self.cause = cause
        entry = INDEX[cause]
        self.work = tmp / "fx"
        self.root = self.work / entry["path"]
        shutil.copytree(FIXTURES / entry["path"], self.root, symlinks=True)
        self.args = list(entry["args"])
        self.codes = [text for text, is_code in spans(CATALOGUE[cause].fix) if is_code]

    def span(self, i: int, **fill: str) -> str:
        """The fix's *i*-th code span, its ``<placeholders>`` filled from *fill*."""
        text = self.codes[i]
        for key, value in fill.items():
            text = text.replace(f"<{key}>", value)
        assert "<" not in text or "<0..100>" in text, (self.cause, text)
        return text

    def one(self, pattern: str) -> Path:
        found = sorted(self.root.rglob(pattern))
        assert len(found) == 1, (pattern, found)
        return found[0]

    def causes(self) -> set[str]:
        proc = run_main("check", "--format", "json", *self.args, str(self.root),
                        cwd=self.work)
        assert proc.returncode in (0, 1), proc.stderr
        return {d["cause"] for d in json.loads(proc.stdout)["diagnostics"]}


def set_line(path: Path, key: str, line: str) -> None:
    """The frontmatter line of *key* replaced by *line*."""
    text = path.read_text()
    new, n = re.subn(rf"(?m)^{re.escape(key)}:.*$", line.replace("\\", "\\\\"), text, count=1)
    assert n == 1, (path, key)
    path.write_text(new)


def add_line(path: Path, line: str) -> None:
    """*line* added at the end of the frontmatter (before its closing ``---``)."""
    text = path.read_text()
    head, sep, body = text.partition("\n---\n")
    assert sep, path
    path.write_text(f"{head}\n{line}{sep}{body}")


def remove_line(path: Path, key: str, nth: int = 0) -> None:
    lines = path.read_text().splitlines(keepends=True)
    at = [i for i, ln in enumerate(lines) if ln.startswith(f"{key}:")][nth]
    del lines[at]
    path.write_text("".join(lines))


def frontmatter(*lines: str, fence: str = "---") -> str:
    return "\n".join([fence, *lines, fence]) + "\n"


def _rename_finding(fx: Fx) -> None:  # bad_finding_filename
    bad = fx.one("*.finding-F2.md")
    bad.rename(bad.with_name(fx.span(0, tag="quality-claude", NN="02")))


def _no_frontmatter(fx: Fx) -> None:
    f = fx.one("quality-claude.finding-F01.md")
    prose = f.read_text()
    values = {"finding_id:": "R1-F01", "severity:": "medium", "change_type:": "clarity",
              "referenced_files:": "[goals.md:L12-L18]", "artifact:": "goals",
              "round:": "1", "reviewer:": "quality-claude"}
    fields = [f"{key} {values[key]}" for key in fx.codes[1:8]]
    f.write_text(frontmatter(*fields, fence=fx.span(0)) + "\n" + prose)


def _combined(fx: Fx) -> None:
    first = fx.one("quality-claude.finding-F01.md")
    text = first.read_text()
    cut = text.index("\n---\nfinding_id: R1-F02")
    first.write_text(text[:cut].rstrip("\n") + "\n")
    second = text[cut + 1:]
    first.with_name(fx.span(1, tag="quality-claude")).write_text(second)


def _fnum_mismatch(fx: Fx) -> None:
    for f in sorted(fx.root.rglob("quality-claude.finding-F0*.md")):
        n = f.name.split("-F")[1][:2]
        set_line(f, "finding_id", f"finding_id: R1-F{n}")


def _fnum_gap(fx: Fx) -> None:
    third = fx.one("quality-claude.finding-F03.md")
    name, fid = fx.span(1), fx.span(2)
    third.rename(third.with_name(name))
    set_line(third.with_name(name), "finding_id", fid)


def _marker(fx: Fx) -> None:  # verify_failed, sidecar_missing
    step = fx.one("round-01").parent
    name = fx.span(0).replace("NN", "01")
    (step / name).write_text(frontmatter(fx.span(1, why="the user skipped the verifier"),
                                         fx.span(2, NN="01"),
                                         fx.span(3, who="the user")) + "\n")


def _clean_sentinel(fx: Fx) -> None:  # expected_tag_no_output
    d = fx.one("round-01")
    lines = [fx.span(i, tag="scope-claude", n="1") for i in range(1, 6)]
    (d / fx.span(0, tag="scope-claude")).write_text("\n".join(lines) + "\n")


def _wrong_extension(fx: Fx) -> None:
    bad = fx.one("*.score.yml")
    stem = bad.name[:-len(".score.yml")]
    fields = [fx.span(2), fx.span(3).replace("<0..100>", "82")]
    (bad.parent / fx.span(0, **{"finding stem": stem})).write_text(
        frontmatter(*fields, fence=fx.span(1)))
    bad.unlink()


def _config_missing(fx: Fx) -> None:
    assert fx.span(0) == "reviews/"
    lines = [fx.span(i) for i in (1, 2, 4, 6)]  # the four lines, the first choice of each
    (fx.root / "config.md").write_text("\n".join(lines) + "\n")


def _fan_in_again(fx: Fx) -> None:  # "Re-run `verifier-fan-in.sh <round-dir>`": its drop-in
    round_dir = fx.one("round-01")
    assert fx.span(0, **{"round-dir": str(round_dir)}).startswith("verifier-fan-in.sh ")
    subprocess.run([str(SCRIPT), "fan-in", str(round_dir)], capture_output=True, timeout=60)


def _commit_anchor(fx: Fx) -> None:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/bin:/bin"}
    for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "r"]):
        subprocess.run(cmd, cwd=fx.root, check=True, env=env, capture_output=True)
    step = fx.one("round-01-commit.txt").parent
    subprocess.run(["bash", "-c", fx.span(0).replace("NN", "01")], cwd=step, check=True,
                   env=env)


def _verified_totals(fx: Fx) -> None:
    proc = run_main("check", "--format", "json", str(fx.root), cwd=fx.work)
    message = next(d["message"] for d in json.loads(proc.stdout)["diagnostics"]
                   if d["cause"] == "verified_totals_mismatch")
    verified = fx.one(fx.span(0).replace("NN", "01"))
    for key, recount in re.findall(r"(\w+) says \S+, recount (\d+)", message):
        set_line(verified, key, f"{key}: {recount}")


def _file(pattern: str, do: Callable[[Path, Fx], None]) -> Callable[[Fx], None]:
    return lambda fx: do(fx.one(pattern), fx)


F01 = "quality-claude.finding-F01.md"

RECIPES: dict[str, Callable[[Fx], None]] = {
    "bad_round_dir_name": _file("round-1", lambda p, fx: p.rename(
        p.with_name(fx.span(0).replace("NN", "01")))),
    "bad_tag_name": _file("quality_claude.finding-F01.md", lambda p, fx: (
        set_line(p, "reviewer", fx.span(2)), p.rename(p.with_name(fx.span(1))))),
    "bad_finding_filename": _rename_finding,
    "unknown_file_in_round_dir": _file("review-notes.md", lambda p, fx: p.rename(
        fx.root / p.name)),
    "symlink_in_round_dir": _file(F01, lambda p, fx: (
        p.unlink(), p.write_bytes((fx.root / "elsewhere.md").read_bytes()))),
    "file_too_large": _file(F01, lambda p, fx: p.write_text(
        p.read_text().split("\n\n")[0] + "\n\n" + p.read_text().split("\n\n")[1] + "\n")),
    "not_utf8": _file(F01, lambda p, fx: p.write_text(p.read_bytes().decode("cp1252"))),
    "unreadable_file": _file(F01, lambda p, fx: shutil.rmtree(p)),
    "utf8_bom": _file(F01, lambda p, fx: p.write_bytes(p.read_bytes()[3:])),
    "crlf_line_endings": _file(F01, lambda p, fx: p.write_bytes(
        p.read_bytes().replace(b"\r\n", b"\n"))),
    "no_frontmatter": _no_frontmatter,
    "malformed_yaml": _file(F01, lambda p, fx: set_line(
        p, "referenced_files", "referenced_files: " + fx.span(1).replace(
            "a", "goals.md:L12-L18").replace("b", "goals.md:L30"))),
    "duplicate_key": _file(F01, lambda p, fx: remove_line(p, "severity", 1)),
    "missing_finding_id": _file(F01, lambda p, fx: add_line(
        p, fx.span(0, round="1", NN="01"))),
    "finding_id_malformed": _file(F01, lambda p, fx: set_line(
        p, "finding_id", "finding_id: " + fx.span(0, round="1", NN="01"))),
    "missing_severity": _file(F01, lambda p, fx: add_line(p, fx.span(0))),
    "severity_out_of_enum": _file(F01, lambda p, fx: set_line(
        p, "severity", "severity: " + fx.span(0))),
    "missing_change_type": _file(F01, lambda p, fx: add_line(p, fx.span(0) + " clarity")),
    "change_type_out_of_enum": _file(F01, lambda p, fx: set_line(
        p, "change_type", "change_type: " + fx.span(2))),
    "missing_referenced_files": _file(F01, lambda p, fx: add_line(p, fx.span(1))),
    "referenced_files_not_list": _file(F01, lambda p, fx: set_line(
        p, "referenced_files", fx.span(0))),
    "missing_artifact": _file(F01, lambda p, fx: add_line(p, fx.span(0, step="goals"))),
    "missing_round": _file(F01, lambda p, fx: add_line(p, fx.span(0, n="1"))),
    "round_not_integer": _file(F01, lambda p, fx: set_line(
        p, "round", fx.span(0).replace("3", "1"))),
    "missing_reviewer": _file(F01, lambda p, fx: add_line(p, fx.span(0, tag="quality-claude"))),
    "missing_message": _file(F01, lambda p, fx: p.write_text(
        p.read_text().rstrip("\n") + "\n\nThe goal names no number; state the target.\n")),
    "combined_findings": _combined,
    "reviewer_tag_mismatch": _file(F01, lambda p, fx: set_line(
        p, "reviewer", fx.span(0) + " quality-claude")),
    "round_mismatch": _file(F01, lambda p, fx: set_line(
        p, "finding_id", fx.span(1, n="1").replace("...", "F01"))),
    "duplicate_finding_id": _file("quality-claude.finding-F02.md", lambda p, fx: set_line(
        p, "finding_id", fx.span(0, n="1", NN="02"))),
    "trailing_newline": _file(F01, lambda p, fx: p.write_text(p.read_text().rstrip("\n")
                                                              + "\n")),
    "fnum_mismatch": _fnum_mismatch,
    "fnum_gap": _fnum_gap,
    "artifact_step_mismatch": _file(F01, lambda p, fx: set_line(
        p, "artifact", fx.span(0) + " " + fx.span(1).replace("NN", "01"))),
    "unknown_frontmatter_key": _file(F01, lambda p, fx: remove_line(p, "confidence")),
    "referenced_files_malformed": _file(F01, lambda p, fx: set_line(
        p, "referenced_files", f"referenced_files: [{fx.span(0)}]")),
    "clean_noncanonical": _file("quality-claude.clean.md", lambda p, fx: p.write_text(
        frontmatter(*(fx.span(i, tag="quality-claude", n="1") for i in range(3))))),
    "clean_nonzero_findings": _file("quality-claude.clean.md", lambda p, fx: set_line(
        p, "findings", fx.span(0))),
    "clean_has_body": _file("scope-claude.clean.md", lambda p, fx: p.write_text(
        p.read_text().split("\n---\n")[0] + "\n---\n")),
    "clean_and_findings_coexist": _file("quality-claude.clean.md", lambda p, fx: p.unlink()),
    "sidecar_malformed": _file("*.score.yml", lambda p, fx: set_line(
        p, "score", fx.span(0).replace("<0..100>", "91"))),
    "score_out_of_range": _file("*.score.yml", lambda p, fx: set_line(p, "score", "score: 100")),
    "verify_failed": _marker,
    "orphan_sidecar": _file("*F02.score.yml", lambda p, fx: p.unlink()),
    "expected_tag_no_output": _clean_sentinel,
    "unrouted_tag": _file("quality-codex.clean.md", lambda p, fx: p.unlink()),
    "sidecar_missing": _marker,
    "verified_totals_mismatch": _verified_totals,
    "escalation_required": _file(F01, lambda p, fx: set_line(p, "change_type", fx.span(0))),
    "config_missing": _config_missing,
    "config_field_missing": _file("config.md", lambda p, fx: add_line(
        p, fx.span(0).replace("true", fx.span(1)))),
    "config_field_invalid": _file("config.md", lambda p, fx: set_line(
        p, "second_reviewer", "second_reviewer: " + fx.span(1))),
    "config_key_conflict": _file("config.md", lambda p, fx: (  # one reviewer of each kind
        remove_line(p, "codex_reviews"), set_line(p, fx.span(0), fx.span(1)))),
    "config_legacy_key": _file("config.md", lambda p, fx: p.write_text(
        p.read_text().replace("codex_reviews:", fx.span(0) + ":"))),
    "config_field_defaulted": _file("config.md", lambda p, fx: add_line(p, fx.span(0))),
    "config_key_outside_frontmatter": _file("config.md", lambda p, fx: remove_line(
        p, "pipeline")),
    "config_inline_comment": _file("config.md", lambda p, fx: p.write_text(
        p.read_text().replace("second_reviewer: false  # quick\n",
                              "# quick\nsecond_reviewer: false\n"))),
    "step_not_on_route": _file("config.md", lambda p, fx: set_line(
        p, fx.span(0), "route: [goals, research, design, plan]")),
    "sidecar_wrong_extension": _wrong_extension,
    "fanin_audit_malformed": _fan_in_again,
    "fanin_audit_mismatch": _fan_in_again,
    "kept_findings_mismatch": _fan_in_again,
    "commit_anchor_malformed": _commit_anchor,
    "scope_set_malformed": _file("round-01-scope-set.txt", lambda p, fx: p.write_text(
        "".join(ln.strip() + "\n" for ln in p.read_text().splitlines()))),
    "verifier_marker_invalid": _file("round-01-verifier-disabled.md", lambda p, fx: p.write_text(
        frontmatter("reason: the user skipped the verifier", fx.span(1, NN="01"),
                    "created_by: the user"))),
    "vf_sentinel_invalid": _file("visual-fidelity-claude.skipped.md", lambda p, fx: set_line(
        p, "skip_reason", fx.span(0) + " visual_fidelity_required_false")),
    "dispatch_manifest_malformed": _file(".dispatch-manifest.json", lambda p, fx: p.unlink()),
    "unknown_step_dir": _file("integration-wave-23", lambda p, fx: p.rename(
        p.with_name(fx.span(0)))),
}


def test_every_cause_either_has_its_fix_applied_here_or_says_why_not() -> None:
    assert set(RECIPES) | set(NOT_EDITS) == set(CATALOGUE)
    assert not set(RECIPES) & set(NOT_EDITS)


@pytest.mark.parametrize("cause", sorted(RECIPES))
def test_following_the_fix_as_written_removes_the_cause_and_adds_none(
        cause: str, tmp_path: Path) -> None:
    fx = Fx(cause, tmp_path)
    before = fx.causes()
    assert cause in before
    RECIPES[cause](fx)
    after = fx.causes()
    assert cause not in after, CATALOGUE[cause].fix
    assert after <= before, (CATALOGUE[cause].fix, sorted(after - before))


# -- fixes render as code, never as Markdown source ---------------------------------------

FENCED = [c for c in CATALOGUE.values() if "`" in c.fix]


def test_the_html_report_shows_every_fix_with_code_elements_not_backticks() -> None:
    html = run_main("report", "-o", "-", "example", "example-fanin", cwd=FIXTURES).stdout
    text = html.decode()
    fixes = re.findall(r"<td>(Write it as the round.*?|Re-dispatch the reviewer.*?)</td>", text)
    assert fixes and all("`" not in f and "<code>" in f for f in fixes), fixes
    assert "<code>&lt;tag&gt;.clean.md</code>" in text  # escaped inside the element
    section_fixes = re.findall(r'<span class="muted">Fix: (.*?)</span>', text)
    assert section_fixes and all("`" not in f for f in section_fixes)


@pytest.mark.parametrize("args", [["explain", c.name] for c in FENCED] + [["explain", "--list"]],
                         ids=lambda a: " ".join(a))
def test_explain_prints_code_spans_as_quoted_code(args: list[str]) -> None:
    out = run_main(*args).stdout.decode()
    assert "`" not in out
    if args[1] != "--list":
        assert "Fix: " in out and "'" in out


def test_status_text_quotes_the_code_in_each_fix() -> None:
    out = run_main("status", "--ascii", "example", "example-fanin", cwd=FIXTURES).stdout.decode()
    fixes = [ln for ln in out.splitlines() if ln.strip().startswith("fix: ")]
    assert fixes and not any("`" in ln for ln in fixes)
    assert any("'<tag>.clean.md'" in ln for ln in fixes)


def test_sarif_help_text_is_plain_and_its_markdown_keeps_the_code_spans() -> None:
    doc = json.loads(run_main("check", "--format", "sarif", "example", cwd=FIXTURES).stdout)
    for rule in doc["runs"][0]["tool"]["driver"]["rules"]:
        for text in (rule["help"]["text"], rule["fullDescription"]["text"],
                     rule["shortDescription"]["text"]):
            assert "`" not in text, (rule["id"], text)
        if "`" in CATALOGUE[rule["id"]].fix:
            assert "`" in rule["help"]["markdown"]


def test_the_hook_message_quotes_the_code_in_its_fix(tmp_path: Path) -> None:
    from qrspi_guard.hook import decide

    (tmp_path / "config.md").write_text("---\nsecond_reviewer: false\n---\n")
    target = tmp_path / "reviews" / "design" / "round-03" / "quality-claude.finding-F01.md"
    target.parent.mkdir(parents=True)
    content = ("---\nfinding_id: R3-F01\nseverity: urgent\nchange_type: correctness\n"
               "referenced_files: []\nartifact: design\nround: 3\nreviewer: quality-claude\n"
               "---\n\nThe retry path is gone.\n")
    decision = decide({"hook_event_name": "PreToolUse", "tool_name": "Write",
                       "tool_input": {"file_path": str(target), "content": content}})
    fix = next(ln for ln in decision.message.splitlines() if ln.strip().startswith("fix:"))
    assert fix.strip() == "fix:     Use exactly one of 'low', 'medium', 'high' (lower case)."
