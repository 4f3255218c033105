"""The one judge: one resolved set of settings, one way to judge a round.

Every command that reaches a verdict on a round (``check``, ``watch``, ``hook``, the loop
commands, the overview) asks a :class:`Judge`, so the same file gets the same verdict
whoever asks. A judge is built from the settings found from the judged path upward to
its repository root (cli.md "Where configuration is found"), or from ``--settings``.
:meth:`Judge.judge` is the one function a round's verdict comes from: one entry loop
(:func:`qrspi_guard.engine.entries.read_round`), the run's config.md (the working
tree's, or as of the round's commit) looked up inside it, the rule selection applied
where each diagnostic is made, and the status decided once, after it. ``watch`` gives
it the verdicts it keeps per settled file (a cache keyed by ``lstat``), the hook the
content about to be written (an overlay). No printing, no exits, no click.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from qrspi_guard.contract.runconfig import Overrides, RunConfig
from qrspi_guard.engine.results import CheckResult, RoundResult
from qrspi_guard.records import replace

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic
    from qrspi_guard.contract.layout import RoundRef
    from qrspi_guard.engine.entries import Context, EntryCache
    from qrspi_guard.settings import CommandLine, ConfigFile, Selection, Settings

__all__ = ["Judge", "judges_for", "merge", "start_of"]


def start_of(path: str) -> str:
    """Where the project configuration of *path* is looked for from: the directory
    itself, or a file's directory (a path that does not exist yet: its parent)."""
    return path if os.path.isdir(path) else (os.path.dirname(path) or ".")


class Judge:
    """Judges rounds under one resolved :class:`~qrspi_guard.settings.Settings`."""

    def __init__(self, settings: Settings | None, base: Overrides | None = None) -> None:
        """*settings* None: nothing configured (no file, nothing on the command line),
        resolved only when asked for (:attr:`settings`)."""
        self._settings = settings
        base = base or Overrides()
        #: the command line's config overrides with the project file's merged in
        self.overrides = (settings.overrides(base) if settings is not None else
                          replace(base, protocol="auto", thresholds=None, extra_expected=()))
        #: which causes are reported, and where (None: every cause, everywhere)
        self.keep: Selection | None = None
        if settings is not None and not settings.selection.everything:
            self.keep = settings.selection

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from qrspi_guard.settings import resolve

            self._settings = resolve(config=None)
        return self._settings

    @property
    def selection(self) -> Selection:
        """Which causes are reported, and where."""
        return self.settings.selection

    @classmethod
    def for_path(cls, path: str, cli: CommandLine | None = None,
                 base: Overrides | None = None) -> Judge:
        """The judge for *path*: the project configuration found from *path* upward
        (or ``cli.settings_file``). Raises :class:`~qrspi_guard.errors.ConfigFileError`
        like :func:`~qrspi_guard.settings.resolve`. Nothing configured costs nothing:
        the settings are then resolved only when asked for."""
        start = start_of(path)
        if cli is None or cli.says_nothing:
            from qrspi_guard.settings.locate import present

            if not present(start):  # nothing configured: nothing to read or parse
                return cls(None, base)
        from qrspi_guard.settings import resolve
        from qrspi_guard.settings.configfile import config_for

        cfg = config_for(cli, start)
        if cfg is None and (cli is None or cli.says_nothing):
            return cls(None, base)

        return cls(resolve(cli, start=start, config=cfg), base)

    @classmethod
    def using(cls, overrides: Overrides, selection: Selection | None = None) -> Judge:
        """A judge over overrides already resolved (embedders and tests that build a
        :class:`~qrspi_guard.watch.loop.Watcher` by hand)."""
        from qrspi_guard.settings import DEFAULT, Settings

        judge = cls(Settings(config=None, protocol=overrides.protocol,
                             selection=selection or DEFAULT))
        judge.overrides = overrides
        return judge

    # -- the one function ---------------------------------------------------------------
    def judge(self, ref: RoundRef, *, run: RunConfig | None = None,
              ctx: Context | None = None, complete: bool = True,
              overlay: Mapping[str, bytes | None] | None = None,
              cache: EntryCache | None = None, ignore_temp: bool = False,
              read_config: bool = True) -> RoundResult:
        """The verdict on round *ref*.

        *run*: the run's configuration when the caller keeps it (``watch`` re-reads it
        on change), else looked up here: config.md as of the round's commit anchor, else
        the working tree's; with *read_config* False none is read (the hook: no rule it
        reports depends on it). *complete* False: the per-file and tag rules only (a
        round not settled yet). *overlay*: bytes standing in for some entries (None:
        as if absent). *cache*: entries' verdicts kept since the last event.
        """
        from qrspi_guard.engine.entries import Context
        from qrspi_guard.engine.roundverdict import evaluate_round

        ctx = ctx or Context.for_check(self.overrides)
        if run is None:
            if read_config:
                from qrspi_guard.engine.configs import RunConfigs

                run = RunConfigs(self.overrides, ctx.sides, self.keep).of(ref)
            else:
                run = RunConfig(None)
        return evaluate_round(ref, run, self.overrides, complete, ignore_temp, ctx,
                              overlay=overlay, cache=cache, keep=self.keep)

    def round(self, round_dir: str, *, overlay: Mapping[str, bytes | None] | None = None,
              complete: bool = True, read_config: bool = True) -> RoundResult | None:
        """The verdict on one ``round-NN`` (or ``round-NN-<suffix>``) directory (None
        when *round_dir* is not one), as ``check`` judges it."""
        from qrspi_guard.engine.discover import round_of_dir

        ref = round_of_dir(round_dir, self.overrides.step)
        if ref is None:
            return None
        return self.judge(ref, overlay=overlay, complete=complete, read_config=read_config)

    def files(self, round_dir: str, *, overlay: Mapping[str, bytes | None] | None = None
              ) -> list[Diagnostic] | None:
        """What :meth:`round` says, for a round not complete yet, from the per-file and
        tag rules (the file scope), without reading the round's inputs or config.md:
        the hook's judgement, which reports only what is said about the files it is
        asked about. None when *round_dir* is not a round directory."""
        from qrspi_guard.engine.discover import round_of_dir
        from qrspi_guard.engine.entries import Context, file_scope

        ref = round_of_dir(round_dir, self.overrides.step)
        if ref is None:
            return None
        return file_scope(ref, Context(self.overrides), overlay, self.keep)

    def paths(self, paths: Iterable[str]) -> CheckResult:
        """Every round at or below *paths*, as ``check`` judges them."""
        from qrspi_guard.engine.check import check_paths

        return check_paths(list(paths), self.overrides, self.keep)

    def buffer(self, path: str, data: bytes) -> CheckResult:
        """``check --stdin-filename PATH -``: *data* judged as the file at *path*."""
        from qrspi_guard.engine.buffer import check_buffer

        return check_buffer(path, data, self.overrides, self.keep)


