"""JUnit XML: a test suite per round, a test case per expected tag and per file.

A silent reviewer is a failing test case named for its tag.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import TYPE_CHECKING

from qrspi_guard.diagnostics import Diagnostic
from qrspi_guard.report import ReportOptions
from qrspi_guard.report.text import line
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult, RoundResult


def _fails(d: Diagnostic, strict: bool) -> bool:
    return d.level == "error" or (strict and d.level == "warning")


def _case(suite: ET.Element, name: str, classname: str, diags: list[Diagnostic],
          strict: bool) -> tuple[int, int]:
    case = ET.SubElement(suite, "testcase", name=one_line(name), classname=one_line(classname))
    failing = [d for d in diags if _fails(d, strict)]
    if failing:
        f = ET.SubElement(case, "failure", type=failing[0].cause,
                          message=one_line(failing[0].message, 500))
        f.text = "\n".join(line(d) for d in failing)
    others = [d for d in diags if not _fails(d, strict)]
    if others:
        ET.SubElement(case, "system-out").text = "\n".join(line(d) for d in others)
    return 1, 1 if failing else 0


def _suite(root: ET.Element, r: RoundResult, strict: bool) -> None:
    name = f"{r.ref.step or '?'}/round-{r.ref.round:02d}"
    suite = ET.SubElement(root, "testsuite", name=one_line(name))
    by_tag: dict[str, list[Diagnostic]] = defaultdict(list)
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    rest: list[Diagnostic] = []
    for d in r.diagnostics:
        if d.file is None and d.tag is not None:
            by_tag[d.tag].append(d)
        elif d.file is not None:
            by_file[d.file].append(d)
        else:
            rest.append(d)
    tests = failures = 0
    classname = one_line(r.ref.round_dir)
    for tag in r.expected_tags:
        t, f = _case(suite, f"reviewer {tag}", classname, by_tag.pop(tag, []), strict)
        tests, failures = tests + t, failures + f
    for _tag, diags in sorted(by_tag.items()):
        rest.extend(diags)
    for name in sorted(set(by_file) | set(r.file_names)):
        t, f = _case(suite, name, classname, by_file.get(name, []), strict)
        tests, failures = tests + t, failures + f
    if rest or not tests:
        t, f = _case(suite, "round", classname, rest, strict)
        tests, failures = tests + t, failures + f
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))


def render(result: CheckResult, options: ReportOptions) -> str:
    root = ET.Element("testsuites", name="qrspi-guard")
    for r in result.rounds:
        _suite(root, r, options.strict)
    run_diags = [d for d in result.diagnostics if d.round is None]
    if run_diags:
        suite = ET.SubElement(root, "testsuite", name="run")
        t, f = _case(suite, "configuration and layout", "run", run_diags, options.strict)
        suite.set("tests", str(t))
        suite.set("failures", str(f))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
