"""`qrspi-guard watch`: keep every round's status file current during a run (cli.md)."""

from __future__ import annotations

import math
import os
import signal
import sys
from typing import TYPE_CHECKING

import click

from qrspi_guard.cli.conventions import Choice
from qrspi_guard.cli.options import (
    build_overrides,
    given,
    override_options,
    selection_options,
    settings_file_option,
)
from qrspi_guard.voice import warning_line

if TYPE_CHECKING:
    from qrspi_guard.overview.live import LiveView
    from qrspi_guard.watch.loop import Watcher

#: the largest number of seconds any watch option accepts (about 11.6 days)
MAX_SECONDS = 1_000_000.0

if TYPE_CHECKING:  # click >= 8.2's ParamType is generic; click 8.1's is not subscriptable
    _FloatParam = click.ParamType[float]
else:
    _FloatParam = click.ParamType


class Seconds(_FloatParam):
    """A finite number of seconds, 0 to MAX_SECONDS: never nan, inf or negative (nan
    slipped through a FloatRange and made the loop spin at 100 % CPU)."""

    name = "seconds"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        if isinstance(value, float):
            number = value
        else:
            try:
                number = float(str(value).strip())
            except ValueError:
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(number) or not 0.0 <= number <= MAX_SECONDS:
            self.fail(f"{value!r} is not a number of seconds from 0 to {MAX_SECONDS:,.0f}",
                      param, ctx)
        return number


SECONDS = Seconds()


@click.command()
@click.argument("root", required=False, default=".", type=click.Path())
@click.option("--settle", type=SECONDS, default=2.0, show_default=True, metavar="SECONDS",
              help="Quiet time after which a round counts as complete (round-contract §5).")
@click.option("--rescan", type=SECONDS, default=30.0, show_default=True, metavar="SECONDS",
              help="Reconcile with the disk this often (0: only after lost events).")
@click.option("--polling", is_flag=True,
              help="Poll instead of inotify (network and container file systems).")
@click.option("--format", "fmt", type=Choice(["text", "json"]), default="text",
              show_default=True, help="One line per status change, as text or JSON.")
@click.option("--events", "events_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Append every status change to FILE as a JSON line.")
@click.option("--no-live", is_flag=True,
              help="On a terminal too, print event lines instead of the live overview.")
@override_options
@selection_options
@click.option("--isolated", is_flag=True, help="Read no project configuration file.")
@settings_file_option
@click.pass_context
def watch(ctx: click.Context, root: str, settle: float, rescan: float, polling: bool,
          fmt: str, events_file: str | None, no_live: bool, step: str | None,
          second_reviewer: bool | None,
          verifier: bool | None, require_sidecars: bool, expect: str | None,
          config_file: str | None, protocol: str, round_no: int | None,
          select: tuple[str, ...], extend_select: tuple[str, ...], ignore: tuple[str, ...],
          isolated: bool, settings_file: str | None) -> None:
    """Watch ROOT (default: .) and keep every round-NN-guard.json current.

    Prints one line per change of a round's status; on a terminal (text format) it
    keeps the run overview current in place instead, the latest events below it, and
    prints the final overview on exit (--no-live: the lines). Stops cleanly on SIGINT
    or SIGTERM (exit 0). Exit 2 when ROOT is missing or disappears.

    \b
    Examples:
      qrspi-guard watch docs/qrspi/2026-05-17-auth-rework
      qrspi-guard watch . --format json --events guard-events.jsonl
      qrspi-guard watch /mnt/share/run --polling --settle 5
    """
    from qrspi_guard.judge import Judge
    from qrspi_guard.settings import CommandLine
    from qrspi_guard.watch.events import WatchdogSource
    from qrspi_guard.watch.loop import Options, Watcher
    from qrspi_guard.watch.publish import LineSink

    # the project configuration file found from ROOT upward (selection, protocol,
    # thresholds, extra tags) applies to watch as to check; the command line wins
    judge = Judge.for_path(root, CommandLine(
        select=select or None, extend_select=extend_select, ignore=ignore,
        protocol=protocol if given(ctx, "protocol") else None, isolated=isolated,
        settings_file=settings_file), build_overrides(
        step, second_reviewer, verifier, require_sidecars, expect, config_file, protocol,
        round_no))
    # Straight to the descriptors, unbuffered: a closed, full or broken stdout is said
    # once on stderr and watch goes on (cli.md); nothing is left in a buffer for the
    # interpreter's final flush to fail on, so SIGTERM still exits 0.
    _occupy_closed_std_fds()
    stdout = LineSink("standard output", _stderr_line, fd=1)
    source = WatchdogSource(os.path.abspath(root), polling=polling)
    live = None
    if fmt == "text" and not no_live and os.isatty(1):
        from qrspi_guard.cli.conventions import use_color
        from qrspi_guard.overview.live import LiveView

        live = LiveView(1, 2 if os.isatty(2) else None,
                        use_color("auto", os.environ, True), judge.overrides.thresholds)
    watcher = Watcher(root, judge.overrides, source,
                      Options(settle=settle, rescan=rescan, fmt=fmt, events_file=events_file),
                      out=stdout.write if live is None else live.event,
                      err=live.note if live is not None and live.err_fd else _stderr_line,
                      judge=judge, on_result=live.update if live is not None else None,
                      turn=live.turn if live is not None else None)
    if live is not None:
        live.alive = watcher.rounds.keys
    install_signal_handlers(watcher, live)
    code = watcher.run()
    if live is not None:
        live.finish()
    sys.exit(code)


def _occupy_closed_std_fds() -> None:
    """A closed stdout or stderr (``>&-``) gets /dev/null, so no file watch opens later
    (the events file, a status temp file) can take descriptor 1 or 2 and receive status
    lines; writes to /dev/null succeed, so a closed stdout is said at start instead."""
    closed = []
    for fd in (1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        try:
            null = os.open(os.devnull, os.O_WRONLY)
        except OSError:  # pragma: no cover - no /dev/null
            return
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        # Python set sys.stdout (or stderr) to None: give it the descriptor back, so the
        # final flush in cli.main finds a stream that works.
        stream = open(fd, "w", closefd=False)  # lives as long as the process
        if fd == 1:
            sys.stdout = stream
        else:
            sys.stderr = stream
    if 1 in closed:
        _stderr_line(warning_line("watch", "standard output is closed; status lines are "
                                  "dropped (the status files and --events still get them)"))


def _stderr_line(line: str) -> None:
    """One line to stderr, unbuffered; a failing stderr is ignored (nowhere to say it)."""
    data = (line + "\n").encode("utf-8", "backslashreplace")
    try:
        while data:
            data = data[os.write(2, data):]
    except OSError:
        pass


def install_signal_handlers(watcher: Watcher, live: LiveView | None = None) -> None:
    """SIGINT and SIGTERM stop the loop cleanly; SIGIO (a lease break) is ignored."""

    def handler(signum: int, frame: object) -> None:
        if live is not None:
            live.stopping = True  # what watch says from now on follows the final overview
        watcher.on_signal()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    if hasattr(signal, "SIGIO"):
        signal.signal(signal.SIGIO, signal.SIG_IGN)
