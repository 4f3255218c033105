"""Reading a run's config.md from the working tree (never further up than the
artifact directory): a regular file, opened without blocking, size-capped."""

from __future__ import annotations

import os

from qrspi_guard.contract.runconfig import CONFIG_NAME, Overrides, RunConfig
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.rules.config import config_from


def config_path(artifact_dir: str | None, overrides: Overrides) -> str | None:
    """The config.md a run is judged with: `--config`, else the artifact directory's."""
    if overrides.config_file is not None:
        return overrides.config_file
    if artifact_dir is not None:
        return os.path.join(artifact_dir, CONFIG_NAME)
    return None


def read_config_bytes(path: str | None) -> bytes | None:
    """config.md's bytes (a regular file, opened without blocking, size-capped), or None
    when there is none. A FIFO or device named config.md is not read: None, so a run is
    never hung by it (:func:`missing_reason` says why for `config_missing`)."""
    if path is None:
        return None
    data = read_bytes(path)
    return None if isinstance(data, ReadFailure) else data


def missing_reason(path: str | None) -> str:
    """Why config.md at *path* was not read, for the `config_missing` message."""
    if path is not None and os.path.lexists(path) and not os.path.isfile(path):
        return f"{CONFIG_NAME} there is not a regular file"
    return ""


def read_config(artifact_dir: str | None, overrides: Overrides) -> RunConfig:
    """Read the run's working-tree config.md (never looking further up) and apply the
    overrides."""
    path = config_path(artifact_dir, overrides)
    data = read_config_bytes(path)
    why = missing_reason(path) if data is None else ""
    return config_from(path, artifact_dir, data, overrides, why=why)
