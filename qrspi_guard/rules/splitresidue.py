"""`split_incomplete` (round-contract §10): a round holding the temp or commit files of a
``qrspi-guard split`` that did not finish (the names: :mod:`qrspi_guard.contract.layout`).

Pure: the engine lists the round and, in ``watch``, probes the round's split lock
(:func:`qrspi_guard.engine.roundlock.split_lock_held`) before asking.
"""

from __future__ import annotations

from collections.abc import Iterable

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.layout import classify, is_split_residue, parse_residue


def residue_diagnostics(round_dir: str, names: Iterable[str], step: str | None = None,
                        round: int | None = None) -> list[Diagnostic]:
    """`split_incomplete` for a round directory whose entry *names* hold residue: one
    diagnostic for the round (the caller leaves out a round a split is working on)."""
    residue = sorted(n for n in names if is_split_residue(n))
    if not residue:
        return []
    parsed = [p for p in map(parse_residue, residue) if p is not None]
    tags = sorted({classify(p.target).tag or "?" for p in parsed if p.target})
    committed = any(p.role == "intent" for p in parsed)
    then = ("it had committed, so the next split completes it" if committed
            else "it had not committed, so the next split removes its files and the "
            "round is as it was")
    whose = f" of {', '.join(tags)}" if tags else ""
    return [diag("split_incomplete",
                 f"a qrspi-guard split{whose} did not finish: {len(residue)} hidden file(s) "
                 f"such as {residue[0]}; {then}: run qrspi-guard split into this round "
                 "again (any tag)", path=round_dir, step=step, round=round,
                 tag=tags[0] if len(tags) == 1 and tags[0] != "?" else None)]
