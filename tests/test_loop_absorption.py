"""The absorption map (``round-NN.absorption-map.tsv``): the four marker forms of
upstream's ``design-absorption-markers.sh``, byte for byte.

The expectations were derived by reading upstream's script (an awk program over the
design's lines, bytes in, ``<absorbed>\\t<absorbing>\\n`` out) and are written here as
this project's own test data.
"""

from __future__ import annotations

import pytest

from qrspi_guard.loop.absorption import absorption_map, markers

DASH = "\u2014"


def amap(text: str) -> bytes:
    return absorption_map(text.encode("utf-8"))


# -- form 1: the heading suffix ---------------------------------------------------------


@pytest.mark.parametrize(("heading", "expected"), [
    (f"## G3 {DASH} Cross-cutting: absorbed by CD-1", b"G3\tCD-1\n"),
    (f"## G12 {DASH} Wide goal: absorbed by CD-204", b"G12\tCD-204\n"),
    (f"## G4 {DASH} Gone: moot", b"G4\tno-task\n"),
    (f"## G5 {DASH} Done: already fixed", b"G5\tno-task\n"),
    (f"## G6 {DASH}: moot", b"G6\tno-task\n"),
    (f"## G7 {DASH} Title: moot, then more words", b"G7\tno-task\n"),
    # the first suffix of the line is the one that counts
    (f"## G8 {DASH} A: moot: absorbed by CD-9", b"G8\tno-task\n"),
    (f"## G8 {DASH} A: absorbed by CD-9: moot", b"G8\tCD-9\n"),
    # `absorbed by CD-` without digits is no suffix; a later one still is
    (f"## G9 {DASH} A: absorbed by CD-x: already fixed", b"G9\tno-task\n"),
    # no suffix at all: a goal heading, no hit
    (f"## G10 {DASH} Plain goal", b""),
    (f"## G10 {DASH} Colon without space:moot", b""),
])
def test_heading_suffix_marker(heading: str, expected: bytes) -> None:
    assert amap(heading + "\n") == expected


@pytest.mark.parametrize("heading", [
    "## G3 - ASCII hyphen: moot",           # not an em dash
    f"## G3{DASH} No space: moot",          # no space before the dash
    f"##G3 {DASH} No space after hashes: moot",
    f"### G3 {DASH} A level-3 heading: moot",
    f"# G3 {DASH} A title: moot",
    f"## g3 {DASH} Lowercase: moot",
    f"## G {DASH} No number: moot",
    f" ## G3 {DASH} Indented: moot",
])
def test_heading_suffix_needs_a_goal_heading(heading: str) -> None:
    assert amap(heading + "\n") == b""


def test_a_heading_line_carries_only_the_suffix_form() -> None:
    text = (f"## G3 {DASH} deferred to v0.9, **Explicit non-goal.**, no separate v1.0 "
            "task ships under G4 ID\n")
    assert amap(text) == b""


# -- form 2: explicit non-goal inside a goal block --------------------------------------


def test_explicit_non_goal_inside_a_goal_block() -> None:
    text = f"## G7 {DASH} Goal:\n\nIntro.\n\n- Surface A. **Explicit non-goal.** Why.\n"
    assert amap(text) == b"G7\tno-task\n"


def test_explicit_non_goal_counts_once_per_line_and_once_per_line_hit() -> None:
    text = (f"## G7 {DASH} Goal:\n"
            "**Explicit non-goal.** and **Explicit non-goal.**\n"
            "**Explicit non-goal.**\n")
    assert amap(text) == b"G7\tno-task\nG7\tno-task\n"


@pytest.mark.parametrize("line", [
    "*Explicit non-goal.*", "**Explicit non-goal**", "**explicit non-goal.**",
    "Explicit non-goal.",
])
def test_explicit_non_goal_is_the_exact_bold_phrase(line: str) -> None:
    assert amap(f"## G7 {DASH} Goal:\n{line}\n") == b""


def test_explicit_non_goal_outside_a_goal_block_is_no_marker() -> None:
    text = ("**Explicit non-goal.** before any heading\n"
            "## Notes\n**Explicit non-goal.** under a heading that is not a goal\n")
    assert amap(text) == b""


# -- form 3: the acceptance criterion (names its own goal, block or not) ----------------


@pytest.mark.parametrize(("line", "expected"), [
    ("Per lock, no separate v0.7.2 task ships under the G8 ID.", b"G8\tno-task\n"),
    ("no separate v1.0 task ships under G21 ID", b"G21\tno-task\n"),
    ("no separate v10.20.30 task ships under the G3 IDs", b"G3\tno-task\n"),
    ("no separate v0.7.2 task ships under the G8 ID and no separate v0.8 task ships "
     "under G9 ID", b"G8\tno-task\nG9\tno-task\n"),
    ("no separate v1 task ships under the G8 ID", b""),
    ("no separate 0.7 task ships under the G8 ID", b""),
    ("no separate v0.7 task ships under the the G8 ID", b""),
    ("no separate v0.7 task ships under G8", b""),
    ("No separate v0.7 task ships under G8 ID", b""),
])
def test_acceptance_criterion_marker(line: str, expected: bytes) -> None:
    assert amap(line + "\n") == expected


