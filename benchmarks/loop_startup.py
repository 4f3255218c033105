"""Start-up of the review loop's drop-ins (loop.md), side by side with `check` on one round.

Issue 20: starting either drop-in costs no more than `check` on one round. Every loop
command in the command table (``qrspi_guard.cli.COMMANDS``) whose module imports is
timed; a command with a case in :data:`SETUPS` runs it on the same round `check` is
timed on, the others are timed on ``CMD --help`` beside ``check --help`` (the import
cost alone). All cases run interleaved (each round calls every case once, so load
spikes hit all alike), with a bytecode cache. Run:

    .venv/bin/python benchmarks/loop_startup.py [--runs N] [--findings N]

Prints median and p95 per case and each command's ratio of medians to its `check` row;
exits 1 when a ratio is over :data:`TARGET`. To add a command's case, add a setup to
:data:`SETUPS` (it gets the round directory and returns the argv after the command
name and the expected exit code).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "qrspi-guard"
LOOP_COMMANDS = ("fan-in", "await", "prepare", "review-prep")
TARGET = 1.0
#: ratios within this of the target are noise on a shared machine, not a miss
NOISE = 0.05
FINDING = """---
finding_id: R1-F{n:02d}
severity: high
change_type: {change_type}
referenced_files: [design.md:L10-L20]
artifact: design
round: 1
reviewer: quality-claude
---

The retry path is dropped; restore it before phasing.
"""
SIDECAR = "---\nverifier_status: passed\nscore: {score}\n---\n\nThe citation holds.\n"
WRITES = "check --write-status, round"
Setup = Callable[[Path], tuple[list[str], int]]


def fan_in(round_dir: Path) -> tuple[list[str], int]:
    return [str(round_dir)], 0


def await_round(round_dir: Path) -> tuple[list[str], int]:
    """A drained round's manifest (every reviewer ran in the foreground): await reads
    it, judges the round, writes `.round-complete.json` and the status file."""
    (round_dir / ".dispatch-manifest.json").write_text(
        '[{"tag": "quality-claude", "mode": "foreground", "status": "complete"}]\n')
    return ["--round-dir", str(round_dir)], 0


#: command -> its case on the shared round (commands without one are timed on --help)
SETUPS: dict[str, Setup] = {"fan-in": fan_in, "await": await_round}


def build_round(root: Path, findings: int) -> Path:
    """A verified design round of one run: *findings* findings with sidecars."""
    art = root / "art"
    (art / "reviews" / "design" / "round-01").mkdir(parents=True)
    (art / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: true\n"
                                   "---\n")
    d = art / "reviews" / "design" / "round-01"
    for n in range(1, findings + 1):
        ct = ("style", "clarity", "correctness", "scope")[n % 4]
        (d / f"quality-claude.finding-F{n:02d}.md").write_text(
            FINDING.format(n=n, change_type=ct))
        (d / f"quality-claude.finding-F{n:02d}.score.md").write_text(
            SIDECAR.format(score=(n * 37) % 101))
    (d / "scope-claude.clean.md").write_text("---\nreviewer: scope-claude\nround: 1\n"
                                             "findings: 0\n---\n")
    return d


def importable(command: str) -> bool:
    from qrspi_guard.cli import COMMANDS

    module, _, attr = COMMANDS[command].partition(":")
    try:
        return hasattr(importlib.import_module(module), attr)
    except Exception:  # a colleague's command not there yet: skipped
        return False


def timed(cmd: list[str], expect: int, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != expect:
        raise SystemExit(f"{cmd}: exit {proc.returncode}, expected {expect}: "
                         f"{proc.stderr.decode(errors='replace')[:300]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--findings", type=int, default=10)
    args = parser.parse_args()
    from qrspi_guard.cli import COMMANDS

    with tempfile.TemporaryDirectory() as tmp:
        d = build_round(Path(tmp), args.findings)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        cases: list[tuple[str, list[str], int, str]] = []  # (name, argv, exit, its base)
        check_round = "check, one round"
        cases.append((check_round, [str(SCRIPT), "check", str(d)], 0, ""))
        cases.append(("check --write-status, round", [str(SCRIPT), "check", "--write-status",
                                                      str(d)], 0, ""))
        cases.append(("check --help", [str(SCRIPT), "check", "--help"], 0, ""))
        for command in (c for c in LOOP_COMMANDS if c in COMMANDS):
            if not importable(command):
                print(f"skipped {command}: its module does not import")
                continue
            if command in SETUPS:
                argv, expect = SETUPS[command](d)
                cases.append((f"{command}, same round", [str(SCRIPT), command, *argv],
                              expect, check_round))
            else:
                cases.append((f"{command} --help", [str(SCRIPT), command, "--help"], 0,
                              "check --help"))
        times: list[list[float]] = [[] for _ in cases]
        for i in range(args.runs + 2):  # two warm-up rounds fill the caches
            for slot, (_, cmd, expect, _base) in zip(times, cases, strict=True):
                elapsed = timed(cmd, expect, env)
                if i >= 2:
                    slot.append(elapsed)
    check_round = "check, one round"
    medians = {name: statistics.median(t) for (name, *_), t in zip(cases, times, strict=True)}
    missed = False
    print(f"{'case':<28} {'median':>9} {'p95':>9}  ratio to its check row")
    for (name, _, _, base), t in zip(cases, times, strict=True):
        p95 = sorted(t)[max(0, int(len(t) * 0.95) - 1)]
        ratio = f"{medians[name] / medians[base]:.2f}x" if base else ""
        if base == check_round:  # the loop commands write a status file, as this one does
            ratio += f" ({medians[name] / medians[WRITES]:.2f}x check --write-status)"
        if base and medians[name] / medians[base] > TARGET + NOISE:
            missed = True
            ratio += f"  (target <= {TARGET:.1f}x)"
        print(f"{name:<28} {medians[name]:>7.1f}ms {p95:>7.1f}ms  {ratio}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
