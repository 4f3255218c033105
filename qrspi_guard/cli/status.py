"""`qrspi-guard status`: the run overview (report.md) of every run under PATH.

A view, not the gate: it exits 0 whatever the rounds say (2 when it cannot run). Rounds
are judged by the one judge, as ``check`` judges them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from qrspi_guard.cli.conventions import (
    Choice,
    color_options,
    colored,
    isatty,
    no_rounds_warning,
    tolerant_stdout,
)
from qrspi_guard.cli.options import (
    build_overrides,
    given,
    override_options,
    selection_options,
    settings_file_option,
)


def judging_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``check``'s config overrides, rule selection, ``--isolated`` and ``--settings``."""
    f = settings_file_option(f)
    f = click.option("--isolated", is_flag=True, help="Read no project configuration file.")(f)
    return override_options(selection_options(f))


def judge_overview(ctx: click.Context, paths: tuple[str, ...], kw: dict[str, Any]) -> Any:
    """The :class:`~qrspi_guard.overview.model.Overview` of *paths* under the judging
    options in *kw* (popped from it); no round under *paths* is said as ``check`` says
    it (the command still exits 0)."""
    from qrspi_guard.overview.build import judged
    from qrspi_guard.settings import CommandLine

    protocol = kw.pop("protocol")
    cli = CommandLine(select=kw.pop("select") or None, extend_select=kw.pop("extend_select"),
                      ignore=kw.pop("ignore"),
                      protocol=protocol if given(ctx, "protocol") else None,
                      isolated=kw.pop("isolated"), settings_file=kw.pop("settings_file"))
    base = build_overrides(kw.pop("step"), kw.pop("second_reviewer"), kw.pop("verifier"),
                           kw.pop("require_sidecars"), kw.pop("expect"), kw.pop("config_file"),
                           protocol, kw.pop("round_no"))
    ov = judged(paths, cli, base)
    if not (ov.runs or ov.files or ov.other_halts):  # as check says it
        no_rounds_warning(paths)
    return ov


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=Choice(["text", "json", "markdown"]),
              default="text", show_default=True,
              help="text for people, json as data, markdown (GitHub-flavoured).")
@click.option("--ascii", "ascii_only", is_flag=True,
              help="Draw with ASCII characters only (the default off a terminal).")
@color_options
@judging_options
@click.pass_context
def status(ctx: click.Context, /, paths: tuple[str, ...], fmt: str, ascii_only: bool,
           color_choice: str, no_color: bool, **kw: Any) -> None:
    """Show where every run under PATH (default: .) is: the grid of steps and rounds,
    each step's current round reviewer by reviewer, every halt with its fix, and the
    findings per round. Exit 0 (2 when it cannot run).

    \b
    Examples:
      qrspi-guard status docs/qrspi/2026-05-17-auth-rework
      qrspi-guard status . --format json
      qrspi-guard status . --ascii > overview.txt
    """
    tolerant_stdout()
    ov = judge_overview(ctx, paths, kw)
    if fmt == "json":
        from qrspi_guard.overview.model import to_dict
        from qrspi_guard.parse import jsondoc

        click.echo(jsondoc.dumps(to_dict(ov), indent=2, ensure_ascii=True))
        return
    if fmt == "markdown":
        from qrspi_guard.overview.markdown import render as markdown

        click.echo(markdown(ov), nl=False)
        return
    from qrspi_guard.overview.text import Style, render

    color = colored(color_choice, no_color)
    click.echo(render(ov, Style(unicode=isatty(sys.stdout) and not ascii_only, color=color)),
               nl=False, color=color)
