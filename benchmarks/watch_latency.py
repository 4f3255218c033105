"""Latency of `qrspi-guard watch`: from a bad finding file being closed (or renamed
into place) to its halt being on disk in round-NN-guard.json; idle CPU; a burst.

Runs the installed console script against a run in a temp dir and prints numbers:

    .venv/bin/python benchmarks/watch_latency.py [--trials 200] [--idle 10] [--polling]
    .venv/bin/python benchmarks/watch_latency.py --live [--trials 200]

Targets (issue 3): median <= 15 ms, p99 <= 100 ms, idle CPU near zero. ``--live`` runs
``watch`` on a terminal (a pseudo-terminal) and times, per trial, the status file and
the live overview's redraw showing the halt (report.md: the redraw within the same
budget as the status write).
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


def new_round(tmp: Path) -> tuple[Path, Path]:
    """A run under *tmp* with an empty design round: (the round, its status file)."""
    art = tmp / "run"
    rd = art / "reviews" / "design" / "round-01"
    rd.mkdir(parents=True)
    (art / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: false\n"
                                   "---\n")
    return rd, rd.parent / "round-01-guard.json"


def live(trials: int) -> None:
    """The live overview on a pseudo-terminal: from a bad file closed to the halt in
    round-01-guard.json, and to the redrawn overview listing that halt."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    tmp = Path(tempfile.mkdtemp(prefix="watch-live-bench-"))
    try:
        rd, status = new_round(tmp)
        controller, terminal = pty.openpty()
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 200, 400, 0, 0))
        env = {**os.environ, "NO_COLOR": "1"}
        proc = subprocess.Popen([SCRIPT, "watch", str(tmp), "--settle", "3600"],
                                stdin=terminal, stdout=terminal, stderr=terminal, env=env,
                                close_fds=True)
        os.close(terminal)
        seen = bytearray()
        lock = threading.Lock()

        def read() -> None:
            while True:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                with lock:
                    seen.extend(chunk)

        threading.Thread(target=read, daemon=True).start()

        def shown(marker: bytes, since: int) -> bool:
            with lock:
                return seen.find(marker, since) >= 0

        wait(lambda: status.exists() and shown(b"qrspi-guard status:", 0), deadline=30)
        time.sleep(0.3)
        file_ms: list[float] = []
        draw_ms: list[float] = []
        for n in range(1, trials + 1):
            name = f"quality-claude.finding-F{n:02d}.md"
            target = rd / name
            # the overview's halt line (the event line below it says it otherwise)
            marker = f"change_type_out_of_enum {target}".encode()
            with lock:
                since = len(seen)
            with open(target, "w") as fh:
                fh.write(BAD.format(n=n))
            t0 = time.perf_counter()  # closed

            def halted(name: str = name) -> bool:
                doc = read_status(status)
                return bool(doc) and any(h.get("file") == name for h in doc["halts"])

            t_file = t_draw = None
            end = t0 + 10
            while t_file is None or t_draw is None:
                now = time.perf_counter()
                if now > end:
                    raise SystemExit("benchmark: timed out waiting for the live view")
                if t_file is None and halted():
                    t_file = now
                if t_draw is None and shown(marker, since):
                    t_draw = now
                time.sleep(0.0002)
            file_ms.append((t_file - t0) * 1000)
            draw_ms.append((t_draw - t0) * 1000)
            target.write_text(GOOD.format(n=n))  # the fix clears it (not timed)
            wait(lambda: bool(read_status(status)) and not read_status(status)["halts"])
            time.sleep(0.1)  # an idle terminal between trials, as a person's
        print(f"watch on a terminal, bad file closed -> halt on disk / overview redrawn, "
              f"{trials} trials")
        for label, xs in (("status file", file_ms), ("redraw", draw_ms)):
            print(f"  {label:11} median {statistics.median(xs):6.2f} ms   "
                  f"p99 {percentile(xs, 99):6.2f} ms   max {max(xs):6.2f} ms")
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        os.close(controller)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measurement")
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--polling", action="store_true")
    ap.add_argument("--live", action="store_true",
                    help="time the live overview's redraw on a terminal instead")
    args = ap.parse_args()
    if args.live:
        live(args.trials)
        return

    tmp = Path(tempfile.mkdtemp(prefix="watch-bench-"))
    try:
        rd, status = new_round(tmp)
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
