"""Which protocol generation a round is (generations.md §6).

Per round, the first rule that matches: (1) any `.score.md` sidecar, or the fan-in's
outputs inside: fan-in; (2) any `.score.yml` sidecar, or `round-NN-verified.md` beside:
apply-fix (in general: of the generations whose evidence, as each generation module
declares it, the round shows, the first listed in :mod:`qrspi_guard.contract.generations`);
(3) otherwise the generation most of the run's rounds decided by rules 1-2
show, counting every round of that run on disk whatever PATH names (a tie, or no such
round: fan-in). `--protocol` forces one generation for every round.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from qrspi_guard.contract.generations import (
    DEFAULT_GENERATION,
    GENERATIONS,
    LISTED,
    SIDECAR_SUFFIXES,
    Generation,
)
from qrspi_guard.contract.layout import Kind, RoundRef, classify_cached
from qrspi_guard.engine.discover import REVIEWS, scan_reviews
from qrspi_guard.engine.sides import SideFiles

#: every name inside a round that is evidence by itself (a generation's output), and
#: every sidecar suffix, each with the rank of its generation in LISTED (rules 1-2)
_OUTPUT_RANK: dict[str, int] = {}
for _rank, _gen in enumerate(LISTED):
    for _name in _gen.outputs_inside:
        _OUTPUT_RANK.setdefault(_name, _rank)
_SUFFIX_RANK: tuple[tuple[str, int], ...] = tuple(
    (g.sidecar.suffix, rank) for rank, g in enumerate(LISTED))
_BESIDE_RANK: tuple[tuple[str, int], ...] = tuple(
    (g.verified_beside_suffix, rank) for rank, g in enumerate(LISTED)
    if g.verified_beside_suffix)


def evidence(names: Iterable[str], beside: frozenset[str]) -> Generation | None:
    """Rules 1 and 2 over a round's entry names and the suffixes of the files beside it:
    of the generations whose evidence the round shows, the first listed. (Only names
    that can be evidence are classified: this runs over every round.)"""
    best = len(LISTED)
    for name in names:
        if name in _OUTPUT_RANK:
            rank = _OUTPUT_RANK[name]
        elif not name.endswith(SIDECAR_SUFFIXES):
            continue  # (two C-level tests for the common name)
        else:
            for suffix, rank in _SUFFIX_RANK:
                if rank < best and name.endswith(suffix):
                    break
            else:
                continue
            if classify_cached(name).kind is not Kind.SIDECAR:
                continue
        if rank < best:
            best = rank
            if best == 0:
                return LISTED[0]
    for suffix, rank in _BESIDE_RANK:
        if rank < best and suffix in beside:
            best = rank
    return LISTED[best] if best < len(LISTED) else None


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
        counts = dict.fromkeys(GENERATIONS, 0)
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
        # the most rounds; a tie (none decided included) goes to the first listed, the
        # default
        most = max(counts.values())
        return next(g for g in LISTED if counts[g.name] == most)


def _run_key(ref: RoundRef) -> str | None:
    if ref.artifact_dir is None:
        return None
    return os.path.realpath(ref.artifact_dir)
