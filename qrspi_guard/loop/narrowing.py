"""``prepare``'s narrowing decision and its sidecar, pure (loop.md, generations.md §4).

A round narrows (``narrowed: true``, ``scope_hint`` = the round NN-1 scope set's text)
when it is round 3 or later, no backward-loop flag forced a broaden, both earlier scope
sets (NN-1 and NN-2) hold tags, the NN-1 set is a subset of (or equal to) the NN-2 set,
and ``HEAD~1`` is the NN-1 commit anchor. Otherwise it broadens, and the reason says
why, in ``round-prepare.sh``'s words (its suite and its consumers match them).

The sets are the scope sets' tags as :func:`qrspi_guard.rules.bookkeeping.scope_set`
reads them (one definition for the guard's rule and this decision): ``#`` comment lines
are not tags, so the tagger's per-round header (``total_findings_kept: N``) cannot make
two equal sets differ, and blank lines are dropped as upstream drops them.
"""

from __future__ import annotations

from qrspi_guard.parse import jsondoc
from qrspi_guard.records import record

BACKWARD = "backward-loop flag forced base-branch preparation"
NO_SETS = "prior-round scope-set missing or empty — broaden"
DIVERGE = "scope-sets diverge (superset / partial-overlap / disjoint) — broaden"
NARROW = "scope-sets converged (equal or proper-subset) — narrow"
NON_GIT = "non-git workspace — no diff or scope_hint fabricated"


@record(frozen=True)
class ScopeSet:
    """One well-formed scope set: its tags, and its text as the hint carries it."""

    tags: tuple[str, ...]
    text: str


@record(frozen=True)
class Decision:
    narrowed: bool
    reason: str
    scope_hint: str | None = None


def decide(round_no: int, backward: bool, prev1: ScopeSet | None, prev2: ScopeSet | None,
           prior_anchor: str | None, head1: str | None) -> Decision:
    """Narrow or broaden. *prev1*/*prev2*: the NN-1 and NN-2 scope sets (None when
    absent); *prior_anchor*: the NN-1 commit anchor's SHA; *head1*: ``HEAD~1``'s SHA in
    the run's repository (None when HEAD has no parent)."""
    if backward:
        return Decision(False, BACKWARD)
    if round_no < 3:
        return Decision(False, f"round {round_no} uses base-branch broaden (narrowing "
                               "requires NN>=3)")
    if prev1 is None or prev2 is None or not prev1.tags or not prev2.tags:
        return Decision(False, NO_SETS)
    if not set(prev1.tags) <= set(prev2.tags):
        return Decision(False, DIVERGE)
    if prior_anchor is not None and head1 != prior_anchor:
        return Decision(False, f"HEAD~1 ({head1 or ''}) does not match prior round anchor "
                               f"({prior_anchor}) — fall back to broaden")
    return Decision(True, NARROW, prev1.text.rstrip("\n") or None)


def sidecar(diff_file: str | None, decision: Decision, ref: str | None) -> bytes:
    """``.round-prepare.json``'s bytes: the same inputs give the same bytes (sorted
    keys, two-space indent, ASCII, one final newline), as upstream writes it."""
    doc = {"diff_file": diff_file or None, "narrowed": decision.narrowed,
           "reason": decision.reason or None, "ref": ref or None,
           "scope_hint": decision.scope_hint or None}
    return (jsondoc.dumps(doc, indent=2, sort_keys=True) + "\n").encode("ascii")


def non_git_sidecar() -> bytes:
    """The sidecar of a run outside a git work tree: no diff, no hint."""
    return sidecar(None, Decision(False, NON_GIT), None)
