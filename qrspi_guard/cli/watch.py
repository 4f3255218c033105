"""`qrspi-guard watch`: keep every round's status file current during a run (cli.md)."""

from __future__ import annotations

import os
import sys

import click

from qrspi_guard.cli.options import build_overrides, override_options


@click.command()
@click.argument("root", required=False, default=".", type=click.Path())
@click.option("--settle", type=click.FloatRange(min=0.0), default=2.0, show_default=True,
              metavar="SECONDS",
              help="Quiet time after which a round counts as complete (round-contract §5).")
@click.option("--rescan", type=click.FloatRange(min=0.0), default=30.0, show_default=True,
              metavar="SECONDS",
              help="Reconcile with the disk this often (0: only after lost events).")
@click.option("--polling", is_flag=True,
              help="Poll instead of inotify (network and container file systems).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="One line per status change, as text or JSON.")
@click.option("--events", "events_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Append every status change to FILE as a JSON line.")
@override_options
def watch(root: str, settle: float, rescan: float, polling: bool, fmt: str,
          events_file: str | None, step: str | None, second_reviewer: bool | None,
          verifier: bool | None, require_sidecars: bool, expect: str | None,
          config_file: str | None, protocol: str, round_no: int | None) -> None:
    """Watch ROOT (default: .) and keep every round-NN-guard.json current.

    Prints one line per change of a round's status; stops cleanly on SIGINT or SIGTERM
    (exit 0). Exit 2 when ROOT is missing or disappears.

    \b
    Examples:
      qrspi-guard watch docs/qrspi/2026-05-17-auth-rework
      qrspi-guard watch . --format json --events guard-events.jsonl
      qrspi-guard watch /mnt/share/run --polling --settle 5
    """
    from qrspi_guard.watch.events import WatchdogSource
    from qrspi_guard.watch.loop import Options, Watcher, install_signal_handlers

    overrides = build_overrides(step, second_reviewer, verifier, require_sidecars, expect,
                                config_file, protocol, round_no)

    def out(line: str) -> None:
        click.echo(line)
        sys.stdout.flush()

    def err(line: str) -> None:
        click.echo(line, err=True)

    source = WatchdogSource(os.path.abspath(root), polling=polling)
    watcher = Watcher(root, overrides, source,
                      Options(settle=settle, rescan=rescan, fmt=fmt, events_file=events_file),
                      out=out, err=err)
    install_signal_handlers(watcher)
    sys.exit(watcher.run())
