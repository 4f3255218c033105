"""Wall time of `qrspi-guard hook` calls, side by side with a bare interpreter start.

The hook runs on every file write an agent makes, so a call that is not about a review
round must return in well under 100 ms. Run:

    .venv/bin/python benchmarks/hook_latency.py [--runs N]

Prints median and p95 per case and the ratio to `python3 -c pass` (the same
interpreter), and exits 1 when the no-op median is 100 ms or more. Calls run with a
bytecode cache (in a temporary PYTHONPYCACHEPREFIX, as an installed package has one),
even when PYTHONDONTWRITEBYTECODE is set; one extra row shows the no-op without it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "qrspi-guard"
Case = tuple[str, list[str], bytes, int, dict[str, str]]
FINDING = """---
finding_id: R3-F02
severity: high
change_type: {change_type}
referenced_files: [skills/design/SKILL.md:L120-L134]
artifact: design
round: 3
reviewer: quality-claude
---

The retry path is dropped; restore it before phasing.
"""


def payload(tool: str, tool_input: dict[str, str], cwd: Path) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": "PreToolUse",
                       "tool_name": tool, "tool_input": tool_input}).encode()


def timed(cmd: list[str], stdin: bytes, expect: int, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, env=env)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != expect:
        raise SystemExit(f"{cmd}: exit {proc.returncode}, expected {expect}: "
                         f"{proc.stderr.decode(errors='replace')[:300]}")
    return elapsed


def measure(cases: list[Case], runs: int) -> list[list[float]]:
    """Interleaved: each round calls every case once, so load spikes hit all alike."""
    times: list[list[float]] = [[] for _ in cases]
    for i in range(runs + 2):  # two warm-up rounds fill the page and bytecode caches
        for slot, (_, cmd, stdin, expect, env) in zip(times, cases, strict=True):
            elapsed = timed(cmd, stdin, expect, env)
            if i >= 2:
                slot.append(elapsed)
    return times


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="calls per case (default 30)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "docs" / "qrspi" / "2026-05-17-auth-rework"
        round_dir = run / "reviews" / "design" / "round-03"
        round_dir.mkdir(parents=True)
        (run / "config.md").write_text("---\nsecond_reviewer: true\n---\n")
        (round_dir / "quality-claude.finding-F01.md").write_text(
            FINDING.format(change_type="clarity").replace("R3-F02", "R3-F01"))
        hook = [str(SCRIPT), "hook", "--event", "pre"]
        target = str(round_dir / "quality-claude.finding-F02.md")
        cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        uncached = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        outside = payload("Write", {"file_path": str(run / "design.md"),
                                    "content": "# Design\n"}, run)
        cases: list[Case] = [
            ("python3 -c pass (baseline)", [sys.executable, "-c", "pass"], b"", 0, cached),
            ("qrspi-guard --version (CLI floor)", [str(SCRIPT), "--version"], b"", 0, cached),
            ("hook: no-op, write outside any round", hook, outside, 0, cached),
            ("hook: no-op, non-file tool (Bash)", hook,
             payload("Bash", {"command": "ls"}, run), 0, cached),
            ("hook: valid finding write", hook,
             payload("Write", {"file_path": target,
                               "content": FINDING.format(change_type="correctness")}, run),
             0, cached),
            ("hook: bad finding write (blocked)", hook,
             payload("Write", {"file_path": target,
                               "content": FINDING.format(change_type="corectness")}, run),
             2, cached),
            ("hook: no-op, no bytecode cache", hook, outside, 0, uncached),
        ]
        results = list(zip([c[0] for c in cases], measure(cases, args.runs), strict=True))
    base = statistics.median(results[0][1])
    print(f"{'case':40} {'median ms':>10} {'p95 ms':>8} {'x baseline':>11}   ({args.runs} runs)")
    for name, times in results:
        med = statistics.median(times)
        print(f"{name:40} {med:10.1f} {p95(times):8.1f} {med / base:11.2f}")
    noop = statistics.median(results[2][1])
    verdict = "OK" if noop < 100 else "TOO SLOW"
    print(f"no-op median {noop:.1f} ms ({noop - base:+.1f} ms over the bare interpreter): "
          f"{verdict} (budget: well under 100 ms)")
    return 0 if noop < 100 else 1


if __name__ == "__main__":
    sys.exit(main())
