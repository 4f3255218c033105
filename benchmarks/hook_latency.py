"""Wall time of `qrspi-guard hook` calls, as ratios to a bare start of the same interpreter.

The hook runs on every matching tool call of every reviewer. Targets (issue 14):

- a no-op call (a write outside any round, a tool not judged, a shell command naming
  no round) <= 1.3x the baseline;
- a valid finding write <= 2.0x the baseline.

The baseline is ``python -c pass`` with this interpreter and this environment, site
included: the console script cannot start without site (it finds the package through
it), so that is the floor every call pays. ``python -S -c pass`` is shown for
reference. All cases run side by side in one run, interleaved (each round calls every
case once, so load spikes hit all alike), with a bytecode cache (a temporary
PYTHONPYCACHEPREFIX, as an installed package has one) even when
PYTHONDONTWRITEBYTECODE is set; one extra row shows the no-op without it. Run:

    .venv/bin/python benchmarks/hook_latency.py [--runs N]

Prints median and p95 per case and the ratio of medians to the baseline; exits 1 when
a target is missed.
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
from typing import Any

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
#: case name -> the most it may cost, as a ratio to the baseline
TARGETS = {"hook: no-op, write outside any round": 1.3,
           "hook: valid finding write": 2.0}


def payload(event: str, tool: str, tool_input: dict[str, Any], cwd: Path) -> bytes:
    return json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(cwd),
                       "permission_mode": "default", "hook_event_name": event,
                       "tool_name": tool, "tool_input": tool_input}).encode()


def shell_payload(event: str, command: str, cwd: Path) -> bytes:
    """A Bash call, with the tool-use id Claude Code pairs its pre and post calls by."""
    doc = json.loads(payload(event, "Bash", {"command": command}, cwd))
    doc["tool_use_id"] = "toolu_bench"
    return json.dumps(doc).encode()


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


def cases_in(tmp: Path) -> list[Case]:
    run = tmp / "docs" / "qrspi" / "2026-05-17-auth-rework"
    round_dir = run / "reviews" / "design" / "round-03"
    round_dir.mkdir(parents=True)
    (run / "config.md").write_text("---\nsecond_reviewer: true\n---\n")
    (round_dir / "quality-claude.finding-F01.md").write_text(
        FINDING.format(change_type="clarity").replace("R3-F02", "R3-F01"))
    target = str(round_dir / "quality-claude.finding-F02.md")
    cached = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    uncached = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    hook = [str(SCRIPT), "hook"]
    outside = payload("PreToolUse", "Write", {"file_path": str(run / "design.md"),
                                              "content": "# Design\n"}, run)
    good = FINDING.format(change_type="correctness")
    written = round_dir / "quality-claude.finding-F03.md"  # what the shell cases wrote
    written.write_text(good.replace("R3-F02", "R3-F03"))
    script = f"python3 tools/write_findings.py {round_dir}"
    heredoc = f"cat > {written} <<'EOF'\n{good.replace('R3-F02', 'R3-F03')}EOF"
    return [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"], b"", 0, cached),
        ("python -S -c pass (no site)", [sys.executable, "-S", "-c", "pass"], b"", 0, cached),
        ("qrspi-guard --version (click)", [str(SCRIPT), "--version"], b"", 0, cached),
        ("hook: no-op, write outside any round", hook, outside, 0, cached),
        ("hook: no-op, tool not judged (Read)", hook,
         payload("PreToolUse", "Read", {"file_path": target}, run), 0, cached),
        ("hook: no-op, shell naming no round", hook,
         payload("PostToolUse", "Bash", {"command": "git status && ls"}, tmp), 0, cached),
        # run in a run's directory, a command can reach its rounds: it is read (bash's
        # grammar), and it only reads
        ("hook: shell in a run directory, reads", hook,
         payload("PostToolUse", "Bash", {"command": "git status && ls"}, run), 0, cached),
        ("hook: valid finding write", hook,
         payload("PreToolUse", "Write", {"file_path": target, "content": good}, run), 0,
         cached),
        ("hook: valid Gemini write_file", hook,
         payload("BeforeTool", "write_file", {"file_path": target, "content": good}, run), 0,
         cached),
        ("hook: valid edit, judged in memory", hook,
         payload("PreToolUse", "Edit", {"file_path": str(round_dir /
                                                         "quality-claude.finding-F01.md"),
                                        "old_string": "severity: high",
                                        "new_string": "severity: low"}, run), 0, cached),
        ("hook: bad finding write (exit 2)", hook,
         payload("PreToolUse", "Write", {"file_path": target,
                                         "content": FINDING.format(change_type="corectness")},
                 run), 2, cached),
        ("hook: bad finding write (JSON deny)", hook + ["--output-format", "json"],
         payload("PreToolUse", "Write", {"file_path": target,
                                         "content": FINDING.format(change_type="corectness")},
                 run), 0, cached),
        ("hook: no-op, no bytecode cache", hook, outside, 0, uncached),
        # a shell call: the pre call records the state of the round a script can reach,
        # the post call (paired by the tool-use id) judges what changed during the call
        ("hook: shell pre, a script naming a round", hook,
         shell_payload("PreToolUse", script, run), 0, cached),
        ("hook: shell post, the same script", hook,
         shell_payload("PostToolUse", script, run), 0, cached),
        ("hook: shell post, a heredoc write", hook,
         shell_payload("PostToolUse", heredoc, run), 0, cached),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="calls per case (default 30)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = cases_in(Path(tmp))
        results = list(zip([c[0] for c in cases], measure(cases, args.runs), strict=True))
    base = statistics.median(results[0][1])
    print(f"{'case':40} {'median ms':>10} {'p95 ms':>8} {'x baseline':>11} {'target':>7}"
          f"   ({args.runs} runs, python {sys.version.split()[0]})")
    missed = []
    for name, times in results:
        med = statistics.median(times)
        ratio = med / base
        target = TARGETS.get(name)
        mark = ""
        if target is not None:
            mark = f"<= {target:.1f}" + ("" if ratio <= target else " MISSED")
            if ratio > target:
                missed.append(name)
        print(f"{name:40} {med:10.1f} {p95(times):8.1f} {ratio:11.2f} {mark:>7}")
    print("targets: " + ("all met" if not missed else "missed: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
