"""The one run-config type: each round's config.md, the working tree's or as of the
round's commit anchor (generations.md §7), parsed once per (run, source). ``check``
asks for a whole plan's rounds at once (:meth:`RunConfigs.for_rounds`: one git call);
``watch`` and :meth:`qrspi_guard.judge.Judge.judge` one round at a time
(:meth:`RunConfigs.of`), ``watch`` forgetting a run whose config.md changed. The
working tree's config.md is read never further up than the artifact directory: a
regular file, opened without blocking, size-capped."""

from __future__ import annotations

import os

from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.contract.runconfig import CONFIG_NAME, Overrides, RunConfig
from qrspi_guard.engine.history import ConfigHistory
from qrspi_guard.engine.results import Keep, kept
from qrspi_guard.engine.roundinputs import read_anchor
from qrspi_guard.engine.sides import SideFiles
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.rules import bookkeeping
from qrspi_guard.rules.config import config_from
from qrspi_guard.rules.consequences import roots_only


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
    cfg = config_from(path, artifact_dir, data, overrides, why=why)
    cfg.diagnostics = roots_only(cfg.diagnostics)
    return cfg


class RunConfigs:
    """Each round's configuration: config.md as of the round's commit anchor when git
    has it (generations.md §7), else the run's working-tree config.md; parsed once per
    (run, source), with *keep* (the rule selection) applied to its diagnostics."""

    def __init__(self, overrides: Overrides, sides: SideFiles | None = None,
                 keep: Keep | None = None) -> None:
        self.overrides = overrides
        self.sides = sides or SideFiles()
        self.keep = keep
        self._real: dict[str, str] = {}
        self._worktree: dict[str | None, RunConfig] = {}
        self._anchored: dict[tuple[str | None, str], RunConfig] = {}
        self._history: ConfigHistory | None = None

    def _key(self, artifact_dir: str | None) -> str | None:
        if artifact_dir is None:
            return None
        got = self._real.get(artifact_dir)
        if got is None:
            got = self._real[artifact_dir] = os.path.realpath(artifact_dir)
        return got

    def for_rounds(self, refs: list[RoundRef]) -> tuple[list[RunConfig], frozenset[int]]:
        """(each round's RunConfig, the indices of the rounds that report their run's
        diagnostics): config diagnostics are reported once per distinct config text, by
        the first round judged with it."""
        commits = self._commits(refs)
        blobs: dict[tuple[str, str], bytes] = {}
        if commits:
            wanted = {(path, sha) for path, sha in commits.values()}
            blobs = ConfigHistory().blobs(sorted(wanted))
        parsed: dict[tuple[str | None, str], RunConfig] = {}
        texts: dict[tuple[str | None, bytes | None], bool] = {}
        worktree: dict[str | None, bytes | None] = {}
        runs: list[RunConfig] = []
        first_use: set[int] = set()
        for i, ref in enumerate(refs):
            key = self._key(ref.artifact_dir)
            path = config_path(ref.artifact_dir, self.overrides)
            source, data = "worktree", None
            commit = commits.get(i)
            if commit is not None and commit in blobs:
                source, data = commit[1], blobs[commit]
            else:
                if key not in worktree:
                    worktree[key] = read_config_bytes(path)
                data = worktree[key]
            cfg = parsed.get((key, source))
            if cfg is None:
                why = missing_reason(path) if data is None else ""
                cfg = parsed[(key, source)] = self._parse(path, ref.artifact_dir, data,
                                                          source, why)
                if (key, data) not in texts:
                    texts[(key, data)] = True
                    first_use.add(i)
            runs.append(cfg)
        return runs, frozenset(first_use)

    def _commits(self, refs: list[RoundRef]) -> dict[int, tuple[str, str]]:
        """{round index: (config.md path, SHA)} for rounds with a well-formed commit anchor
        in a run whose config is not overridden."""
        if self.overrides.config_file is not None:
            return {}
        out: dict[int, tuple[str, str]] = {}
        for i, ref in enumerate(refs):
            if ref.artifact_dir is None:
                continue
            data = read_anchor(ref, self.sides)
            if data is None or isinstance(data, ReadFailure):
                continue
            sha, _ = bookkeeping.commit_anchor(data, per_task=ref.is_task)
            if sha is not None:
                path = config_path(ref.artifact_dir, self.overrides)
                assert path is not None
                out[i] = (path, sha)
        return out

    def _parse(self, path: str | None, artifact_dir: str | None, data: bytes | None,
               source: str, why: str = "") -> RunConfig:
        cfg = config_from(path, artifact_dir, data, self.overrides, source, why=why)
        if cfg.diagnostics:
            cfg.diagnostics = roots_only(kept(cfg.diagnostics, self.keep))
        return cfg

    # -- one round at a time, kept across calls (watch, Judge.judge) ---------------------
    def of(self, ref: RoundRef) -> RunConfig:
        """The round's configuration: config.md as of its commit anchor when git has
        it, else the run's working-tree config.md (read once, until :meth:`forget`)."""
        key = self._key(ref.artifact_dir)
        commit = self._commits([ref]).get(0)
        if commit is not None:
            cfg = self._anchored.get((key, commit[1]))
            if cfg is None:
                if self._history is None:
                    self._history = ConfigHistory()
                blob = self._history.blobs([commit]).get(commit)
                if blob is not None:
                    cfg = self._anchored[(key, commit[1])] = self._parse(
                        commit[0], ref.artifact_dir, blob, commit[1])
            if cfg is not None:
                return cfg
        cfg = self._worktree.get(key)
        if cfg is None:
            path = config_path(ref.artifact_dir, self.overrides)
            data = read_config_bytes(path)
            cfg = self._worktree[key] = self._parse(
                path, ref.artifact_dir, data, "worktree",
                missing_reason(path) if data is None else "")
        return cfg

    def forget(self, artifact_dir: str | None) -> None:
        """The run's working-tree config.md changed: read it again on next use (the
        ones as of a commit never change)."""
        self._worktree.pop(self._key(artifact_dir), None)
