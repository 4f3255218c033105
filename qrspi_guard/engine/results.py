"""What the engine returns: one round's verdict, and a whole check's. Plain data."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Literal, Protocol

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.contract.runconfig import RunConfig
from qrspi_guard.records import field, record
from qrspi_guard.rules.facts import FileFacts

Status = Literal["ok", "pending", "halt"]


class Keep(Protocol):
    """Which diagnostics are reported (``settings.Selection`` is one): the engine leaves
    the others out where it makes them, so a round's status is decided once, after."""

    @property
    def everything(self) -> bool: ...

    def filter(self, diags: Iterable[Diagnostic]) -> list[Diagnostic]: ...


def kept(diags: list[Diagnostic], keep: Keep | None) -> list[Diagnostic]:
    """*diags* without what *keep* leaves out (the list itself when nothing is)."""
    return diags if keep is None or keep.everything or not diags else keep.filter(diags)
_LEVEL_ORDER = {"error": 0, "warning": 1, "info": 2}


@record
class RoundResult:
    """One round's verdict."""

    ref: RoundRef
    status: Status
    diagnostics: list[Diagnostic]  #: file, tag and round diagnostics of this round
    run: RunConfig  #: the run's settings (and its run-level diagnostics)
    expected_tags: list[str] = field(default_factory=list)
    reported_tags: list[str] = field(default_factory=list)
    awaiting: list[str] = field(default_factory=list)
    files: int = 0
    file_names: list[str] = field(default_factory=list)  #: findings, sentinels, sidecars
    complete: bool = True
    #: the protocol generation the round was judged by (generations.md §6)
    protocol: str = "fan-in"
    #: each file's facts, kept only when asked (:attr:`Overrides.keep_facts`: the overview)
    facts: list[FileFacts] = field(default_factory=list)

    @property
    def all_diagnostics(self) -> list[Diagnostic]:
        """Round diagnostics plus the run-level ones that bear on it (for status files)."""
        return self.run.diagnostics + self.diagnostics

    @property
    def config_source(self) -> str:
        """`worktree`, or the commit SHA whose config.md judged the round (§7)."""
        return self.run.source

    def decided(self) -> Status:
        """The round's status by the one rule: `halt` while an error (its own or its
        run's) is left, else `pending` while it is incomplete, else `ok`."""
        if any(d.level == "error" for d in self.all_diagnostics):
            return "halt"
        return "ok" if self.complete else "pending"


@record
class CheckResult:
    """A whole check's verdict. Each diagnostic is held once: a round's in its
    :class:`RoundResult`, a run's (config.md's) in the run of the rounds that report it
    (:attr:`runs_at`), and those of no round in :attr:`outside`. :attr:`diagnostics` is
    every one of them, in order."""

    rounds: list[RoundResult] = field(default_factory=list)
    #: diagnostics that belong to no round (layout, files judged outside any round), by
    #: how many of :attr:`rounds` come before them (0 in one check; a merge of checks
    #: places each one's after the rounds of those before it)
    outside: dict[int, list[Diagnostic]] = field(default_factory=dict)
    #: the rounds (by index) that report their run's diagnostics: the first judged by
    #: each distinct config.md text (its other rounds share them without reporting them)
    runs_at: frozenset[int] = frozenset()
    files: int = 0
    not_in_round: list[str] = field(default_factory=list)  #: file arguments outside rounds
    #: (diagnostics left out, entries fixed) when a baseline was applied (cli.md)
    baseline: tuple[int, int] | None = None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Every diagnostic, in order: those of no round placed before a round, then each
        round's run diagnostics (where :attr:`runs_at` reports them) and its own."""
        return list(self._each())

    def beyond_rounds(self) -> list[Diagnostic]:
        """The diagnostics that are no round's own (its layout's, its runs', those of no
        round), in the order :attr:`diagnostics` has them."""
        return list(self._each(own=False))

    def _each(self, own: bool = True) -> Iterator[Diagnostic]:
        outside, runs_at = self.outside, self.runs_at
        for i, rr in enumerate(self.rounds):
            if i in outside:
                yield from outside[i]
            if i in runs_at:
                yield from rr.run.diagnostics
            if own:
                yield from rr.diagnostics
        for i in sorted(k for k in outside if k >= len(self.rounds)):
            yield from outside[i]

    def count(self, level: str) -> int:
        return sum(1 for d in self._each() if d.level == level)

    def failed(self, strict: bool = False) -> bool:
        return self.count("error") > 0 or (strict and self.count("warning") > 0)


def sort_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diags, key=lambda d: (d.path, d.line or 0, _LEVEL_ORDER[d.level], d.cause))
