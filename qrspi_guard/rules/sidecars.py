"""The sidecar rule: a verifier sidecar judged by its own suffix's grammar.

Each generation module reads its sidecars the way its consumer reads them, never as
YAML (:mod:`qrspi_guard.contract.generations`); this rule hands a sidecar to the reader
of the generation whose suffix it has. Which suffix a round should have is a round-level
question (its generation: ``sidecar_wrong_extension``, :mod:`qrspi_guard.rules.rounds`).
"""

from __future__ import annotations

from collections.abc import Callable

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations import SidecarFacts, grammar_for

Report = Callable[..., Diagnostic]


def judge_sidecar(text: str, suffix: str | None, d: Report,
                  out: list[Diagnostic]) -> SidecarFacts:
    """Judge a sidecar's decoded text by its suffix's grammar (a suffix no generation
    writes is never a sidecar: the layout names it another kind, and nothing is said)."""
    grammar = grammar_for(suffix)
    if grammar is None:
        return SidecarFacts()
    return grammar.read(text, grammar, d, out)
