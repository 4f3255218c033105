"""The one judge: one resolved set of settings, one way to judge a round.

Every command that reaches a verdict on a round (``check``, ``watch``, ``hook``, the loop
commands, the overview) asks a :class:`Judge`, so the same file gets the same verdict
whoever asks. A judge is built from the settings found from the judged path upward to
its repository root (cli.md "Where configuration is found"), or from ``--settings``;
the rule selection is applied inside it, and a round's status is decided once, after it.
No printing, no exits, no click.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.results import CheckResult, RoundResult
from qrspi_guard.settings import CommandLine, Settings, apply_selection, resolve

__all__ = ["Judge"]


class Judge:
    """Judges rounds under one resolved :class:`~qrspi_guard.settings.Settings`."""

    def __init__(self, settings: Settings, base: Overrides | None = None) -> None:
        self.settings = settings
        #: the command line's config overrides with the project file's merged in
        self.overrides = settings.overrides(base or Overrides())

    @classmethod
    def for_path(cls, path: str, cli: CommandLine | None = None,
                 base: Overrides | None = None) -> Judge:
        """The judge for *path*: the project configuration found from *path* upward.
        Raises :class:`~qrspi_guard.errors.ConfigFileError` like
        :func:`~qrspi_guard.settings.resolve`."""
        start = path if os.path.isdir(path) else (os.path.dirname(path) or ".")
        return cls(resolve(cli, start=start), base)

    def round(self, round_dir: str) -> RoundResult | None:
        """The verdict on one ``round-NN`` directory (None when *round_dir* is not one),
        the rule selection applied and the status decided after it."""
        from qrspi_guard.engine.check import check_round_dir

        result = check_round_dir(round_dir, self.overrides)
        return None if result is None else apply_selection(result, self.settings.selection)

    def paths(self, paths: Iterable[str]) -> CheckResult:
        """Every round at or below *paths*, as ``check`` judges them."""
        from qrspi_guard.engine.check import check_paths

        return apply_selection(check_paths(list(paths), self.overrides),
                               self.settings.selection)
