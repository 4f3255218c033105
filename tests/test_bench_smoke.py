"""The benchmark runs end to end at smoke size and prints a ratio for every target.

No timing is asserted: the figures depend on the machine; this only pins that the one
command builds its corpora, runs every comparison and reports medians and ratios.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_quick_benchmark_prints_medians_and_ratios_for_targets_1_to_5(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--repeat", "1",
         "--root", str(tmp_path), "--skip-latency"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for label in ("1 canonical", "2 mixed", "3 defects", "4 one round"):
        line = next(x for x in out.splitlines() if x.startswith(label))
        assert re.search(r"check +[0-9.]+ ms", line), line
        assert re.search(r"ratio +[0-9.]+x", line), line
    memory = [x for x in out.splitlines() if x.startswith("5 peak memory")]
    assert len(memory) == 2 and all(re.search(r"[0-9.]+ MB", x) for x in memory)
    built = {p.name for p in (tmp_path / "quick").iterdir()}
    assert {"canonical-12x10", "mixed-12x10", "defects-12x10", "canonical-30x10"} <= built
