"""Nothing a reviewer writes may crash the guard: random and mutated finding files."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.layout import classify
from qrspi_guard.rules.facts import Place
from qrspi_guard.rules.filejudge import judge_file

VALID = (b"---\nfinding_id: R3-F02\nseverity: high\nchange_type: correctness\n"
         b"referenced_files: [design.md:L1-L2]\nartifact: design\nround: 3\n"
         b"reviewer: quality-claude\n---\n\nThe decision is buried.\n")
NAMES = ["quality-claude.finding-F02.md", "quality-claude.clean.md",
         "quality-claude.finding-F02.score.yml"]
PLACE = Place("r/x", "design", 3)
TOKENS = [b"---", b"\n", b"\r\n", b": ", b"[", b"]", b"{", b"}", b"&a", b"*a", b"!!python/name:os",
          b"!x", b"'", b'"', b"#", b"\t", b"\xef\xbb\xbf", b"\xff", b"\x00", b"\xe2\x80\xa8",
          b"finding_id:", b"<<<FINDING-BOUNDARY>>>", b"category: style", b"round: 08",
          b"- item", b"? ", b"|", b">", b"%YAML 1.1", b"\x1b[31m", b"score: ", b"VERIFY_FAILED"]


def _assert_sane(data: bytes) -> None:
    for name in NAMES:
        report = judge_file(classify(name), data, PLACE)
        for d in report.diagnostics:
            assert d.cause in CATALOGUE
            assert d.level == CATALOGUE[d.cause].level or d.cause == "sidecar_missing"
            for text in (d.message, d.value or ""):
                assert "\n" not in text and "\r" not in text and "\x1b" not in text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_never_raise(data: bytes) -> None:
    _assert_sane(data)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(VALID)), st.integers(0, 20),
                          st.sampled_from(TOKENS)), max_size=6))
def test_mutated_findings_never_raise(edits: list[tuple[int, int, bytes]]) -> None:
    data = bytearray(VALID)
    for pos, cut, token in edits:
        pos = min(pos, len(data))
        data[pos:pos + cut] = token
    _assert_sane(bytes(data))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_random_text_frontmatter_never_raises(text: str) -> None:
    _assert_sane(b"---\n" + text.encode("utf-8", "surrogatepass") + b"\n---\nbody\n")


def test_binary_and_huge_files_in_a_round(tmp_path: Path) -> None:
    from qrspi_guard import check

    d = tmp_path / "reviews" / "design" / "round-01"
    d.mkdir(parents=True)
    (d / "quality-claude.finding-F01.md").write_bytes(os.urandom(4096))
    (d / "quality-claude.finding-F02.md").write_bytes(b"---\n" + b"a: b\n" * 300000)
    (d / "scope-claude.clean.md").write_bytes(b"\x00" * 100)
    weird = d / "quality-claude.finding-F03.md\u202e\x1b[2Jevil"
    weird.write_bytes(VALID)
    result = check(str(tmp_path), second_reviewer=False)
    causes = sorted(x.cause for x in result.diagnostics)
    assert "file_too_large" in causes and "not_utf8" in causes or "no_frontmatter" in causes
    for x in result.diagnostics:
        assert "\x1b" not in x.message and "\u202e" not in x.message
