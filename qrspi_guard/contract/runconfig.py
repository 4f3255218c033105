"""The settings a run is judged with: the command line's overrides, and a run's
config.md settings (round-contract §7). Plain data, shared by the rules and the engine.
"""

from __future__ import annotations

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations import Thresholds
from qrspi_guard.records import field, record

CONFIG_NAME = "config.md"

@record(frozen=True)
class Overrides:
    """Command-line settings that win over config.md."""

    step: str | None = None
    second_reviewer: bool | None = None
    verifier: bool | None = None
    require_sidecars: bool = False
    expect: tuple[str, ...] | None = None
    config_file: str | None = None
    #: `--protocol`: `auto` tells each round's generation from its files
    protocol: str = "auto"
    #: `--round N`: the round of a directory named on the command line that is not
    #: `round-NN` (generations.md §8)
    round_no: int | None = None
    #: the project configuration's `thresholds` for the verified-totals recount
    thresholds: Thresholds | None = None
    #: the project configuration's `extra-expected-tags`: step or matrix row -> tags
    #: expected in that step's rounds beside the matrix row (they count as routed)
    extra_expected: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: keep each file's facts in its round's result (:attr:`RoundResult.facts`): the run
    #: overview shows them (report.md); ``check`` leaves them out (memory stays flat)
    keep_facts: bool = False


@record
class RunConfig:
    """The settings one run's rounds are judged with."""

    path: str | None  #: config.md's display path, None when there is none
    #: where the text came from: "worktree", or the commit SHA it was read at (§7)
    source: str = "worktree"
    second_reviewer: bool | None = None  #: None: the matrix column cannot be chosen
    verifier_enabled: bool = True
    route: tuple[str, ...] | None = None
    pipeline: str | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
