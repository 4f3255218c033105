"""`await` over a large manifest and a large round (issue 29): the drain's cost grows
with the entries plus the files, never their product.

    .venv/bin/python benchmarks/await_scale.py [--entries N] [--files N] [--runs N]

Builds a round of FILES finding files and a manifest of ENTRIES entries (the first
FILES tags with their finding file, the rest with none, counted clean) and times
``qrspi-guard await`` on it, and on a round and a manifest a quarter of each size, and
prints the medians and their ratio. Before the fix, 12,000 entries over 400 files took
47 s (each entry listed and classified the whole round: a cost of entries x files, 16
times as much for 4 times both); a drain whose cost is the entries plus the files
spends at most 4 times as long. Exits 1 when the ratio of the medians is over
:data:`TARGET`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = Path(sys.executable).parent / "qrspi-guard"
#: the most a drain of 4x the entries and 4x the files may cost, relative to 1x
#: (entries plus files: at most 4; entries times files: 16)
TARGET = 5.0


def build(root: Path, files: int) -> Path:
    round_dir = root / "round-01"
    round_dir.mkdir(parents=True)
    for i in range(files):
        (round_dir / f"t{i}-x.finding-F01.md").write_text("x\n")
    return round_dir


def manifest(round_dir: Path, entries: int) -> None:
    doc = [{"tag": f"t{i}-x", "mode": "first_party", "status": "done"} for i in range(entries)]
    (round_dir / ".dispatch-manifest.json").write_text(json.dumps(doc))


def timed(round_dir: Path, entries: int) -> float:
    manifest(round_dir, entries)
    started = time.perf_counter()
    proc = subprocess.run([str(SCRIPT), "await", "--round-dir", str(round_dir)],
                          capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"await failed: {proc.stderr.decode(errors='replace')[:400]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=12_000)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = build(Path(tmp) / "small", args.files // 4)
        large = build(Path(tmp) / "large", args.files)
        quarter, full = [], []
        for _ in range(args.runs):  # interleaved: a load spike hits both alike
            quarter.append(timed(small, args.entries // 4))
            full.append(timed(large, args.entries))
    q, f = statistics.median(quarter), statistics.median(full)
    ratio = f / q if q else float("inf")
    print(f"await, {args.entries // 4} entries over {args.files // 4} files  "
          f"{q * 1000:.0f} ms")
    print(f"await, {args.entries} entries over {args.files} files  {f * 1000:.0f} ms  "
          f"ratio {ratio:.2f}x (target <= {TARGET:g}x)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
