"""benchmarks/loop_startup.py runs end to end at smoke size: every loop command of the
command table that imports gets a row beside `check` on the same round. No timing is
asserted (the figures depend on the machine)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_loop_startup_benchmark_prints_a_ratio_per_loop_command() -> None:
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "loop_startup.py"),
                           "--runs", "1", "--findings", "3"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a target missed on this machine
    rows = {line.split("  ")[0]: line for line in proc.stdout.splitlines()}
    assert any(k.startswith("check, one round") for k in rows)
    fan_in = next(v for k, v in rows.items() if k.startswith("fan-in, same round"))
    assert re.search(r"[0-9.]+x \([0-9.]+x check --write-status\)", fan_in), fan_in
