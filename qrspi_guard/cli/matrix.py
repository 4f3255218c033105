"""`qrspi-guard matrix`: the expected-reviewer matrix."""

from __future__ import annotations

import click

from qrspi_guard.cli.conventions import Choice, shown
from qrspi_guard.voice import did_you_mean


@click.command()
@click.option("--step", metavar="STEP", help="One step directory (e.g. design, integration).")
@click.option("--second-reviewer/--no-second-reviewer", default=None,
              help="One column (default: both).")
@click.option("--format", "fmt", type=Choice(["text", "json"]), default="text")
def matrix(step: str | None, second_reviewer: bool | None, fmt: str) -> None:
    """Print which tags each step's rounds must hear from.

    \b
    Examples:
      qrspi-guard matrix
      qrspi-guard matrix --step plan --no-second-reviewer --format json
    """
    from qrspi_guard.contract.matrix import ROWS, STEP_ROWS, row_tags, rows_for
    from qrspi_guard.parse import jsondoc

    steps = [step] if step else list(STEP_ROWS)
    if step and rows_for(step) is None:
        hint = did_you_mean(step, {**STEP_ROWS, **ROWS})
        raise click.BadParameter(f"no matrix row for step {shown(step)}{hint} (steps: "
                                 f"{', '.join(STEP_ROWS)}; rows: {', '.join(ROWS)})",
                                 param_hint="--step")
    columns = [second_reviewer] if second_reviewer is not None else [True, False]
    rows = []
    for s in steps:
        for row in rows_for(s) or ():
            entry: dict[str, str | list[str]] = {"step": s, "row": row}
            for col in columns:
                entry[f"second_reviewer_{str(col).lower()}"] = list(row_tags(row, col))
            rows.append(entry)
    if fmt == "json":
        click.echo(jsondoc.dumps(rows, indent=2))
        return
    for entry in rows:
        label = str(entry["step"])
        if entry["row"] != entry["step"]:
            label += f" ({entry['row']})"
        for col in columns:
            tags = entry[f"second_reviewer_{str(col).lower()}"]
            click.echo(f"{label:<28} second_reviewer={str(col).lower():<5}  {', '.join(tags)}")
