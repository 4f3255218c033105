"""The hook's per-cause guidance (found, allowed, fix, example lines), pinned byte for
byte: every catalogue cause rendered as a blocking error in several places (a finding
file, a clean sentinel, a non-round entry, an integration step, a two-digit F number),
without and with an offending value. The expected text lives in
``tests/hook_message_guide.json``, written from the renderer the guide table was moved
out of, so moving the guidance into the catalogue changed no byte the agent reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.hook.message import PLACEHOLDERS, render, render_rounds
from qrspi_guard.hook.where import Target

SNAPSHOT = Path(__file__).with_name("hook_message_guide.json")

#: (step, round, entry name): the places an example line is filled in from
PLACES = {
    "finding": ("design", 3, "quality-claude.finding-F02.md"),
    "clean": ("design", 3, "security-gpt5.clean.md"),
    "stray": ("plan", None, "notes.txt"),
    "integrate": ("integrate", 12, "codex-gpt5.finding-F09.md"),
    "implement-gate": ("implement-gate", 1, "quality-claude.finding-F10.md"),
}
#: the causes whose example line is filled in from the place or the value found
PLACED = ("missing_finding_id", "finding_id_malformed", "fnum_mismatch",
          "duplicate_finding_id", "severity_out_of_enum", "change_type_out_of_enum",
          "missing_artifact", "artifact_step_mismatch", "missing_round", "round_not_integer",
          "round_mismatch", "missing_reviewer", "reviewer_tag_mismatch", "combined_findings",
          "clean_and_findings_coexist", "bad_finding_filename", "unknown_file_in_round_dir",
          "bad_round_dir_name")
ENUMS = ("missing_severity", "severity_out_of_enum", "missing_change_type",
         "change_type_out_of_enum", "malformed_yaml")


def _diags(value: str | None, names: tuple[str, ...] | None = None) -> list[Diagnostic]:
    out = []
    for i, name in enumerate(names or tuple(CATALOGUE)):
        field = name.split("_", 1)[1] if name.startswith("missing_") else None
        out.append(Diagnostic(cause=name, level="error", message="m", file="x.md",
                              line=i + 1 if i % 2 else None, field=field, value=value))
    return out


def _target(place: str) -> Target:
    step, number, name = PLACES[place]
    rdir = f"/art/reviews/{step}/round-{number or 0:02d}"
    return Target(f"reviews/{step}/{name}", f"{rdir}/{name}", rdir, name, step, number,
                  False)


def rendered() -> dict[str, str]:
    """The hook's message for: every cause without and with a value found; the causes
    whose example depends on the place, in every place; the enum causes with values near
    each enum and near none; and the shell path's grouping. Keyed by what varied."""
    finding = _target("finding")
    out = {"all/no value": render(finding, _diags(None), "pre"),
           "all/value": render(finding, _diags("Hgih "), "pre")}
    for place in PLACES:
        out[f"placed/{place}"] = render(_target(place), _diags(None, PLACED), "pre")
    for value in ("corectness", "zzz", ""):
        out[f"enums/{value}"] = render(finding, _diags(value, ENUMS), "pre")
    out["rounds"] = render_rounds([("/art/reviews/design/round-03", "design",
                                    _diags(None, PLACED))])
    return out


def test_every_cause_renders_byte_identically_to_the_pinned_guidance() -> None:
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    got = rendered()
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], key


@pytest.mark.parametrize("name", ["severity_out_of_enum", "change_type_out_of_enum"])
def test_an_enum_example_offers_the_value_nearest_the_one_found(name: str) -> None:
    text = render(_target("finding"), [Diagnostic(cause=name, level="error", message="m",
                                                  value="Hgih " if "sev" in name
                                                  else "corectness")], "pre")
    assert ("example: severity: high" in text if "sev" in name
            else "example: change_type: correctness" in text)


def test_every_catalogue_example_names_only_placeholders_the_hook_fills() -> None:
    import string

    named = {field for c in CATALOGUE.values()
             for _, field, _, _ in string.Formatter().parse(c.example) if field is not None}
    assert named and named <= set(PLACEHOLDERS), named - set(PLACEHOLDERS)


def test_a_cause_with_an_example_gets_it_filled_in_from_the_written_files_place() -> None:
    diag = Diagnostic(cause="reviewer_tag_mismatch", level="error", message="m")
    text = render(_target("integrate"), [diag], "pre")
    assert f"    allowed: {CATALOGUE['reviewer_tag_mismatch'].allowed}\n" in text
    assert "    example: reviewer: codex-gpt5\n" in text
