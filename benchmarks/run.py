"""`qrspi-guard check` against the read floor (issue 7, targets 1-5).

    .venv/bin/python benchmarks/run.py            # full run (builds corpora once)
    .venv/bin/python benchmarks/run.py --quick    # smoke-sized run

Every comparison runs its two commands side by side in one run, alternating A/B and
B/A, after one warm-up each, and reports medians and the ratio of the medians.
Peak memory is the maximum resident set of the check process (and any worker it
started), read from ``wait4``. Then runs ``hook_latency.py`` and ``watch_latency.py``
from this directory when they exist.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

PYTHON = sys.executable
GUARD = str(Path(sys.executable).parent / "qrspi-guard")
FLOOR = [PYTHON, str(HERE / "floor.py")]
#: Commands run as installed software runs: with its bytecode cached (in a prefix
#: beside the corpora). Without this a PYTHONDONTWRITEBYTECODE=1 environment would
#: recompile the package from source on every start, which no installed package does.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = str(HERE / "_corpora" / "_pycache")
#: Arguments that make the latency benchmarks smoke-sized under --quick.
QUICK_ARGS = {"hook_latency.py": ["--runs", "3"],
              "watch_latency.py": ["--trials", "10", "--idle", "1", "--burst", "50"]}

def run_once(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of one process (and its children)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env or ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss / 1024, proc.returncode


def ab(a: list[str], b: list[str], repeat: int) -> tuple[list[float], list[float], float]:
    """Alternate A/B then B/A *repeat* times; (A walls, B walls, B's peak MB)."""
    run_once(a)
    run_once(b)
    ta: list[float] = []
    tb: list[float] = []
    peak = 0.0
    for i in range(repeat):
        order = ((a, ta), (b, tb)) if i % 2 == 0 else ((b, tb), (a, ta))
        for cmd, into in order:
            wall, mb, _ = run_once(cmd)
            into.append(wall)
            if cmd is b:
                peak = max(peak, mb)
    return ta, tb, peak


def ms(x: float) -> str:
    return f"{x * 1000:8.1f} ms"


def line(label: str, base_name: str, ta: list[float], tb: list[float], target: float,
         files: int | None = None) -> dict[str, float]:
    ma, mb = statistics.median(ta), statistics.median(tb)
    ratio = mb / ma
    per = f"  ({mb / files * 1e6:.1f} µs/file vs {ma / files * 1e6:.1f})" if files else ""
    verdict = "ok" if ratio <= target else "MISSED"
    print(f"{label:<34} check {ms(mb)}  {base_name} {ms(ma)}  ratio {ratio:5.2f}x "
          f"(target <= {target:.1f}x: {verdict}){per}", flush=True)
    return {"check": mb, "base": ma, "ratio": ratio}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke-sized corpora, 3 repeats")
    ap.add_argument("--repeat", type=int, default=None, help="A/B pairs per comparison")
    ap.add_argument("--root", default=str(HERE / "_corpora"), help="where corpora live")
    ap.add_argument("--skip-memory", action="store_true", help="skip the 100,000-file run")
    ap.add_argument("--skip-latency", action="store_true",
                    help="skip hook_latency.py and watch_latency.py")
    args = ap.parse_args(argv)
    rounds, files, big = (12, 10, 30) if args.quick else (200, 100, 1000)
    repeat = args.repeat or (3 if args.quick else 11)
    root = os.path.join(args.root, "quick") if args.quick else args.root
    os.makedirs(root, exist_ok=True)
    print(f"building corpora under {root} ...", flush=True)
    paths = {shape: corpus.build(root, shape, rounds, files) for shape in corpus.SHAPES}
    n = rounds * files
    print(f"corpora: {rounds} rounds x {files} files = {n} files each; {repeat} A/B pairs; "
          f"{os.cpu_count()} cores; python {sys.version.split()[0]}", flush=True)
    results: dict[str, dict[str, float]] = {}
    targets = (("1 canonical", "canonical", 1.0), ("2 mixed", "mixed", 2.0),
               ("3 defects", "defects", 2.5), ("1b fan-in", "fanin", 1.0))
    peak20 = 0.0
    for label, shape, target in targets:
        check = [GUARD, "check", paths[shape]]
        ta, tb, peak = ab(FLOOR + [paths[shape]], check, repeat)
        results[label] = line(f"{label} ({n} files)", "floor", ta, tb, target, n)
        if shape == "canonical":
            peak20 = peak
    one_round = os.path.join(paths["canonical"], "run-0000", "reviews", "goals", "round-01")
    ta, tb, _ = ab([PYTHON, "-c", "import yaml"], [GUARD, "check", one_round], repeat * 2)
    results["4 one round"] = line(f"4 one round ({files} files)", "import yaml", ta, tb, 2.0)
    print(f"{'5 peak memory':<34} {n} files: {peak20:.1f} MB (target <= 64 MB)", flush=True)
    if not args.skip_memory:
        big_path = corpus.build(root, "canonical", big, files)
        _, mb, _ = run_once([GUARD, "check", big_path])
        peaks = [mb] + [run_once([GUARD, "check", big_path])[1] for _ in range(2)]
        peak_big = max(peaks)
        growth = (peak_big / peak20 - 1) * 100 if peak20 else 0.0
        print(f"{'5 peak memory':<34} {big * files} files: {peak_big:.1f} MB "
              f"({growth:+.1f}% vs {n} files; target within 10%)", flush=True)
    if not args.skip_latency:
        for script in ("hook_latency.py", "watch_latency.py"):
            path = HERE / script
            if path.exists():
                print(f"--- {script}", flush=True)
                extra = QUICK_ARGS.get(script, []) if args.quick else []
                code = subprocess.run([PYTHON, str(path), *extra]).returncode
                if code:
                    print(f"{script} exited {code}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
