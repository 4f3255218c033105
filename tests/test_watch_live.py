"""The live `watch` view (report.md "watch on a terminal"): the console script under a
real pseudo-terminal while files are written; every wait is on what the program drew."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.support import SCRIPT, UNSET, Run

DEADLINE = 60.0
GOOD = """---
finding_id: R1-F0{n}
severity: high
change_type: correctness
referenced_files: [goals.md:L10-L20]
artifact: goals
round: 1
reviewer: quality-claude
---

The goal contradicts the constraint; align them.
"""


class Terminal:
    """The console script with stdout and stderr on one pseudo-terminal."""

    def __init__(self, *args: str, cols: int = 140, rows: int = 60) -> None:
        leader, follower = os.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in UNSET}
        self.proc = subprocess.Popen([str(SCRIPT), *args], stdin=subprocess.DEVNULL,
                                     stdout=follower, stderr=follower, env=env,
                                     start_new_session=True)
        os.close(follower)
        self.leader = leader
        self.data = b""
        self.lock = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.leader, 65536)
            except OSError:
                chunk = b""
            with self.lock:
                if not chunk:
                    self.closed = True
                    self.lock.notify_all()
                    return
                self.data += chunk
                self.lock.notify_all()

    def text(self) -> str:
        with self.lock:
            return self.data.decode("utf-8", "replace")

    def screen(self) -> str:
        """What the last redraw drew (from its cursor-home)."""
        return self.text().rsplit("\x1b[H", 1)[-1]

    def wait_for(self, cond: Callable[[], bool], what: str) -> None:
        end = time.monotonic() + DEADLINE
        with self.lock:
            while not cond():
                left = end - time.monotonic()
                if left <= 0 or getattr(self, "closed", False) and not cond():
                    raise AssertionError(f"gave up waiting for {what}; got:\n{self.text()}")
                self.lock.wait(left)

    def drawn(self, *parts: str) -> None:
        self.wait_for(lambda: all(p in self.screen() for p in parts), f"{parts} drawn")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=DEADLINE)
        self.wait_for(lambda: getattr(self, "closed", False), "the terminal to close")
        os.close(self.leader)
        return code


def test_the_live_view_keeps_the_overview_current_and_prints_it_once_on_exit(
        run: Run) -> None:
    run.config()
    round_dir = run.round_dir("goals", 1)
    (round_dir / "quality-claude.finding-F01.md").write_text(GOOD.format(n=1))
    term = Terminal("watch", str(run.root), "--settle", "60")
    try:
        term.wait_for(lambda: "\x1b[?1049h" in term.text(), "the live screen")
        term.drawn("│ goals", "… pending 1", "scope-claude", "nothing yet (awaited)")
        # a bad file: the halt, its cause and its fix appear in place, the event below
        (round_dir / "quality-claude.finding-F02.md").write_text(
            GOOD.format(n=2).replace("severity: high", "severity: urgent"))
        term.drawn("✗ halt 1", "severity_out_of_enum", "fix: ", "latest events:", "HALT")
        # the reviewer that was awaited writes, the bad file is fixed
        (round_dir / "scope-claude.clean.md").write_text(
            "---\nreviewer: scope-claude\nround: 1\nfindings: 0\n---\n")
        (round_dir / "quality-claude.finding-F02.md").write_text(GOOD.format(n=2))
        term.drawn("… pending 0", "scope-claude    clean", "quality-claude  2 findings")
        # a later round completes this one: ok
        run.round_dir("goals", 2)
        term.drawn("✓ ok")
    finally:
        code = term.stop()
    assert code == 0
    after = term.text().split("\x1b[?1049l", 1)[1]
    assert after.count("qrspi-guard status:") == 1  # the final overview, once
    assert after.index("qrspi-guard status:") < after.index("stopped (")  # then the counts
    assert "✓ ok" in after and "\x1b[H" not in after


def test_no_live_on_a_terminal_prints_todays_event_lines(run: Run) -> None:
    run.config()
    run.round_dir("goals", 1)
    (run.root / "reviews/goals/round-01/quality-claude.finding-F01.md").write_text(
        GOOD.format(n=1))
    term = Terminal("watch", str(run.root), "--settle", "60", "--no-live")
    try:
        term.wait_for(lambda: "PENDING" in term.text(), "an event line")
    finally:
        assert term.stop() == 0
    assert "\x1b[?1049h" not in term.text() and "qrspi-guard status:" not in term.text()


def test_off_a_terminal_every_halt_is_named_and_a_quiet_time_halt_says_so(
        run: Run) -> None:
    run.config()
    round_dir = run.round_dir("goals", 1)
    (round_dir / "quality-claude.finding-F01.md").write_text(
        GOOD.format(n=1).replace("severity: high", "severity: urgent")
        .replace("change_type: correctness", "change_type: corectness"))
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    proc = subprocess.Popen([str(SCRIPT), "watch", str(run.root), "--settle", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        assert proc.stdout is not None
        line = ""
        while "HALT" not in line or "expected_tag_no_output" not in line:
            line = proc.stdout.readline().decode()
            assert line, "watch ended without the halt"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=DEADLINE)
    assert "(3 halts)" in line and "+" not in line.split("HALT", 1)[1].split(":")[0]
    for cause in ("severity_out_of_enum", "change_type_out_of_enum", "expected_tag_no_output"):
        assert cause in line, line
    assert "scope-claude: Reviewer scope-claude wrote no per-finding files (quiet time: " \
        "nothing written 0.2s after the last change)" in line
    assert line.count("quiet time") == 1
    assert Path(round_dir).is_dir()


def test_the_live_overview_marks_a_halt_the_quiet_time_brought(run: Run) -> None:
    from qrspi_guard.judge import Judge
    from qrspi_guard.overview.live import LiveView

    run.config()
    round_dir = run.round_dir("goals", 1)
    (round_dir / "quality-claude.finding-F01.md").write_text(GOOD.format(n=1))
    result = Judge.for_path(str(run.root)).round(str(round_dir))
    assert result is not None and result.status == "halt"
    read, write = os.pipe()
    try:
        live = LiveView(write, None, color=False)
        live.update(result, quiet=2.0)
        text = live.overview()
        from qrspi_guard.overview.text import Style, render

        drawn = render(text, Style())
    finally:
        os.close(read)
        os.close(write)
    assert "expected_tag_no_output" in drawn
    assert "(quiet time: nothing written 2s after the last change)" in drawn
