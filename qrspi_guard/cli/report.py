"""`qrspi-guard report`: the run overview as one self-contained HTML file (report.md)."""

from __future__ import annotations

import os
from typing import Any

import click

from qrspi_guard.cli.status import judge_overview, judging_options


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--output", "-o", "output", required=True, metavar="FILE",
              type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the report to FILE, atomically ('-': standard output).")
@click.option("--timestamp", is_flag=True,
              help="Say when the report was written (without it, the same rounds give "
              "the same bytes).")
@judging_options
@click.pass_context
def report(ctx: click.Context, /, paths: tuple[str, ...], output: str, timestamp: bool,
           **kw: Any) -> None:
    """Write the overview of every run under PATH (default: .) as one HTML file: the
    grid linking to each round, every round's findings with verifier scores, the halts
    with their fixes and a convergence chart per step. Exit 0 (2 when it cannot run).

    \b
    Examples:
      qrspi-guard report docs/qrspi/2026-05-17-auth-rework --output review-report.html
      qrspi-guard report . -o - > report.html
    """
    from qrspi_guard.overview.html import render

    ov = judge_overview(ctx, paths, kw)
    stamp = None
    if timestamp:
        from datetime import datetime, timezone

        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    where = os.getcwd() if output == "-" else (os.path.dirname(os.path.abspath(output)))
    html = render(ov, where, stamp)
    if output == "-":
        click.echo(html, nl=False)
        return
    from qrspi_guard.output.files import write_output

    write_output(output, html)
