"""The rule registry: every cause of the catalogue naming one registered rule (the
rule's causes derived from the catalogue), each rule's check resolvable, and what is
derived from it holding: the fast acceptance path declines every file a file or sidecar
rule reports (over every cause fixture), the hook judges the write scopes, JUnit's
error set is the unjudged rules'."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.layout import classify
from qrspi_guard.engine.check import check_paths
from qrspi_guard.engine.discover import round_of_dir
from qrspi_guard.engine.entries import Context, place_of
from qrspi_guard.rules import registry
from qrspi_guard.rules.fastjudge import fast_report
from tests.support import FIXTURES


def test_every_cause_is_reported_by_exactly_one_registered_rule() -> None:
    counts = Counter(c for rule in registry.RULES for c in rule.causes)
    assert set(counts) == set(CATALOGUE)
    assert [c for c, n in counts.items() if n > 1] == []
    assert len({rule.id for rule in registry.RULES}) == len(registry.RULES)


def test_every_catalogue_cause_names_a_registered_rule_and_every_rule_has_a_cause() -> None:
    ids = {rule.id for rule in registry.RULES}
    assert {c.name: c.rule for c in CATALOGUE.values() if c.rule not in ids} == {}
    assert [rule.id for rule in registry.RULES if not rule.causes] == []
    for rule in registry.RULES:
        assert rule.causes == {c.name for c in CATALOGUE.values() if c.rule == rule.id}


@pytest.mark.parametrize("rule", registry.RULES, ids=lambda r: r.id)
def test_each_rule_names_the_function_that_checks_it(rule: registry.Rule) -> None:
    assert callable(rule.function())


def test_the_derived_sets_follow_the_scopes() -> None:
    assert registry.TAG_CAUSES == {"duplicate_finding_id", "clean_and_findings_coexist"}
    assert registry.UNJUDGED == {"unreadable_file", "unreadable_dir"}
    assert "sidecar_wrong_extension" in registry.WRITE_CAUSES
    assert not registry.WRITE_CAUSES & {"verify_failed", "orphan_sidecar", "fnum_gap",
                                        "expected_tag_no_output", "config_missing"}
    from qrspi_guard.output import junit

    assert junit.ERROR_CAUSES == registry.UNJUDGED


def _file_cause_fixtures() -> list[tuple[str, Path]]:
    out = []
    for cause in sorted(registry.causes_of("file", "sidecar")):
        tree = FIXTURES / "causes" / cause
        if tree.is_dir():
            out.append((cause, tree))
    return out


def test_every_file_and_sidecar_cause_has_a_fixture() -> None:
    assert {c for c, _ in _file_cause_fixtures()} == registry.causes_of("file", "sidecar")


@pytest.mark.parametrize(("cause", "tree"), _file_cause_fixtures(), ids=lambda v: str(v)[-40:])
def test_the_fast_path_declines_every_file_a_file_or_sidecar_rule_reports(
        cause: str, tree: Path) -> None:
    """No hand-kept list: whatever a registered file or sidecar rule reports on its
    fixture, the fast acceptance path does not accept."""
    result = check_paths([str(tree)])
    flagged = [d for d in result.diagnostics
               if d.cause == cause and d.file is not None and d.path.endswith(d.file)]
    assert flagged, f"{cause} fixture does not trigger it on a file"
    for d in flagged:
        round_dir = os.path.dirname(d.path)
        ref = round_of_dir(round_dir)
        assert ref is not None
        ctx = Context()
        names = set(os.listdir(round_dir))
        beside = ctx.sides.beside(ref.step_dir, ref.round)
        assert ctx.resolver is not None
        gen = ctx.resolver.of(ref, names, beside)
        place = place_of(ref, gen, bool(gen.outputs_inside & names))
        if os.path.islink(d.path):
            continue  # a link is never read
        data = Path(d.path).read_bytes()
        assert fast_report(classify(d.file), data, place) is None, (cause, d.path)
