"""Which protocol generation a round is (generations.md §6).

Per round, the first rule that matches: (1) any `.score.md` sidecar, or the fan-in's
outputs inside: fan-in; (2) any `.score.yml` sidecar, or `round-NN-verified.md` beside:
apply-fix; (3) otherwise the generation most of the run's rounds decided by rules 1-2
show, counting every round of that run on disk whatever PATH names (a tie, or no such
round: fan-in). `--protocol` forces one generation for every round.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from qrspi_guard.contract.generations import (
    APPLY_FIX,
    DEFAULT_GENERATION,
    FAN_IN,
    FANIN_AUDIT,
    GENERATIONS,
    KEPT_FINDINGS,
    Generation,
)
from qrspi_guard.contract.layout import Kind, RoundRef, classify_cached
from qrspi_guard.engine.discover import REVIEWS, scan_reviews
from qrspi_guard.engine.sides import SideFiles

_FAN_IN_NAMES = frozenset({KEPT_FINDINGS, FANIN_AUDIT})
_FAN_IN_SUFFIX = FAN_IN.sidecar.suffix
_APPLY_FIX_SUFFIX = APPLY_FIX.sidecar.suffix


def evidence(names: Iterable[str], beside: frozenset[str]) -> Generation | None:
    """Rules 1 and 2 over a round's entry names and the suffixes of the files beside it.
    (Only names that can be evidence are classified: this runs over every round.)"""
    applyfix = False
    for name in names:
        if ".score." not in name and name not in _FAN_IN_NAMES:
            continue  # (one C-level test for the common name)
        if name in _FAN_IN_NAMES:
            return FAN_IN
        if name.endswith(_FAN_IN_SUFFIX):
            if classify_cached(name).kind is Kind.SIDECAR:
                return FAN_IN
        elif not applyfix and name.endswith(_APPLY_FIX_SUFFIX):
            applyfix = classify_cached(name).kind is Kind.SIDECAR
    if applyfix or (APPLY_FIX.verified_beside_suffix or "") in beside:
        return APPLY_FIX
    return None


class GenerationResolver:
    """Tells each round's generation; remembers each run's majority (rule 3)."""

    def __init__(self, protocol: str = "auto", sides: SideFiles | None = None) -> None:
        self.forced = GENERATIONS.get(protocol)
        self.sides = sides or SideFiles()
        self._majority: dict[str | None, Generation] = {}

    def of(self, ref: RoundRef, names: Iterable[str], beside: frozenset[str]) -> Generation:
        if self.forced is not None:
            return self.forced
        return evidence(names, beside) or self.majority(ref)

    def majority(self, ref: RoundRef) -> Generation:
        """Rule 3: the generation most of the run's decided rounds show."""
        key = _run_key(ref)
        got = self._majority.get(key)
        if got is None:
            got = self._majority[key] = self._count(ref) if key is not None \
                else DEFAULT_GENERATION
        return got

    def prepare(self, refs: Iterable[RoundRef]) -> None:
        """Decide every run's majority now (before forking workers, which then share it)."""
        if self.forced is None:
            for ref in refs:
                self.majority(ref)

    def forget(self) -> None:
        """Drop remembered majorities (``watch``: the run changed on disk)."""
        self._majority.clear()

    def _count(self, ref: RoundRef) -> Generation:
        assert ref.artifact_dir is not None
        counts = {FAN_IN.name: 0, APPLY_FIX.name: 0}
        for found in scan_reviews(os.path.join(ref.artifact_dir, REVIEWS)):
            if not isinstance(found, RoundRef) or found.round is None:
                continue
            try:
                names = os.listdir(found.round_dir)
            except OSError:
                continue
            decided = evidence(names, self.sides.beside(found.step_dir, found.round))
            if decided is not None:
                counts[decided.name] += 1
        if counts[APPLY_FIX.name] > counts[FAN_IN.name]:
            return APPLY_FIX
        return FAN_IN if counts[FAN_IN.name] else DEFAULT_GENERATION


def _run_key(ref: RoundRef) -> str | None:
    if ref.artifact_dir is None:
        return None
    return os.path.realpath(ref.artifact_dir)
