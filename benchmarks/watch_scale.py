"""How `watch`'s start-up scan and publishing scale with a run's rounds (issue 24).

Builds one step with N complete rounds (two clean sentinels each), runs the watcher's
discovery and first tick in-process (a scripted event source: no observer, no waiting)
until every round's status file is written, and prints the time at N and at 10 x N and
the ratio ``time(10 N) / (10 x time(N))``: 1.0 is linear, 10 is quadratic (before the
fix, 150 rounds took 1.4 s and 1,200 took 39 s: a ratio near 3.5 for 8 x the rounds).

    .venv/bin/python benchmarks/watch_scale.py [--rounds 120] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.watch.events import ScriptedSource
from qrspi_guard.watch.loop import Options, Watcher

CONFIG = "---\nsecond_reviewer: false\nverifier_enabled: false\n---\n"
TAGS = ("quality-claude", "scope-claude")


def build(root: Path, n: int) -> Path:
    art = root / "run"
    art.mkdir(parents=True)
    (art / "config.md").write_text(CONFIG)
    for i in range(1, n + 1):
        rd = art / "reviews" / "design" / f"round-{i:02d}"
        rd.mkdir(parents=True)
        for tag in TAGS:
            (rd / f"{tag}.clean.md").write_text(
                f"---\nreviewer: {tag}\nround: {i}\nfindings: 0\n---\n")
    return art


def scan(n: int) -> float:
    """Seconds from discovery to every round's status file written."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        build(root, n)
        lines: list[str] = []
        w = Watcher(str(root), Overrides(), ScriptedSource(),
                    Options(settle=2.0, rescan=3600.0, fmt="json"), out=lines.append,
                    err=lambda s: None, clock=time.monotonic, wall=time.time)
        start = time.perf_counter()
        w.discover()
        w.tick()
        took = time.perf_counter() - start
        if len(lines) != n or w.status_writes != n:
            raise SystemExit(f"watch_scale: {len(lines)} lines, {w.status_writes} writes "
                             f"for {n} rounds")
        return took


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=120, help="N (the larger run is 10 N)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each size (median)")
    args = ap.parse_args(argv)
    small = statistics.median(scan(args.rounds) for _ in range(args.repeat))
    large = statistics.median(scan(args.rounds * 10) for _ in range(args.repeat))
    ratio = large / (10 * small)
    print(f"watch scan {args.rounds} rounds      {small * 1000:9.1f} ms")
    print(f"watch scan {args.rounds * 10} rounds     {large * 1000:9.1f} ms")
    print(f"watch scan ratio {ratio:.2f}x (time at 10 N / 10 x time at N; 1.0 is linear, "
          "10 is quadratic)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
