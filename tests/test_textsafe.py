"""textsafe: every character of categories Cc, Cf, Zl and Zp is escaped, one way."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from qrspi_guard.textsafe import escape, line_start, one_line, path_at_line_start

UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def test_every_format_control_separator_and_control_character_is_escaped() -> None:
    missed = [hex(cp) for cp in range(sys.maxunicode + 1)
              if unicodedata.category(chr(cp)) in UNSAFE and chr(cp) in escape(chr(cp))]
    assert missed == []


def test_the_named_invisible_and_direction_changing_characters_are_escaped() -> None:
    for ch in "\u061c\u200b\u200c\u200d\u200e\u200f\u2066\u2067\u2068\u2069\u202e\ufeff\u00ad":
        out = one_line(f"a{ch}b")
        assert out == f"a\\u{ord(ch):04x}b"


def test_noncharacters_are_escaped_and_ordinary_text_is_kept() -> None:
    assert one_line("\ufffe\uffff\ufdd0\U0010ffff") == "\\ufffe\\uffff\\ufdd0\\U0010ffff"
    assert one_line("naïve café 日本語 — ok") == "naïve café 日本語 — ok"


def test_a_byte_that_is_not_utf8_shows_as_that_byte_and_c1_controls_as_code_points() -> None:
    name = b"notes-\xff\x85.md".decode("utf-8", "surrogateescape")
    assert one_line(name) == "notes-\\xff\\x85.md"
    assert one_line("a\u0085b\x1bc") == "a\\u0085b\\x1bc"  # never mistaken for a byte


@given(st.text())
def test_escaped_text_is_one_line_of_utf8_without_unsafe_characters(s: str) -> None:
    out = one_line(s)
    out.encode("utf-8")
    assert len(out.splitlines()) <= 1
    assert not any(unicodedata.category(ch) in UNSAFE for ch in out)
    assert escape(out) == out  # idempotent


def test_text_that_would_start_a_workflow_command_is_defused() -> None:
    assert path_at_line_start("::error file=x::y") == "./::error file=x::y"
    assert path_at_line_start(" \u3000::x") == "./ \u3000::x"
    assert path_at_line_start("reviews/a::b") == "reviews/a::b"
    assert line_start("::warning::x") == "\\x3a:warning::x"
    assert line_start("  ::x").lstrip()[0] == "\\"
