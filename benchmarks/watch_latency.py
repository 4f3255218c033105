"""Latency of `qrspi-guard watch`: from a bad finding file being closed (or renamed
into place) to its halt being on disk in round-NN-guard.json; idle CPU; a burst.

Runs the installed console script against a run in a temp dir and prints numbers:

    .venv/bin/python benchmarks/watch_latency.py [--trials 200] [--idle 10] [--polling]

Targets (issue 3): median <= 15 ms, p99 <= 100 ms, idle CPU near zero.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SCRIPT = str(Path(sys.executable).parent / "qrspi-guard")

BAD = """---
finding_id: R1-F{n:02d}
severity: medium
change_type: corectness
referenced_files: [src/a.py:L10-L20]
artifact: design
round: 1
reviewer: quality-claude
---

Trial {n}: something specific is wrong here and this says what would fix it.
"""

GOOD = BAD.replace("corectness", "clarity")


def read_status(path: Path) -> dict | None:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def wait(cond: Callable[[], bool], deadline: float = 10.0, nap: float = 0.0002) -> float:
    """Spin (with a short nap) until cond() is true; returns the time it became true."""
    end = time.perf_counter() + deadline
    while True:
        if cond():
            return time.perf_counter()
        if time.perf_counter() > end:
            raise SystemExit("benchmark: timed out waiting for the watcher")
        time.sleep(nap)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measurement")
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--polling", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="watch-bench-"))
    try:
        art = tmp / "run"
        rd = art / "reviews" / "design" / "round-01"
        rd.mkdir(parents=True)
        (art / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: false\n"
                                       "---\n")
        status = rd.parent / "round-01-guard.json"
        cmd = [SCRIPT, "watch", str(tmp), "--settle", "3600"]
        if args.polling:
            cmd.append("--polling")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stderr is not None
        while "watching" not in (line := proc.stderr.readline()):
            if not line:
                raise SystemExit("benchmark: watcher did not start")
        wait(lambda: status.exists())

        def halted(name: str) -> bool:
            doc = read_status(status)
            return bool(doc) and any(h.get("file") == name for h in doc["halts"])

        def clear() -> bool:
            doc = read_status(status)
            return bool(doc) and not doc["halts"]

        close_ms: list[float] = []
        rename_ms: list[float] = []
        for n in range(1, args.trials + 1):
            name = f"quality-claude.finding-F{n:02d}.md"
            target = rd / name
            if n % 2:
                with open(target, "w") as fh:
                    fh.write(BAD.format(n=n))
                t0 = time.perf_counter()  # closed
                into = close_ms
            else:
                hidden = rd / f".{name}.tmp"
                hidden.write_text(BAD.format(n=n))
                os.rename(hidden, target)
                t0 = time.perf_counter()  # renamed into place
                into = rename_ms
            t1 = wait(lambda name=name: halted(name))
            into.append((t1 - t0) * 1000)
            target.write_text(GOOD.format(n=n))  # the fix clears it (not timed)
            wait(clear)

        both = close_ms + rename_ms
        print(f"watch latency ({'polling' if args.polling else 'inotify'}), bad file closed or "
              f"renamed into place -> halt on disk in round-01-guard.json, {len(both)} trials")
        for label, xs in (("close", close_ms), ("rename", rename_ms), ("all", both)):
            print(f"  {label:7} median {statistics.median(xs):6.2f} ms   "
                  f"p99 {percentile(xs, 99):6.2f} ms   max {max(xs):6.2f} ms   n={len(xs)}")

        time.sleep(0.5)  # let the last writes drain before measuring idle
        c0, w0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(args.idle)
        c1, w1 = cpu_seconds(proc.pid), time.perf_counter()
        print(f"  idle CPU over {w1 - w0:.1f} s without changes: {c1 - c0:.3f} s "
              f"({100 * (c1 - c0) / (w1 - w0):.2f} % of one core)")

        if args.burst:
            burst = rd.parent / "round-02"  # a fresh round: round-01 completes, as in a run
            burst.mkdir()
            t0 = time.perf_counter()
            for i in range(1, args.burst + 1):
                text = GOOD.format(n=i).replace("R1-", "R2-").replace("round: 1", "round: 2")
                if i == args.burst:
                    text = text.replace("clarity", "corectness")
                (burst / f"quality-claude.finding-F{i:04d}.md").write_text(text)
            t_written = time.perf_counter()
            last = f"quality-claude.finding-F{args.burst:04d}.md"
            status2 = rd.parent / "round-02-guard.json"

            def last_halted() -> bool:
                doc = read_status(status2)
                return bool(doc) and any(h.get("file") == last for h in doc["halts"])

            t1 = wait(last_halted, deadline=60, nap=0.001)
            print(f"  burst of {args.burst} files: written in {(t_written - t0) * 1000:.0f} ms, "
                  f"last one's halt on disk {(t1 - t_written) * 1000:.0f} ms after the last "
                  "write")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
        summary = [x for x in err.splitlines() if "stopped" in x]
        print(f"  exit {proc.returncode}; {summary[-1].split('watch: ')[-1] if summary else ''}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
