"""`qrspi-guard report` against `check` on the same tree (report.md: at most 2x).

    .venv/bin/python benchmarks/report_vs_check.py           # 20,000-file corpora
    .venv/bin/python benchmarks/report_vs_check.py --quick   # smoke-sized

Both commands run side by side in one run on each corpus (``benchmarks/corpus.py``:
200 rounds x 100 files), alternating A/B and B/A after one warm-up each, as
``run.py`` does; prints the medians and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import corpus  # noqa: E402
from run import GUARD, HERE, ab, ms  # noqa: E402

TARGET = 2.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke-sized corpora, 3 repeats")
    ap.add_argument("--repeat", type=int, default=None, help="A/B pairs per comparison")
    ap.add_argument("--root", default=str(HERE / "_corpora"), help="where corpora live")
    ap.add_argument("--shapes", default="canonical,fanin", help="corpora to compare on")
    args = ap.parse_args(argv)
    rounds, files = (12, 10) if args.quick else (200, 100)
    repeat = args.repeat or (3 if args.quick else 7)
    root = os.path.join(args.root, "quick") if args.quick else args.root
    os.makedirs(root, exist_ok=True)
    worst = 0.0
    with tempfile.TemporaryDirectory() as out:
        html = os.path.join(out, "report.html")
        for shape in args.shapes.split(","):
            tree = corpus.build(root, shape, rounds, files)
            check = [GUARD, "check", tree]
            report = [GUARD, "report", tree, "--output", html]
            tc, tr, peak = ab(check, report, repeat)
            mc, mr = statistics.median(tc), statistics.median(tr)
            ratio = mr / mc
            worst = max(worst, ratio)
            size = os.path.getsize(html) / 1e6
            print(f"{shape:<10} {rounds * files} findings: report {ms(mr)}  check {ms(mc)}  "
                  f"ratio {ratio:5.2f}x (target <= {TARGET:.1f}x: "
                  f"{'ok' if ratio <= TARGET else 'MISSED'}); report {size:.1f} MB, "
                  f"peak {peak:.0f} MB", flush=True)
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
