"""explain, matrix and schema: the catalogue, the matrix and the JSON Schemas."""

from __future__ import annotations

import json

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from tests.support import run_cli, run_main


@pytest.mark.parametrize("cause", sorted(CATALOGUE))
def test_explain_knows_every_cause(cause: str) -> None:
    from click.testing import CliRunner

    from qrspi_guard.cli.explain import explain

    result = CliRunner().invoke(explain, [cause, "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["name"] == cause and doc["level"] in ("error", "warning", "info")
    assert doc["meaning"] and doc["fix"]


def test_explain_cli_and_unknown_cause() -> None:
    proc = run_cli("explain", "change_type_out_of_enum")
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("change_type_out_of_enum (error)")
    proc = run_cli("explain", "no_such_cause")
    assert proc.returncode == 2 and b"unknown cause" in proc.stderr
    listed = run_cli("explain", "--list").stdout.decode().splitlines()
    assert [ln.split()[0] for ln in listed] == list(CATALOGUE)


def test_matrix_json_both_columns_and_one_step() -> None:
    rows = json.loads(run_cli("matrix", "--format", "json").stdout)
    plan = next(r for r in rows if r["step"] == "plan")
    assert len(plan["second_reviewer_true"]) == 14 and len(plan["second_reviewer_false"]) == 7
    integration = [r["row"] for r in rows if r["step"] == "integration"]
    assert integration == ["implement-gate", "integrate"]
    one = json.loads(run_cli("matrix", "--step", "test", "--no-second-reviewer", "--format",
                             "json").stdout)
    assert one == [{"step": "test", "row": "test", "second_reviewer_false": [
        "spec-claude", "code-quality-claude", "goal-traceability-claude"]}]
    assert run_cli("matrix", "--step", "nope").returncode == 2


def test_schema_enums_come_from_the_rules_constants() -> None:
    from qrspi_guard.contract.schema import CHANGE_TYPES, SEVERITIES

    doc = json.loads(run_cli("schema").stdout)
    finding = doc["finding"]
    assert finding["properties"]["change_type"]["enum"] == list(CHANGE_TYPES)
    assert finding["properties"]["severity"]["enum"] == list(SEVERITIES)
    assert set(finding["required"]) == {"finding_id", "severity", "change_type",
                                        "referenced_files", "artifact", "round", "reviewer"}
    # extra keys and the clean variant are warnings in check, so the schema admits them
    assert finding["additionalProperties"] is True
    assert doc["clean"]["properties"]["findings"]["const"] == 0
    assert "findings" not in doc["clean"]["required"]
    sidecar = json.loads(run_main("schema", "--kind", "sidecar").stdout)
    assert "score" in sidecar["properties"]


def test_matrix_accepts_the_integration_rows_by_name() -> None:
    rows = json.loads(run_main("matrix", "--step", "integrate", "--format", "json").stdout)
    assert [r["row"] for r in rows] == ["integrate"]
    assert run_main("matrix", "--step", "implement-gate").returncode == 0
