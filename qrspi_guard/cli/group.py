"""The click group itself, built only for commands that are not a tool-use hook call.

Its commands are imported lazily from :data:`qrspi_guard.cli.COMMANDS`.
"""

from __future__ import annotations

import importlib

import click

from qrspi_guard import __version__
from qrspi_guard.cli import COMMANDS
from qrspi_guard.cli.conventions import Group


class LazyGroup(Group):
    """The top-level group: a mistyped command names the nearest one (``chek``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name == module_name:
                return None
            raise
        command: click.Command | None = getattr(module, attr)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="qrspi-guard")
def cli() -> None:
    """Keep QRSPI review rounds honest: validate, watch, split, hook, verdict, lockout."""
