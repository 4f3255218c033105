"""CI output a pull request can show (issue 23): round-level annotations on a file of
the round, config_missing never at a config.md that does not exist, the cut per level
said, and no placeholder URL anywhere."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from tests.support import FIXTURES, REPO, run_main

EXAMPLE = FIXTURES / "example"
ROUND = "example/docs/qrspi/2026-05-17-auth-rework/reviews/design/round-02"


def _files(output: str) -> list[str]:
    return re.findall(r"^::(?:error|warning|notice) file=([^,:]+)", output, re.M)


def test_round_level_annotations_are_placed_on_a_file_of_the_round(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    out = run_main("check", "example", "--format", "github", cwd=tmp_path).stdout.decode()
    line = next(ln for ln in out.splitlines() if "expected_tag_no_output" in ln)
    assert line.startswith(f"::error file={ROUND}/quality-claude.finding-F01.md,line=1,")
    assert line.endswith(f"(at {ROUND})")
    for f in _files(out):
        assert (tmp_path / f).is_file(), f


def test_config_missing_points_at_a_file_that_exists_in_sarif_and_github(
        tmp_path: Path) -> None:
    run = tmp_path / "run"
    src = EXAMPLE / "docs/qrspi/2026-05-17-auth-rework/reviews/goals/round-01"
    shutil.copytree(src, run / "reviews/goals/round-01")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sarif = json.loads(run_main("check", ".", "--format", "sarif", cwd=tmp_path).stdout)
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "config_missing"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert (tmp_path / uri).is_file(), uri
    assert result["message"]["text"].endswith("(at run/config.md)")
    out = run_main("check", ".", "--format", "github", cwd=tmp_path).stdout.decode()
    (f,) = _files(out)
    assert (tmp_path / f).is_file() and "(at run/config.md)" in out


def test_more_than_ten_of_a_level_says_how_many_were_cut_per_level(tmp_path: Path) -> None:
    for i in range(4):
        shutil.copytree(EXAMPLE, tmp_path / f"e{i}")
    out = run_main("check", ".", "--format", "github", cwd=tmp_path).stdout.decode()
    first = out.splitlines()[0]
    assert first.startswith("::notice title=qrspi-guard::")
    assert "not shown as annotations: 2 errors, 0 warnings, 0 notices" in first


def test_no_placeholder_url_anywhere() -> None:
    placeholder = "github.com/" + "OWNER"  # spelt in two, so this file does not hold it
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    assert "README.md" in tracked
    for name in tracked:
        path = REPO / name
        if not path.is_file() or path.suffix in (".png", ".gz"):
            continue
        text = path.read_text(errors="replace")
        assert placeholder not in text, name
    sarif = json.loads(run_main("check", str(EXAMPLE), "--format", "sarif").stdout)
    driver = sarif["runs"][0]["tool"]["driver"]
    assert "OWNER" not in json.dumps(driver)
