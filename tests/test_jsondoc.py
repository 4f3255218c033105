"""Every JSON the guard reads or writes goes through qrspi_guard/parse/jsondoc.py: NaN
and Infinity, a number no double carries, duplicate keys, huge integers and nesting past
a bound are one named line, never an internal error, never written back as ``Infinity``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import REPO, run_main

#: documents every reader refuses, and the words that name why
HOSTILE = [
    (b'{"a": NaN}', "NaN is not JSON"),
    (b'{"a": Infinity}', "Infinity is not JSON"),
    (b'{"a": -Infinity}', "-Infinity is not JSON"),
    (b'{"a": 1e400}', "too large"),
    (b'{"a": 1, "a": 2}', "appears twice"),
    (b'{"a": ' + b"9" * 5000 + b"}", "more than 1000 digits"),
    (b"[" * 100_000 + b"]" * 100_000, "nested more than"),
    (b'{"a": ' + b"[" * 65 + b"]" * 65 + b"}", "nested more than"),
    (b'{"a": "\xff"}', "not UTF-8"),
]


@pytest.mark.parametrize("data, words", HOSTILE)
def test_the_json_reader_names_what_it_refuses(data: bytes, words: str) -> None:
    from qrspi_guard.parse import jsondoc

    with pytest.raises(jsondoc.JsonError, match=re.escape(words)):
        jsondoc.loads(data)


def test_brackets_inside_strings_are_not_nesting() -> None:
    from qrspi_guard.parse import jsondoc

    deep_text = '"' + "[" * 1000 + '"'
    assert jsondoc.loads('{"a": [' + deep_text + "]}") == {"a": ["[" * 1000]}
    assert jsondoc.loads('["\\"[[[[", 1]') == ['"[[[[', 1]
    assert jsondoc.loads("[" * 64 + "]" * 64) is not None  # the bound itself is fine


@pytest.mark.parametrize("digits", ["0", "-0", "9" * 17, "-" + "9" * 17, "9" * 18, "9" * 19,
                                    "-" + "9" * 18, "-" + "9" * 19, "1" + "0" * 999])
def test_integers_either_side_of_the_short_read_are_what_python_reads(digits: str) -> None:
    """Up to 18 characters an integer is read at once; a longer one goes through the
    digit bound (contract/digits.py), loaded only then: both read the same."""
    from qrspi_guard.parse import jsondoc

    assert jsondoc.loads(f"[{digits}]") == [int(digits)]
    with pytest.raises(jsondoc.JsonError, match="more than 1000 digits"):
        jsondoc.loads("-1" + "0" * 1000)


def test_the_json_writer_never_writes_nan_or_infinity() -> None:
    from qrspi_guard.parse import jsondoc

    for value in (float("nan"), float("inf"), {"a": [float("-inf")]}):
        with pytest.raises(jsondoc.JsonError, match="NaN or Infinity"):
            jsondoc.dumps(value)


def test_a_baseline_nested_past_the_parser_depth_is_a_named_error_not_an_internal_error(
        tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(b'{"version": 1, "entries": ' + b"[" * 100_000 + b"]" * 100_000
                         + b"}")
    (tmp_path / "x").mkdir()
    proc = run_main("check", "--baseline", str(baseline), str(tmp_path / "x"))
    assert proc.returncode == 2
    assert b"internal error" not in proc.stderr
    assert b"nested more than 64 levels deep" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("data, words", [HOSTILE[0], HOSTILE[3], HOSTILE[4]])
def test_a_baseline_with_nan_a_huge_number_or_a_duplicate_key_is_a_named_error(
        tmp_path: Path, data: bytes, words: str) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(data)
    (tmp_path / "x").mkdir()
    proc = run_main("check", "--baseline", str(baseline), str(tmp_path / "x"))
    assert proc.returncode == 2 and words.encode() in proc.stderr
    assert b"internal error" not in proc.stderr


@pytest.mark.parametrize("data, words", HOSTILE)
def test_a_lockout_ledger_line_the_reader_refuses_is_named_by_its_line(
        data: bytes, words: str) -> None:
    from qrspi_guard.lockout.ledger import LedgerError, parse_line

    with pytest.raises(LedgerError, match=re.escape(words)) as got:
        parse_line(data, 3)
    assert str(got.value).startswith("line 3: ")


@pytest.mark.parametrize("data, words", HOSTILE)
def test_a_fan_in_audit_or_task_manifest_the_reader_refuses_is_a_problem(
        data: bytes, words: str) -> None:
    from qrspi_guard.rules.bookkeeping import Problem, dispatch_manifest, load_json

    got = load_json(data)
    assert isinstance(got, Problem) and words in got.message
    assert dispatch_manifest(data)[0] is None


@pytest.mark.parametrize("data, words", [h for h in HOSTILE if "digits" not in h[1]])
def test_analyzer_findings_the_reader_refuses_are_blocked_as_invalid_json(
        data: bytes, words: str) -> None:
    from qrspi_guard.verdict.review import evaluate

    got = evaluate("f.json", data)
    assert got.status == "BLOCKED" and "not valid JSON" in (got.message or "")


@pytest.mark.parametrize("data", [d for d, _ in HOSTILE])
def test_a_status_file_or_split_journal_the_reader_refuses_is_no_document(
        tmp_path: Path, data: bytes) -> None:
    from qrspi_guard.split.residue import Intent
    from qrspi_guard.watch.publish import read_previous

    path = tmp_path / "round-01-guard.json"
    path.write_bytes(data)
    assert read_previous(str(path)) is None
    assert Intent.decode(data) is None


def test_no_module_reads_or_writes_json_but_through_the_one_module() -> None:
    pattern = re.compile(r"\bjson\.(loads?|dumps?|JSONDecoder)\b")
    offenders = []
    for path in sorted((REPO / "qrspi_guard").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel == "qrspi_guard/parse/jsondoc.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(value=_VALUES)
def test_what_json_writes_the_reader_reads_back_the_same(value: object) -> None:
    from qrspi_guard.parse import jsondoc

    assert jsondoc.loads(jsondoc.dumps(value)) == value


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(alphabet='[]{}",:0123456789.eE-+ \\natrufsNIy', max_size=40),
                      _VALUES.map(json.dumps)))
def test_the_reader_reads_what_the_standard_parser_reads_or_names_why_not(text: str) -> None:
    from qrspi_guard.parse import jsondoc

    try:
        got = jsondoc.loads(text)
    except jsondoc.JsonError as exc:
        assert "\n" not in str(exc)
        return
    assert got == json.loads(text)
