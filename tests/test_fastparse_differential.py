"""The fast frontmatter path reads exactly what PyYAML's C loader reads, or declines.

Reference: ``frontmatter.load_yaml_c`` (PyYAML's ``CSafeLoader`` with the guard's
duplicate-key and tag checks). Whenever ``fastparse.parse`` answers, the C loader must
give a mapping with the same keys in the same order, the same values of the same types,
the same key lines, the same plain scalar text per key and the same duplicate keys.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from qrspi_guard.parse import fastparse
from qrspi_guard.parse import frontmatter as fm
from tests.support import load_benchmark

pytestmark = pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"),
                                reason="the reference is PyYAML's C loader")

CORNER_SCALARS = [
    "08", "010", "0o17", "0x1f", "0b101", "1_000", "1:30", "190:20:30", "-1", "+1", "-0",
    "0", "7", "12345678901234567890", "1.5", ".5", "1e3", "1.0e+3", "6.8523015e+5", ".inf",
    "-.inf", ".NaN", ".nan", "yes", "Yes", "YES", "no", "No", "On", "on", "OFF", "off",
    "y", "n", "Y", "true", "False", "TRUE", "null", "Null", "NULL", "~", "~x", "nil",
    "2026-05-17", "2026-05-17 10:00:00", "2026-5-7T1:02:03Z", "2026-02-30", "1999-13-01",
    "<<", "=", "==", "R3-F02", "R03-F2", "goals.md:L12-L18", "src/a.py:10-20",
    "./feedback/x.md", "a: b", "a:b", "a:", ":a", "a #b", "a#b", "a # b", "it's",
    'say "hi"', "héllo", "naïve café", "日本語", "a\u2028b", "a\u0085b", "a\ufeffb",
    "a\x7fb", "a\x00b", "tab\there", "trail ", " lead", "&anchor x", "*alias", "!!str 3",
    "!tag x", "!!int 3", "!!python/object:os.system x", "[a, b", "[a, [b]]", "{a: 1}", "|",
    ">", "- x", "-x", "? x", "?x", "%x", "@x", "`x", ",x", "]x", "a, b", "a ]", "x{y}",
    "'", '"', "''", "\\", "a\\nb", "---", "...", "- - x", "-", "--", "-.5", "+.5",
]
GOOD_KEYS = ["finding_id", "severity", "change_type", "referenced_files", "artifact",
             "round", "reviewer", "findings", "category", "a", "x_y", "k-1", "y", "No"]
KEYS = ["finding_id", "severity", "change_type", "referenced_files", "artifact", "round",
        "reviewer", "findings", "category", "a", "x_y", "k-1", "yes", "on", "null", "No",
        "y", "1", "'q'", '"dq"', "a b", "<<", "? k", "&a k", "~"]
DOUBLE_ESCAPES = ["\\\\", '\\"', "\\n", "\\t", "\\/", "\\0", "\\a", "\\e", "\\N", "\\_",
                  "\\L", "\\P", "\\x41", "\\xe9", "\\u00e9", "\\u2028", "\\ud800",
                  "\\U0001F600", "\\q", "\\ ", "\\\t", "\\"]
SPECIALS = list(" \t#:'\"[]{},-?&*!|>%@`\\\n~.0123456789\u2028é")


def strict(value: Any) -> Any:
    """A value with its type, so that True != 1 and 1.0 != 1 when compared."""
    if isinstance(value, dict):
        return ("dict", [(strict(k), strict(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [strict(v) for v in value])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def assert_same_or_declined(text: str) -> bool:
    """Fast and C readings agree (or the fast path declined). True when it answered."""
    got = fastparse.parse(text)
    if got is None:
        return False
    ref = fm.load_yaml_c(text, line_offset=-1)  # 0-based lines, like fastparse
    assert isinstance(ref, fm.Document), (text, ref)
    data, key_lines, raw, duplicates = got
    assert strict(data) == strict(ref.data), text
    assert key_lines == ref.key_lines, text
    assert raw == ref.raw, text
    assert duplicates == ref.duplicates, text
    return True


# -- generated frontmatter -----------------------------------------------------------

WORDS = st.from_regex(r"[A-Za-z_/][A-Za-z0-9_./:-]{0,10}( [a-z]{1,4})?", fullmatch=True)
scalar_text = st.one_of(
    WORDS, WORDS,
    st.sampled_from(CORNER_SCALARS),
    st.text(alphabet=st.sampled_from(list("abcXYZ019_./-") + SPECIALS), max_size=12),
    st.text(max_size=6),
)


@st.composite
def quoted(draw: Any, text: Any = scalar_text) -> str:
    """A scalar written plain, single-quoted or double-quoted (with escapes)."""
    value = draw(text)
    style = draw(st.sampled_from(["plain", "plain", "single", "double", "double-esc"]))
    if style == "single":
        return "'" + value.replace("'", draw(st.sampled_from(["''", "'"]))) + "'"
    if style == "double":
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if style == "double-esc":
        parts = draw(st.lists(st.one_of(st.sampled_from(DOUBLE_ESCAPES), scalar_text),
                              max_size=4))
        return '"' + "".join(parts) + '"'
    return value


comment = st.sampled_from(["", "", " # c", "  # note: x", "\t# tab", "# tight", " #",
                           " # 'q' [x]"])


@st.composite
def value_lines(draw: Any) -> list[str]:
    """The text after `key:` and any lines that belong to it."""
    kind = draw(st.sampled_from(["scalar", "scalar", "flow", "block", "empty"]))
    if kind == "scalar":
        sep = draw(st.sampled_from([" ", " ", "  ", "\t", ""]))
        return [sep + draw(quoted()) + draw(comment)]
    if kind == "flow":
        items = draw(st.lists(quoted(), max_size=4))
        sep = draw(st.sampled_from([", ", ",", " , ", ",  "]))
        inner = sep.join(items)
        pad = draw(st.sampled_from(["", " "]))
        close = draw(st.sampled_from(["]", "]", "", ",]", "]]", "] x"]))
        return [" [" + pad + inner + pad + close + draw(comment)]
    if kind == "block":
        indent = draw(st.sampled_from(["", "  ", "    ", " ", "\t"]))
        items = draw(st.lists(quoted(), min_size=1, max_size=4))
        out = [draw(comment)]
        for item in items:
            dash = draw(st.sampled_from(["- ", "- ", "-  ", "-", "- - "]))
            out.append(indent + dash + item + draw(comment))
            if draw(st.integers(0, 6)) == 0:
                out.append(draw(st.sampled_from(["", "# between", "  # indented", "  "])))
        return out
    return [draw(comment)]


@st.composite
def frontmatter_text(draw: Any) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        shape = draw(st.integers(0, 19))
        if shape == 0:
            lines.append(draw(st.sampled_from(["", "# comment", "  ", "   # x", "\t",
                                               "  continued", "- stray", "---", "...",
                                               "%YAML 1.1"])))
            continue
        key = draw(st.sampled_from(KEYS if shape == 1 else GOOD_KEYS))
        first, *rest = draw(value_lines())
        lines.append(key + ":" + first)
        lines.extend(rest)
    return "\n".join(lines) + ("\n" if lines else "")


#: examples per property in the default run, and in the thorough run marked `slow`
#: (the default keeps each of these two under a few seconds; `.ci/run` runs both)
QUICK, THOROUGH = 250, 1500


@settings(max_examples=QUICK, deadline=None, suppress_health_check=list(HealthCheck))
@given(frontmatter_text())
@example("round: 08\nfindings: 010\n")
@example("a: 1:30\nb: 0x1f\nc: 1_000\nd: yes\ne: On\nf: no\ng: ~\nh: .5\ni: .inf\n")
@example("d: 2026-05-17\ne: 'it''s'\nf: \"tab\\there \\u00e9\"\n")
@example("a: x # c\nb: 'x: y'\nc: \"a #b\"\nd: a#b\n")
@example("a: &x 1\nb: *x\nc: !!str 3\nd: [a, [b]]\ne: [a, b\n")
@example("a: 1\na: 2\nb: [x]\nb:\n  - y\n")
@example("a: x\u2028y\nb: caf\u00e9\n")
@example("a: [x,y]\nb: [ 'x' , \"y\" ]\nc: ['a,b']\nd: [\"a\\\"b\"]\ne: [x:y, 'q''r']\n")
@example("a: [1, yes, ~, '', \"\"]\nb: [ ]\nc: [x, ]\nd: [x] # c\ne: [x]#c\n")
def test_fast_path_reads_what_the_c_loader_reads(text: str) -> None:
    assert_same_or_declined(text)


@pytest.mark.slow
@settings(max_examples=THOROUGH, deadline=None, suppress_health_check=list(HealthCheck))
@given(frontmatter_text())
def test_fast_path_reads_what_the_c_loader_reads_thoroughly(text: str) -> None:
    assert_same_or_declined(text)


@settings(max_examples=QUICK * 2, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(GOOD_KEYS), st.sampled_from([" ", "  "]), quoted(), comment)
def test_one_line_scalars_read_as_the_c_loader_reads_them(key: str, sep: str, value: str,
                                                          note: str) -> None:
    assert_same_or_declined(f"{key}:{sep}{value}{note}\n")


@pytest.mark.slow
@settings(max_examples=THOROUGH, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(GOOD_KEYS), st.sampled_from([" ", "  "]), quoted(), comment)
def test_one_line_scalars_read_as_the_c_loader_reads_them_thoroughly(
        key: str, sep: str, value: str, note: str) -> None:
    assert_same_or_declined(f"{key}:{sep}{value}{note}\n")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CORNER_SCALARS), st.sampled_from(["plain", "flow", "block"]))
def test_every_corner_scalar_reads_as_the_c_loader_reads_it(value: str, where: str) -> None:
    if where == "plain":
        text = f"a: {value}\n"
    elif where == "flow":
        text = f"a: [x, {value}]\n"
    else:
        text = f"a:\n  - {value}\n"
    assert_same_or_declined(text)


# -- mutated frontmatter -------------------------------------------------------------

SEEDS = [
    "finding_id: R3-F02\nseverity: medium\nchange_type: clarity\n"
    "referenced_files: [goals.md:L12-L18]\nartifact: goals\nround: 3\nreviewer: q-claude\n",
    "# reviewer notes\nseverity: 'high'  # bump\nround: 3\n\nreferenced_files:\n"
    "  - \"a.md:1-2\"\n  - b.py\nfinding_id: \"R3-F01\"\nreviewer: q-codex\n",
    "reviewer: scope-claude\nround: 2\nfindings: 0\n",
    "referenced_files: [ 'a.md', \"b.md:L1\" , c ]\nartifact: design\n",
    "referenced_files:\n- a\n- 'b'\n# end\nchange_type: intent\n",
]


@st.composite
def mutated(draw: Any) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 5))
        pos = draw(st.integers(0, len(text)))
        if op == 0:
            text = text[:pos] + draw(st.sampled_from(SPECIALS)) + text[pos:]
        elif op == 1 and text:
            text = text[:pos] + text[pos + 1:]
        elif op == 2:
            text = text[:pos] + draw(st.sampled_from(CORNER_SCALARS)) + text[pos:]
        elif op == 3:
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines.insert(i, lines[draw(st.integers(0, len(lines) - 1))])
            text = "\n".join(lines)
        elif op == 4:
            lines = text.split("\n")
            i = draw(st.integers(0, len(lines) - 1))
            lines[i] = draw(st.sampled_from([" ", "  ", "\t", "- "])) + lines[i]
            text = "\n".join(lines)
        else:
            text = text[:pos] + draw(st.sampled_from(DOUBLE_ESCAPES)) + text[pos:]
    return text


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_fast_path_agrees_on_mutated_frontmatter(text: str) -> None:
    assert_same_or_declined(text)


# -- the fast path is not vacuous ----------------------------------------------------


def _corpus_module() -> Any:
    return load_benchmark("corpus")


@pytest.mark.parametrize("shape", ["canonical", "mixed"])
def test_fast_path_reads_every_benchmark_shape(shape: str) -> None:
    corpus = _corpus_module()
    rng = random.Random(3)
    for n in range(300):
        text = corpus.SHAPES[shape](1 + n % 12, "quality-claude", 1 + n % 40, rng)
        parts = fm.split(text)
        assert parts is not None
        assert assert_same_or_declined(parts[0]), parts[0]


def test_seeds_are_read_by_the_fast_path() -> None:
    for seed in SEEDS:
        assert assert_same_or_declined(seed), seed


def test_load_yaml_gives_the_same_document_with_the_fast_path_off(monkeypatch: Any) -> None:
    texts = SEEDS + ["a: 08\n", "a: [x, y,]\n", "a: 'x\n", "- a\n", "", "# only\n"]
    for text in texts:
        fast = fm.load_yaml(text, 1)
        monkeypatch.setattr(fm, "FASTPATH", False)
        slow = fm.load_yaml(text, 1)
        monkeypatch.setattr(fm, "FASTPATH", True)
        assert type(fast) is type(slow)
        if isinstance(fast, fm.Document):
            assert isinstance(slow, fm.Document)
            assert strict(fast.data) == strict(slow.data)
            assert (fast.key_lines, fast.raw, fast.duplicates) == \
                (slow.key_lines, slow.raw, slow.duplicates)
        else:
            assert fast == slow


def test_a_line_read_before_reads_the_same_and_gives_each_reading_its_own_list() -> None:
    text = ("severity: high\nreferenced_files: [a.md, 'b.md']\nrefs:\n  - x.md\n  - 'y'\n"
            "round: 3\n")
    first = fastparse.parse(text)
    second = fastparse.parse(text)  # every line now from the cache
    assert first is not None and first == second
    assert first[0]["referenced_files"] is not second[0]["referenced_files"]
    assert first[0]["refs"] is not second[0]["refs"]
    first[0]["referenced_files"].append("changed")
    assert fastparse.parse(text) == second
    # a line that declined declines again, from the cache
    for declined in ("a: 1.5\n", "yes: x\n", "a: b\n  - c\n"):
        assert fastparse.parse(declined) is None
        assert fastparse.parse(declined) is None


def test_the_line_cache_is_bounded_in_lines_and_in_line_length() -> None:
    for n in range(fastparse._CACHE_SIZE * 2 + 5):
        assert fastparse.parse(f"k{n}: v{n}\n") is not None
        assert len(fastparse._LINES) <= fastparse._CACHE_SIZE
    long_line = "k: " + "v" * fastparse._CACHED_LINE
    assert fastparse.parse(long_line + "\n") == ({"k": "v" * fastparse._CACHED_LINE},
                                                 {"k": 0}, {"k": "v" * fastparse._CACHED_LINE},
                                                 [])
    assert long_line not in fastparse._LINES
