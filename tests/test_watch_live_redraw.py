"""The live overview redraws within the status file's budget (report.md): what one turn
of the watcher changes (a round's new verdict and its event line) is drawn once, at the
end of the turn, at once after an idle spell, never a frame later by a timer. Speed is
measured in benchmarks/watch_latency.py --live; this pins the scheduling."""

from __future__ import annotations

import os
from pathlib import Path

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.judge import Judge
from qrspi_guard.overview.live import FRAME, LiveView
from tests.support import Run


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _frames(fd: int) -> list[bytes]:
    os.set_blocking(fd, False)
    try:
        data = os.read(fd, 1 << 20)
    except BlockingIOError:
        return []
    return [f for f in data.split(b"\x1b[H")[1:]]


def _halted_round(tmp_path: Path):  # type: ignore[no-untyped-def]
    run = Run(tmp_path / "art").config()
    run.finding("goals", 1, "quality-claude", change_type="corectness")
    run.clean("goals", 1, "scope-claude")
    result = Judge.using(Overrides()).round(str(run.root / "reviews/goals/round-01"))
    assert result is not None and result.status == "halt"
    return result


def test_a_turn_s_verdict_and_event_line_are_drawn_in_one_frame_when_it_ends(
        tmp_path: Path) -> None:
    result = _halted_round(tmp_path)
    r, w = os.pipe()
    clock = Clock()
    live = LiveView(w, None, color=False, clock=clock)
    live.draw()  # the first frame, then an idle spell
    _frames(r)
    clock.now += 10 * FRAME
    with live.turn():
        live.event("HALT goals/round-01 change_type_out_of_enum")  # the status change
        live.update(result)  # the round's new view
        assert _frames(r) == []  # nothing half-drawn inside the turn
    frames = _frames(r)
    assert len(frames) == 1  # one redraw, at once: no timer left to draw it later
    assert b"HALT goals/round-01" in frames[0] and b"change_type_out_of_enum" in frames[0]
    assert b"halts (1)" in frames[0]
    assert live._timer is None
    os.close(r)
    os.close(w)


def test_a_burst_of_turns_is_still_drawn_at_most_once_a_frame(tmp_path: Path) -> None:
    result = _halted_round(tmp_path)
    r, w = os.pipe()
    clock = Clock()
    live = LiveView(w, None, color=False, clock=clock)
    live.draw()
    _frames(r)
    clock.now += 10 * FRAME
    for i in range(5):  # five turns within one frame
        with live.turn():
            live.event(f"event {i}")
            live.update(result)
        clock.now += FRAME / 10
    assert len(_frames(r)) == 1  # the first at once; the rest wait for the timer
    assert live._timer is not None
    live.finish()
    os.close(r)
    os.close(w)
