"""A protocol generation is one module and its line in the list (issue 19, item 4).

Every listed generation is complete (evidence of its own, a sidecar reader, a schema,
outputs the layout and the round rules know), and a new one needs nothing else: the
last test adds a third generation to a copy of the package, touching only its new module
and the list, and ``check`` then tells its rounds, reads its sidecars and offers it as a
``--protocol``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qrspi_guard.contract import generations
from qrspi_guard.contract.generations import GENERATIONS, LISTED, SIDECAR_SUFFIXES
from qrspi_guard.contract.layout import Kind, classify
from qrspi_guard.contract.schema import SCHEMA_KINDS
from qrspi_guard.engine.generation import evidence
from qrspi_guard.rules.sidecars import judge_sidecar

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_RUN = REPO / "fixtures" / "rounds" / "example" / "docs" / "qrspi" / "2026-05-17-auth-rework"
#: the output roles the round rules read (rules.inputs / rules.rounds)
KNOWN_ROLES = {"fanin_audit", "kept_list"}


def _report(cause: str, message: str, **kw: object) -> tuple[str, str]:
    return cause, message


@pytest.mark.parametrize("gen", LISTED, ids=lambda g: g.name)
def test_every_listed_generation_is_complete(gen: generations.Generation) -> None:
    suffix = gen.sidecar.suffix
    assert list(SIDECAR_SUFFIXES).count(suffix) == 1
    sidecar = f"quality-claude.finding-F01{suffix}"
    assert classify(sidecar).kind is Kind.SIDECAR
    # its sidecar alone is evidence of it, whatever is listed before it
    assert evidence([sidecar, "quality-claude.finding-F01.md"], frozenset()) is gen
    for name, role in gen.outputs:
        assert role in KNOWN_ROLES, (name, role)
        assert classify(name).kind is Kind(role)
        assert evidence([name], frozenset()) is gen
    if gen.verified_beside_suffix:
        assert evidence([], frozenset({gen.verified_beside_suffix})) is gen
    # its reader says something of a sidecar that holds nothing, and never raises
    out: list[object] = []
    facts = judge_sidecar("", suffix, _report, out)  # type: ignore[arg-type]
    assert out and facts.score is None
    assert gen.sidecar.schema_kind in SCHEMA_KINDS
    assert gen.sidecar.schema(gen.contract)["type"] == "object"
    assert GENERATIONS[gen.name] is gen


NEW_MODULE = '''"""A third generation for the test: `.score.json` sidecars holding `score=NN`."""

from __future__ import annotations

from typing import Any

from qrspi_guard.contract.generations.model import (
    CONTRACT, Generation, SidecarFacts, SidecarGrammar, Thresholds,
)


def read_sidecar(text: str, grammar: SidecarGrammar, d: Any, out: list[Any]) -> SidecarFacts:
    facts = SidecarFacts()
    key, _, value = text.strip().partition("=")
    if key != "score" or not value.isdigit():
        out.append(d("sidecar_malformed", "score-json: no score=NN line", line=1))
    else:
        facts.score = int(value)
    return facts


def sidecar_schema(contract: Any) -> dict[str, Any]:
    return {"type": "object", "title": "score-json sidecar"}


GENERATION = Generation(
    name="score-json",
    sidecar=SidecarGrammar(suffix=".score.json", read=read_sidecar,
                           schema_kind="score-json-sidecar", schema=sidecar_schema,
                           leading_zero_is_error=False),
    thresholds=Thresholds(style=80, clarity=80, correctness=70),
    contract=CONTRACT,
)
'''


def test_a_new_generation_is_its_module_and_its_line_in_the_list(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    shutil.copytree(REPO / "qrspi_guard", package / "qrspi_guard",
                    ignore=shutil.ignore_patterns("__pycache__"))
    listing = package / "qrspi_guard" / "contract" / "generations" / "__init__.py"
    (listing.parent / "score_json.py").write_text(NEW_MODULE)
    text = listing.read_text()
    assert text.count("import apply_fix, fan_in") == 1
    assert text.count("    apply_fix.GENERATION,\n") == 1
    listing.write_text(text.replace("import apply_fix, fan_in",
                                    "import apply_fix, fan_in, score_json")
                       .replace("    apply_fix.GENERATION,\n",
                                "    apply_fix.GENERATION,\n    score_json.GENERATION,\n"))
    # a run whose design round-01 has `.score.json` sidecars (and no apply-fix evidence)
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE_RUN, run)
    design = run / "reviews" / "design"
    (design / "round-01-verified.md").unlink()
    round01 = design / "round-01"
    for i, sidecar in enumerate(sorted(round01.glob("*.score.yml"))):
        sidecar.unlink()
        new = sidecar.with_name(sidecar.name.replace(".score.yml", ".score.json"))
        new.write_text("score=85\n" if i else "score=lots\n")

    def guard(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(package)}
        return subprocess.run([sys.executable, "-m", "qrspi_guard", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)

    proc = guard("check", "--format", "json", str(run))
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    r01 = next(r for r in report["rounds"] if r["path"].endswith("design/round-01"))
    assert r01["protocol"] == "score-json"
    mine = [d for d in report["diagnostics"] if "design/round-01/" in d["path"]]
    assert [(d["cause"], d["message"]) for d in mine] == [
        ("sidecar_malformed", "score-json: no score=NN line")]
    assert mine[0]["file"] == "quality-claude.finding-F01.score.json"
    # the same round under another generation: its sidecars have the wrong suffix
    forced = json.loads(guard("check", "--format", "json", "--protocol", "apply-fix",
                              str(round01)).stdout)
    assert "sidecar_wrong_extension" in {d["cause"] for d in forced["diagnostics"]}
    # --protocol offers it, schema prints its sidecar's schema
    assert guard("check", "--protocol", "score-json", str(round01)).returncode == 1
    schema = guard("schema", "--kind", "score-json-sidecar")
    assert schema.returncode == 0, schema.stderr
    assert json.loads(schema.stdout)["title"] == "score-json sidecar"
