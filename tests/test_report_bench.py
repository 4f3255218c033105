"""benchmarks/report_vs_check.py runs end to end at smoke size and prints the ratio of
`report` to `check` per corpus (no timing is asserted: it depends on the machine)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_report_benchmark_prints_report_and_check_side_by_side(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "report_vs_check.py"), "--quick",
         "--repeat", "1", "--root", str(tmp_path)], capture_output=True, text=True,
        timeout=300)
    assert proc.returncode in (0, 1), proc.stderr  # 1: the 2x target missed
    lines = proc.stdout.splitlines()
    for shape in ("canonical", "fanin"):
        line = next(x for x in lines if x.startswith(shape))
        assert re.search(r"report +[0-9.]+ ms +check +[0-9.]+ ms +ratio +[0-9.]+x", line), line
