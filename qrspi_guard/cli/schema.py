"""`qrspi-guard schema`: JSON Schemas of a finding, a clean sentinel and a sidecar."""

from __future__ import annotations

import click

from qrspi_guard.cli.conventions import Choice
from qrspi_guard.contract.schema import SCHEMA_KINDS


@click.command()
@click.option("--kind", type=Choice(["all", *SCHEMA_KINDS]), default="all",
              show_default=True)
def schema(kind: str) -> None:
    """Print JSON Schema (2020-12) generated from the guard's pydantic models.

    \b
    Example:
      qrspi-guard schema --kind finding > finding.schema.json
    """
    from qrspi_guard.contract.schema import json_schemas
    from qrspi_guard.parse import jsondoc

    schemas = json_schemas()
    click.echo(jsondoc.dumps(schemas if kind == "all" else schemas[kind], indent=2))