def test_acceptance_criterion_names_its_goal_not_the_enclosing_one() -> None:
    text = f"## G2 {DASH} Host:\nno separate v0.7 task ships under the G8 ID\n"
    assert amap(text) == b"G8\tno-task\n"


# -- form 4: free prose "deferred to vX.Y" inside a goal block --------------------------


@pytest.mark.parametrize(("line", "expected"), [
    ("The investigation is deferred to v0.8 pending a signal.", b"G11\tno-task\n"),
    ("deferred to v1.2.3", b"G11\tno-task\n"),
    ("deferred to v1.2 and deferred to v3.4", b"G11\tno-task\n"),
    ("deferred to v1", b""),
    ("deferred to 1.2", b""),
    ("Deferred to v1.2", b""),
    ("deferred  to v1.2", b""),
])
def test_deferred_to_marker(line: str, expected: bytes) -> None:
    assert amap(f"## G11 {DASH} Slipping:\n{line}\n") == expected


def test_deferred_to_outside_a_goal_block_is_no_marker() -> None:
    assert amap("deferred to v0.8\n## Other\ndeferred to v0.8\n") == b""


# -- goal blocks, order, line ends ------------------------------------------------------


def test_a_non_goal_level_two_heading_closes_the_block() -> None:
    text = (f"## G1 {DASH} Goal:\n## Out of scope\n"
            "**Explicit non-goal.** deferred to v2.0\n")
    assert amap(text) == b""


def test_level_three_headings_and_titles_stay_inside_the_block() -> None:
    text = (f"## G1 {DASH} Goal:\n### Detail\n**Explicit non-goal.**\n"
            "# A title line\ndeferred to v2.0\n")
    assert amap(text) == b"G1\tno-task\nG1\tno-task\n"


def test_the_next_goal_heading_opens_a_new_block() -> None:
    text = f"## G1 {DASH} One:\n## G2 {DASH} Two:\n**Explicit non-goal.**\n"
    assert amap(text) == b"G2\tno-task\n"


def test_one_line_emits_acceptance_then_non_goal_then_deferred() -> None:
    text = (f"## G5 {DASH} Mixed:\n"
            "deferred to v0.9; **Explicit non-goal.**; no separate v0.8 task ships "
            "under the G6 ID\n")
    assert amap(text) == b"G6\tno-task\nG5\tno-task\nG5\tno-task\n"


def test_every_form_in_document_order() -> None:
    text = "\n".join([
        "# Design for the test run",
        "",
        f"## G1 {DASH} Folded into a decision: absorbed by CD-3",
        "Body.",
        f"## G2 {DASH} No longer needed: moot",
        f"## G3 {DASH} Fixed on main: already fixed",
        f"## G4 {DASH} Partly out:",
        "- B. **Explicit non-goal.** Reason.",
        f"## G5 {DASH} Locked:",
        "By lock, no separate v1.4 task ships under the G5 ID.",
        f"## G6 {DASH} Later:",
        "Work is deferred to v2.1 for now.",
        f"## G7 {DASH} Kept goal",
        "Ordinary body.",
    ]) + "\n"
    assert amap(text) == (b"G1\tCD-3\nG2\tno-task\nG3\tno-task\nG4\tno-task\n"
                          b"G5\tno-task\nG6\tno-task\n")


@pytest.mark.parametrize(("data", "expected"), [
    (b"", b""),
    (b"\n", b""),
    (b"no markers here\n", b""),
    # no final newline: the last line still counts
    (f"## G3 {DASH} X: moot".encode(), b"G3\tno-task\n"),
    (f"## G3 {DASH} X:\ndeferred to v1.0".encode(), b"G3\tno-task\n"),
    # CR LF: the CR stays part of the line and never reaches the map
    (f"## G3 {DASH} X: absorbed by CD-12\r\n".encode(), b"G3\tCD-12\n"),
    (f"## G3 {DASH} X:\r\n**Explicit non-goal.**\r\n".encode(), b"G3\tno-task\n"),
    # bytes that are not UTF-8 are read as bytes, not refused
    (b"## G3 \xe2\x80\x94 \xff\xfe: moot\n", b"G3\tno-task\n"),
    # a lone CR is not a line end
    (b"## G3 \xe2\x80\x94 X:\rdeferred to v1.0\n", b""),
])
def test_lines_and_bytes(data: bytes, expected: bytes) -> None:
    assert absorption_map(data) == expected


def test_markers_are_pairs_in_order() -> None:
    text = f"## G3 {DASH} X: absorbed by CD-1\n## G4 {DASH} Y: moot\n".encode()
    assert markers(text) == [(b"G3", b"CD-1"), (b"G4", b"no-task")]
