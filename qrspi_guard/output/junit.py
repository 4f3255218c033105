"""JUnit XML: a test suite per round, a test case per expected tag and per file.

A silent reviewer is a failing test case named for its tag. Every ``<testsuite>`` and
the ``<testsuites>`` root carry ``tests``, ``failures``, ``errors``, ``skipped`` and
``time`` (the check's wall time, shared out over the rounds by their number of files and
over each suite's test cases evenly, at least 0.001 s each: the guard does not time
rounds one by one, and a report whose times are all 0 breaks readers such as
``junit2html --report-matrix``), as the Jenkins xunit
``junit-10.xsd`` asks (which has no ``skipped`` on the root; it is kept there for the
consumers that read it). A file the guard could not read at all (``unreadable_file``,
``unreadable_dir``) is an ``<error>``, every other failing diagnostic a ``<failure>``.

Every attribute and text node holds only characters XML 1.0 allows: untrusted text is
escaped by :mod:`qrspi_guard.textsafe` first, and anything XML still refuses (U+FFFE,
C0 controls) is escaped as ``\\uNNNN``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import TYPE_CHECKING

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.output import ReportOptions, fails, visible
from qrspi_guard.output.text import line
from qrspi_guard.records import record
from qrspi_guard.rules.registry import UNJUDGED
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult, RoundResult

#: causes that mean the guard could not judge the file at all: a JUnit `<error>` (the
#: rule registry's unjudged rules)
ERROR_CAUSES = UNJUDGED
#: characters outside XML 1.0's `Char` production
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
MIN_TIME = 0.001


def _time(seconds: float) -> str:
    """Seconds in Surefire's format (at most three decimals), never below 1 ms."""
    return f"{max(seconds, MIN_TIME):.3f}"


def xml_text(s: str) -> str:
    """*s* with every character XML 1.0 refuses escaped as ``\\uNNNN``."""
    return _XML_ILLEGAL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", s)


@record
class Counts:
    tests: int = 0
    failures: int = 0
    errors: int = 0
    time: float = 0.0

    def add(self, other: Counts) -> None:
        self.tests += other.tests
        self.failures += other.failures
        self.errors += other.errors
        self.time += other.time

    def stamp(self, element: ET.Element, skipped: bool = True) -> None:
        element.set("tests", str(self.tests))
        element.set("failures", str(self.failures))
        element.set("errors", str(self.errors))
        if skipped:
            element.set("skipped", "0")
        element.set("time", _time(self.time))


def _element(parent: ET.Element, tag: str, **attrs: str) -> ET.Element:
    return ET.SubElement(parent, tag, {k: xml_text(v) for k, v in attrs.items()})


def _case(suite: ET.Element, name: str, classname: str, diags: list[Diagnostic],
          options: ReportOptions, seconds: float) -> Counts:
    case = _element(suite, "testcase", name=one_line(name), classname=one_line(classname),
                    time=_time(seconds))
    failing = [d for d in diags if fails(d, options.strict)]
    counts = Counts(tests=1, time=max(seconds, MIN_TIME))
    if failing:
        kind = "error" if any(d.cause in ERROR_CAUSES for d in failing) else "failure"
        first = next((d for d in failing if d.cause in ERROR_CAUSES), failing[0])
        f = _element(case, kind, type=first.cause, message=one_line(first.message, 500))
        f.text = xml_text("\n".join(line(d) for d in failing))
        if kind == "error":
            counts.errors = 1
        else:
            counts.failures = 1
    others = [d for d in diags if not fails(d, options.strict) and visible(d, options)]
    if others:
        _element(case, "system-out").text = xml_text("\n".join(line(d) for d in others))
    return counts


def _suite(root: ET.Element, r: RoundResult, options: ReportOptions,
           seconds: float) -> Counts:
    name = f"{r.ref.step or '?'}/round-{r.ref.round or 0:02d}"
    suite = _element(root, "testsuite", name=one_line(name))
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
    counts = Counts()
    classname = r.ref.round_dir
    for _tag, diags in sorted((t, d) for t, d in by_tag.items() if t not in r.expected_tags):
        rest.extend(diags)
    names = sorted(set(by_file) | set(r.file_names))
    share = seconds / max(len(r.expected_tags) + len(names) + (1 if rest else 0), 1)
    for tag in r.expected_tags:
        counts.add(_case(suite, f"reviewer {tag}", classname, by_tag.get(tag, []), options,
                         share))
    for fname in names:
        counts.add(_case(suite, fname, classname, by_file.get(fname, []), options, share))
    if rest or not counts.tests:
        counts.add(_case(suite, "round", classname, rest, options, share))
    counts.stamp(suite)
    return counts


def render(result: CheckResult, options: ReportOptions) -> str:
    root = ET.Element("testsuites", name="qrspi-guard")
    total = Counts()
    run_diags = [d for d in result.diagnostics if d.round is None]
    weights = [max(r.files, 1) for r in result.rounds] + ([1] if run_diags else [])
    per_weight = options.elapsed / max(sum(weights), 1)
    for r, weight in zip(result.rounds, weights, strict=False):
        total.add(_suite(root, r, options, per_weight * weight))
    if run_diags:
        suite = _element(root, "testsuite", name="run")
        counts = _case(suite, "configuration and layout", "run", run_diags, options,
                       per_weight)
        counts.stamp(suite)
        total.add(counts)
    total.time = max(total.time, options.elapsed)
    total.stamp(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
