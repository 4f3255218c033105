"""The protocol generations (generations.md §1): each one module, listed once here.

A generation module (:mod:`.fan_in`, :mod:`.apply_fix`) holds everything that differs
between generations: the evidence that tells a round is of it (its sidecar suffix, its
outputs inside the round, its result beside it), its sidecar reader and the sidecar's
JSON Schema, its outputs and their roles, its thresholds and recount particulars, as
one :class:`~.model.Generation` value named ``GENERATION``. Everything else derives from
:data:`LISTED`: the generation rules of generations.md §6, the sidecar names the layout
grammar accepts, the files the layout classifies as verifier outputs, ``--protocol``'s
choices, ``schema``'s kinds. A new generation is its module and its line below (a new
*role* of output, one the round rules cannot read yet, is a rule of its own too).
"""

from __future__ import annotations

from qrspi_guard.contract.generations import apply_fix, fan_in
from qrspi_guard.contract.generations.model import (
    CONTRACT,
    DISPATCH_MANIFEST,
    MAX_DIGITS,
    FindingContract,
    Generation,
    SidecarFacts,
    SidecarGrammar,
    Thresholds,
    with_thresholds,
)

#: every generation, in the order their evidence is weighed: a round is of the first
#: whose evidence it shows (generations.md §6 rules 1-2); the first is the default
#: when no evidence decides (rule 3)
LISTED: tuple[Generation, ...] = (
    fan_in.GENERATION,
    apply_fix.GENERATION,
)

GENERATIONS: dict[str, Generation] = {g.name: g for g in LISTED}
#: every generation's sidecar suffix (each is a sidecar name, generations.md §2)
SIDECAR_SUFFIXES: tuple[str, ...] = tuple(g.sidecar.suffix for g in LISTED)
#: when no rule decides a round's generation (generations.md §6, rule 3)
DEFAULT_GENERATION = LISTED[0]
PROTOCOL_CHOICES: tuple[str, ...] = ("auto", *GENERATIONS)


def grammar_for(suffix: str | None) -> SidecarGrammar | None:
    """The grammar of a sidecar suffix (None for a suffix no generation writes)."""
    for gen in LISTED:
        if gen.sidecar.suffix == suffix:
            return gen.sidecar
    return None


__all__ = [
    "CONTRACT", "DEFAULT_GENERATION", "DISPATCH_MANIFEST", "GENERATIONS", "LISTED",
    "MAX_DIGITS", "PROTOCOL_CHOICES", "SIDECAR_SUFFIXES", "FindingContract", "Generation",
    "SidecarFacts", "SidecarGrammar", "Thresholds", "grammar_for", "with_thresholds",
]
