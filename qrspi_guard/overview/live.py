"""The live overview ``watch`` draws on a terminal: the overview kept current in place
(the terminal's alternate screen), the latest events below it, and on exit the final
overview printed once on the normal screen.

``watch`` hands in each round's result as it publishes it (:meth:`LiveView.update`) and
its lines (:meth:`event`, :meth:`note`). What one turn of the watcher changes (a status
change's event line and the round's new view) is drawn once, at the turn's end
(:meth:`turn`): at once after an idle spell, so a change is on the screen as soon as
its status file is written; drawing is at most every :data:`FRAME` seconds (a later
change is drawn by a timer), so a burst of changes costs one redraw. Each round's view
is made once per result, so a redraw reads no file.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager

from qrspi_guard.contract.generations import Thresholds
from qrspi_guard.engine.results import RoundResult
from qrspi_guard.overview.build import assemble, round_view, run_path
from qrspi_guard.overview.model import Overview, RoundView
from qrspi_guard.overview.text import Style, render
from qrspi_guard.voice import plural

#: the shortest time between two redraws, in seconds
FRAME = 0.05
#: how many of the latest events are shown below the overview
EVENTS = 8
_SGR = re.compile(r"\x1b\[[0-9;]*m")
_ENTER, _LEAVE = "\x1b[?1049h\x1b[?25l", "\x1b[?25h\x1b[?1049l"


def _write(fd: int, text: str) -> None:
    data = text.encode("utf-8", "backslashreplace")
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass


def fit(line: str, width: int) -> str:
    """*line* cut to *width* visible columns (colour dropped where it is cut)."""
    plain = _SGR.sub("", line)
    if len(plain) <= width:
        return line
    return plain[:max(width - 1, 0)] + "…"


class LiveView:
    """The overview on a terminal, redrawn in place."""

    def __init__(self, fd: int = 1, err_fd: int | None = 2, color: bool = True,
                 thresholds: Thresholds | None = None,
                 alive: Callable[[], Collection[str]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.fd = fd
        #: where notes go once the live view ends (None: they were shown only live)
        self.err_fd = err_fd
        self.style = Style(unicode=True, color=color)
        self.thresholds = thresholds
        self.alive = alive
        self.clock = clock
        self.rounds: dict[str, tuple[str, RoundView, int]] = {}  #: key -> (run, view, files)
        self.events: list[str] = []
        self.notes_before: list[str] = []
        self.notes_after: list[str] = []
        self.stopping = False
        self._lock = threading.RLock()
        self._last = 0.0
        self._timer: threading.Timer | None = None
        self._started = False
        self._done = False
        self._held = 0  #: turns under way: a change is drawn when the last one ends
        self._pending = False

    # -- what watch hands in --------------------------------------------------------
    def update(self, result: RoundResult, quiet: float | None = None) -> None:
        view = round_view(result, self.thresholds, quiet)
        with self._lock:
            self.rounds[os.path.abspath(result.ref.round_dir)] = (run_path(result), view,
                                                                  result.files)
        self.changed()

    def event(self, line: str) -> None:
        with self._lock:
            self.events = (self.events + [line])[-EVENTS:]
        self.changed()

    def note(self, line: str) -> None:
        """A line watch says on stderr: shown live, printed on the normal screen at the
        end (those said after the stop come after the final overview)."""
        with self._lock:
            (self.notes_after if self.stopping else self.notes_before).append(line)
            if not self.stopping:
                self.events = (self.events + [line])[-EVENTS:]
        self.changed()

    # -- drawing --------------------------------------------------------------------
    def overview(self) -> Overview:
        with self._lock:
            keep = self.alive() if self.alive is not None else None
            items = [(k, v) for k, v in sorted(self.rounds.items())
                     if keep is None or k in keep]
        views = [(run, view) for _, (run, view, _) in items]
        ov = Overview(assemble(views))
        ov.files = sum(n for _, (_, _, n) in items)
        ov.errors = sum(v.errors for _, v in views)
        ov.warnings = sum(v.warnings for _, v in views)
        return ov

    @contextmanager
    def turn(self) -> Iterator[None]:
        """A turn of the watcher: what changes inside it is drawn once, when it ends."""
        with self._lock:
            self._held += 1
        try:
            yield
        finally:
            with self._lock:
                self._held -= 1
                pending = self._pending and not self._held
                if pending:
                    self._pending = False
            if pending:
                self.changed()

    def changed(self) -> None:
        with self._lock:
            if self._done or self.stopping:
                return
            if self._held:
                self._pending = True
                return
            wait = self._last + FRAME - self.clock()
            if wait <= 0:
                self.draw()
            elif self._timer is None:
                self._timer = threading.Timer(wait, self._due)
                self._timer.daemon = True
                self._timer.start()

    def _due(self) -> None:
        with self._lock:
            self._timer = None
            if not self._done and not self.stopping:
                self.draw()

    def draw(self) -> None:
        with self._lock:
            try:
                cols, rows = os.get_terminal_size(self.fd)
            except OSError:
                cols, rows = 100, 40
            body = render(self.overview(), self.style).rstrip("\n").split("\n")
            tail = ["", "latest events:"] + ["  " + e for e in self.events] if self.events \
                else []
            room = max(rows - len(tail) - 1, 3)
            if len(body) > room:
                more = plural(len(body) - room + 1, "more line", "more lines")
                body = body[:room - 1] + [f"… {more}: enlarge the terminal, or run "
                                          "qrspi-guard status"]
            lines = [fit(x, cols) for x in body + tail]
            frame = "" if self._started else _ENTER
            self._started = True
            frame += "\x1b[H" + "".join(x + "\x1b[K\r\n" for x in lines) + "\x1b[J"
            _write(self.fd, frame)
            self._last = self.clock()

    def finish(self) -> None:
        """Leave the live screen and print the final overview once."""
        with self._lock:
            if self._done:
                return
            self._done = True
            if self._timer is not None:
                self._timer.cancel()
            if self._started:
                _write(self.fd, _LEAVE)
            before, after = self.notes_before, self.notes_after
            if self.err_fd is not None:
                _write(self.err_fd, "".join(x + "\n" for x in before))
            _write(self.fd, render(self.overview(), self.style))
            if self.err_fd is not None:
                _write(self.err_fd, "".join(x + "\n" for x in after))
