"""The two example runs show what check reports in each protocol generation:
example/ was written by the apply-fix generation, example-fanin/ by the fan-in one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import FIXTURES, run_main

FANIN_RUN = Path("example-fanin/docs/qrspi/2026-06-09-webhook-retries")


def _check(path: str) -> tuple[int, dict[str, Any]]:
    proc = run_main("check", "--format", "json", path, cwd=FIXTURES)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _in_reviews(path: str) -> str:
    return Path(path).relative_to(FANIN_RUN / "reviews").as_posix()


def test_fanin_example_reports_a_halted_fan_in_and_a_silent_task_reviewer() -> None:
    code, doc = _check("example-fanin")
    got = sorted((d["cause"], d["level"], _in_reviews(d["path"])) for d in doc["diagnostics"])
    assert got == [
        ("expected_tag_no_output", "error", "tasks/task-01/round-02"),
        # one defect, one diagnostic: no sidecar_missing for its finding (generations §2)
        ("sidecar_wrong_extension", "error",
         "design/round-02/quality-codex.finding-F01.score.yml"),
    ]
    assert code == 1


def test_fanin_example_judges_every_round_as_fan_in_and_skips_telemetry() -> None:
    _code, doc = _check("example-fanin")
    rounds = {(r["step"], r["round"]): (r["protocol"], r["status"]) for r in doc["rounds"]}
    assert rounds == {
        ("goals", 1): ("fan-in", "ok"),
        ("design", 1): ("fan-in", "ok"),
        ("design", 2): ("fan-in", "halt"),
        ("task-01", 1): ("fan-in", "ok"),
        ("task-01", 2): ("fan-in", "halt"),
    }


def test_apply_fix_example_judges_its_verified_design_round_as_apply_fix() -> None:
    _code, doc = _check("example")
    protocols = {(r["step"], r["round"]): r["protocol"] for r in doc["rounds"]}
    assert protocols[("design", 1)] == "apply-fix"
    assert set(protocols.values()) == {"apply-fix"}
