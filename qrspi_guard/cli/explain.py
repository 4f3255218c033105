"""`qrspi-guard explain CAUSE` / `explain --list`: the cause catalogue for people."""

from __future__ import annotations

import click

from qrspi_guard.cli.conventions import Choice
from qrspi_guard.cli.options import complete_causes


@click.command()
@click.argument("cause", required=False, shell_complete=complete_causes)
@click.option("--list", "list_all", is_flag=True, help="List every cause with its level.")
@click.option("--format", "fmt", type=Choice(["text", "json", "markdown"]),
              default="text", help="markdown: the table generated into the README.")
def explain(cause: str | None, list_all: bool, fmt: str) -> None:
    """Print what CAUSE means, its level and how to fix it.

    \b
    Examples:
      qrspi-guard explain change_type_out_of_enum
      qrspi-guard explain --list
    """
    from qrspi_guard.contract.causes import CATALOGUE, did_you_mean, markdown_table
    from qrspi_guard.contract.codespans import plain
    from qrspi_guard.errors import UsageError
    from qrspi_guard.parse import jsondoc
    from qrspi_guard.records import asdict
    from qrspi_guard.textsafe import one_line

    if list_all or cause is None:
        if fmt == "json":
            click.echo(jsondoc.dumps([asdict(c) for c in CATALOGUE.values()], indent=2))
        elif fmt == "markdown":
            click.echo(markdown_table(), nl=False)
        else:
            width = max(len(n) for n in CATALOGUE)
            for c in CATALOGUE.values():
                click.echo(f"{c.name:<{width}}  {c.level:<7}  {plain(c.meaning)}")
        return
    entry = CATALOGUE.get(cause)
    if entry is None:
        raise UsageError(f"unknown cause {one_line(cause)!r}{did_you_mean(cause)} (see "
                         "`qrspi-guard explain --list`)")
    off = turn_off(entry.name)
    if fmt == "json":
        click.echo(jsondoc.dumps({**asdict(entry), "default": "on", "turn_off": off}, indent=2))
    elif fmt == "markdown":
        click.echo(f"### `{entry.name}` ({entry.level})\n\n{entry.meaning}\n\n{entry.fix}"
                   f"\n\n{off}")
    else:
        click.echo(f"{entry.name} ({entry.level})\n\n{plain(entry.meaning)}\n\n"
                   f"Fix: {plain(entry.fix)}\n\n{plain(off)}")


def turn_off(name: str) -> str:
    """How to turn cause *name* off (every cause is on by default)."""
    return (f"On by default. Turn it off with `qrspi-guard check --ignore {name}`, or with "
            f"`ignore = [\"{name}\"]` under `[tool.qrspi-guard]` in pyproject.toml (or at "
            "the top of .qrspi-guard.toml); `per-file-ignores` turns it off for some paths "
            "only.")
