"""Which config.md files a watch follows: each run's, re-read when it changes. The
configurations themselves are the engine's one run-config type
(:class:`qrspi_guard.engine.configs.RunConfigs`: the working tree's, or as of a round's
commit anchor, generations.md §7); this adds the paths to watch and the runs each
configures."""

from __future__ import annotations

import os
from collections.abc import Iterable

from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.contract.runconfig import CONFIG_NAME, Overrides, RunConfig
from qrspi_guard.engine.configs import RunConfigs
from qrspi_guard.engine.sides import SideFiles


def run_key(ref: RoundRef) -> str | None:
    """The run a round belongs to: its artifact directory (absolute), if it has one."""
    return os.path.abspath(ref.artifact_dir) if ref.artifact_dir else None


class WatchedConfigs:
    """Every watched run's configuration, and the config.md paths to follow."""

    def __init__(self, overrides: Overrides, sides: SideFiles | None = None) -> None:
        self.overrides = overrides
        self.configs = RunConfigs(overrides, sides)
        #: config.md path -> the run keys it configures
        self.paths: dict[str, set[str | None]] = {}
        self._known: set[str | None] = set()

    def path_of(self, key: str | None) -> str | None:
        """The config.md path a run is judged with (``--config``, else the run's own)."""
        if self.overrides.config_file:
            return os.path.abspath(self.overrides.config_file)
        return os.path.join(key, CONFIG_NAME) if key else None

    def track(self, ref: RoundRef) -> str | None:
        """Note the run the first time one of its rounds is seen; the config.md path
        newly watched for it, else None."""
        key = run_key(ref)
        if key in self._known:
            return None
        self._known.add(key)
        path = self.path_of(key)
        if path is not None:
            self.paths.setdefault(path, set()).add(key)
        return path

    def reread(self, path: str) -> Iterable[str | None]:
        """config.md at *path* changed: its runs read it again on next use; the run keys
        it configures."""
        keys = self.paths.get(path, set())
        for key in keys:
            self.configs.forget(key)
        return keys

    def of(self, ref: RoundRef) -> RunConfig:
        """The round's configuration (:meth:`RunConfigs.of`)."""
        return self.configs.of(ref)
