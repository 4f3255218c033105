"""JUnit XML that any consumer reads: the Jenkins xunit schema, junit2html, XML itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.engine import CheckResult
from qrspi_guard.output import ReportOptions
from qrspi_guard.output.junit import render
from tests.support import FIXTURES, REPO, Run, run_main

XSD = REPO / "tests" / "schemas" / "junit-10.xsd"
COUNTS = ("tests", "failures", "errors", "skipped", "time")


def schema():  # type: ignore[no-untyped-def]
    xmlschema = pytest.importorskip("xmlschema")
    return xmlschema.XMLSchema(str(XSD))


def validate_junit_10(xml_text: str) -> None:
    """Validate against junit-10.xsd, which has no `skipped` on `<testsuites>`: that one
    attribute is removed for the validation (the guard keeps it for other readers)."""
    root = ET.fromstring(xml_text)
    del root.attrib["skipped"]
    schema().validate(ET.tostring(root, encoding="unicode"))


def junit_of(*args: str, cwd: Path | str = FIXTURES) -> str:
    proc = run_main("check", "--format", "junit", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.decode()


def test_the_example_run_validates_against_the_jenkins_xunit_junit_10_schema() -> None:
    validate_junit_10(junit_of("example"))
    validate_junit_10(junit_of("valid"))


def test_every_suite_and_the_root_carry_tests_failures_errors_skipped_and_time() -> None:
    root = ET.fromstring(junit_of("example"))
    suites = list(root.iter("testsuite"))
    assert suites
    for element in [root, *suites]:
        for attr in COUNTS:
            assert element.get(attr) is not None, (element.tag, element.get("name"), attr)
    for suite in suites:
        cases = list(suite.iter("testcase"))
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(suite.get("errors")) == sum(c.find("error") is not None for c in cases)
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites) == 3


def test_a_file_the_guard_cannot_read_is_a_junit_error_not_a_failure() -> None:
    xml_text = junit_of("causes/unreadable_file")
    validate_junit_10(xml_text)
    root = ET.fromstring(xml_text)
    assert root.get("errors") == "1"
    (error,) = list(root.iter("error"))
    assert error.get("type") == "unreadable_file"


ILLEGAL = "a\x00b\x01\x08\x0b\x0c\x1b\x7f\ufffe\uffff\ud800\x85\u2028end"


def test_xml_illegal_characters_are_escaped_in_every_attribute_and_text_node() -> None:
    from qrspi_guard.contract.layout import RoundRef
    from qrspi_guard.contract.runconfig import RunConfig
    from qrspi_guard.engine.results import RoundResult

    d = Diagnostic(cause="change_type_out_of_enum", level="error", message=ILLEGAL,
                   path=f"r/{ILLEGAL}.md", file=f"{ILLEGAL}.md", tag=None, step="goals",
                   round=1)
    w = Diagnostic(cause="utf8_bom", level="warning", message=ILLEGAL, path=f"r/{ILLEGAL}",
                   file=f"{ILLEGAL}.md", step="goals", round=1)
    t = Diagnostic(cause="expected_tag_no_output", level="error", message=ILLEGAL,
                   path=ILLEGAL, tag=ILLEGAL, step="goals", round=1)
    ref = RoundRef(ILLEGAL, ".", ILLEGAL, 1, False, None)
    rr = RoundResult(ref, "halt", [d, w, t], RunConfig(path=None), expected_tags=[ILLEGAL],
                     file_names=[f"{ILLEGAL}.md"])
    run_level = Diagnostic(cause="config_missing", level="error", message=ILLEGAL, path=ILLEGAL)
    result = CheckResult(rounds=[rr], outside={0: [run_level]}, files=1)
    text = render(result, ReportOptions())
    root = ET.fromstring(text)  # well-formed XML
    validate_junit_10(text)
    for element in root.iter():
        for value in [*element.attrib.values(), element.text or ""]:
            assert not any(ch in value for ch in "\x00\x01\x08\x0b\x0c\x1b\x7f\ufffe\uffff"
                           "\ud800\x85\u2028"), (element.tag, value)
    assert "a\\x00b\\x01" in text


def test_a_file_name_that_is_not_utf8_gives_valid_junit(run: Run) -> None:
    d = run.round_dir("research", 1)
    with open(bytes(d) + b"/quality-claude.finding-F\xff1.md", "wb") as fh:
        fh.write(b"x")
    run.clean("research", 1, "quality-claude")
    proc = run_main("check", "--format", "junit", str(run.root))
    validate_junit_10(proc.stdout.decode())
    assert b"F\\xff1.md" in proc.stdout


JUNIT2HTML = Path(sys.executable).parent / "junit2html"


@pytest.mark.skipif(not JUNIT2HTML.exists(), reason="junit2html not installed")
def test_junit2html_renders_a_report_and_a_report_matrix(tmp_path: Path) -> None:
    out = tmp_path / "guard.xml"
    out.write_text(junit_of("example"))
    (tmp_path / "valid.xml").write_text(junit_of("valid"))
    html = tmp_path / "report.html"
    proc = subprocess.run([str(JUNIT2HTML), str(out), str(html)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "expected_tag_no_output" in html.read_text()
    matrix = tmp_path / "matrix.html"
    proc = subprocess.run([str(JUNIT2HTML), "--report-matrix", str(matrix), str(out),
                           str(tmp_path / "valid.xml")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = matrix.read_text()
    assert "design/round-02" in page and "reviewer scope-claude" in page
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_times_are_the_checks_wall_time_shared_out_and_never_all_zero() -> None:
    root = ET.fromstring(junit_of("example"))
    suites = list(root.iter("testsuite"))
    assert float(root.get("time")) > 0
    assert all(float(s.get("time")) > 0 for s in suites)
    assert all(float(c.get("time")) > 0 for c in root.iter("testcase"))