def judges_for(paths: Sequence[str], cli: CommandLine | None = None,
               base: Overrides | None = None) -> list[tuple[Judge, list[str]]]:
    """One judge per project configuration that *paths* fall under (each PATH's found
    from it upward, cli.md), in the order first met, each with its paths. With no
    paths, one judge for ``.`` and an empty list (``check`` judges ``.``). With
    ``--settings`` or ``--isolated``, one judge for all."""
    from qrspi_guard.settings import CommandLine, config_for, resolve

    cli = cli or CommandLine()
    if not paths or cli.settings_file is not None or cli.isolated:
        start = start_of(paths[0]) if paths else "."
        return [(Judge(resolve(cli, start=start), base), list(paths))]
    by_start: dict[str, str | None] = {}
    configs: dict[str | None, ConfigFile | None] = {}
    groups: dict[str | None, list[str]] = {}
    for path in paths:
        start = start_of(path)
        if start not in by_start:
            cfg = config_for(cli, start)
            key = os.path.abspath(cfg.path) if cfg is not None else None
            by_start[start] = key
            configs.setdefault(key, cfg)
        groups.setdefault(by_start[start], []).append(path)
    return [(Judge(resolve(cli, start=start_of(group[0]), config=configs[key]), base), group)
            for key, group in groups.items()]


def merge(results: Sequence[CheckResult]) -> CheckResult:
    """The results of several judges as one (in order; one result is itself)."""
    if len(results) == 1:
        return results[0]
    out = CheckResult()
    runs_at: set[int] = set()
    for r in results:
        before = len(out.rounds)
        for i, diags in r.outside.items():
            out.outside.setdefault(before + i, []).extend(diags)
        runs_at.update(before + i for i in r.runs_at)
        out.rounds.extend(r.rounds)
        out.files += r.files
        out.not_in_round.extend(r.not_in_round)
    out.runs_at = frozenset(runs_at)
    return out
