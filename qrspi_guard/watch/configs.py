"""The runs' configurations during a watch: each run's working-tree config.md (re-read
when it changes), and config.md as of a round's commit anchor (generations.md §7),
fetched once per (run, SHA) and never stale."""

from __future__ import annotations

import os
from collections.abc import Iterable

from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.contract.runconfig import CONFIG_NAME, Overrides, RunConfig
from qrspi_guard.engine.history import ConfigHistory
from qrspi_guard.engine.inputs import read_anchor
from qrspi_guard.engine.runconfig import config_path, read_config
from qrspi_guard.engine.sides import SideFiles
from qrspi_guard.parse.reader import ReadFailure
from qrspi_guard.rules.bookkeeping import commit_anchor
from qrspi_guard.rules.config import config_from


def run_key(ref: RoundRef) -> str | None:
    """The run a round belongs to: its artifact directory (absolute), if it has one."""
    return os.path.abspath(ref.artifact_dir) if ref.artifact_dir else None


class RunConfigs:
    """Every watched run's configuration, by run key."""

    def __init__(self, overrides: Overrides) -> None:
        self.overrides = overrides
        self.runs: dict[str | None, RunConfig] = {}
        #: config.md path -> the run keys it configures
        self.paths: dict[str, set[str | None]] = {}
        self.history = ConfigHistory()
        self.anchored: dict[tuple[str | None, str], RunConfig] = {}

    def path_of(self, key: str | None) -> str | None:
        """The config.md path a run is judged with (``--config``, else the run's own)."""
        if self.overrides.config_file:
            return os.path.abspath(self.overrides.config_file)
        return os.path.join(key, CONFIG_NAME) if key else None

    def track(self, ref: RoundRef) -> str | None:
        """Read the run's config.md the first time one of its rounds is seen; the path
        newly watched for it, else None."""
        key = run_key(ref)
        if key in self.runs:
            return None
        self.runs[key] = read_config(ref.artifact_dir, self.overrides)
        path = self.path_of(key)
        if path is not None:
            self.paths.setdefault(path, set()).add(key)
        return path

    def reread(self, path: str) -> Iterable[str | None]:
        """Read config.md at *path* again; the run keys it configures."""
        keys = self.paths.get(path, set())
        for key in keys:
            self.runs[key] = read_config(key, self.overrides)
        return keys

    def of(self, ref: RoundRef, key: str | None, sides: SideFiles) -> RunConfig:
        """The round's configuration: config.md as of its commit anchor when git has it,
        else the run's working-tree config.md (generations.md §7)."""
        worktree = self.runs[key]
        if self.overrides.config_file is not None or ref.artifact_dir is None:
            return worktree
        data = read_anchor(ref, sides)
        if data is None or isinstance(data, ReadFailure):
            return worktree
        sha, _ = commit_anchor(data, per_task=ref.is_task)
        if sha is None:
            return worktree
        cached = self.anchored.get((key, sha))
        if cached is None:
            path = config_path(ref.artifact_dir, self.overrides)
            assert path is not None
            blob = self.history.blobs([(path, sha)]).get((path, sha))
            cached = worktree if blob is None else config_from(
                path, ref.artifact_dir, blob, self.overrides, sha)
            self.anchored[(key, sha)] = cached
        return cached
