"""The lockout ledger as people and machines read it: the check line, the per-artifact
status (text and JSON). Every name and reason from the ledger is untrusted: one line,
escaped, never starting a CI annotation."""

from __future__ import annotations

from typing import Any

from qrspi_guard.lockout.ledger import TornTail
from qrspi_guard.lockout.state import ArtifactState, Eligibility, State
from qrspi_guard.textsafe import one_line, path_at_line_start

WHY = {
    "original_author": "wrote the version first rejected in this cycle",
    "locked_out": "was locked out by a rejection in this cycle",
    "rejecting_gate": "rejected this artifact in this cycle; a rejecting gate may not "
                      "author the revision",
    "not_on_roster": "is not on the roster, and the decision is reassign",
}


def safe(text: object) -> str:
    return one_line(text, limit=500)


def names(names: list[str]) -> str:
    return ", ".join(safe(n) for n in names) if names else "none"


def eligible_text(v: Eligibility, escalate: bool) -> str:
    if v.eligible is None:
        text = (f"eligible: any agent except {names(v.excluded)} (no roster recorded)"
                if v.excluded else "eligible: any agent (no roster recorded)")
    else:
        text = f"eligible: {names(v.eligible)}"
    if escalate:
        text += " (or a new agent: the decision is escalate)"
    return text


def verdict_line(v: Eligibility, state: State, verb: str) -> str:
    a = state.artifact(v.artifact)
    escalate = a.cycle_open and a.decision == "escalate"
    if v.deadlock:
        return (f"deadlock: every agent on the roster is locked out of {safe(v.artifact)} "
                f"(locked out: {names(a.locked)}; rejecting gates: {names(a.gates)}); "
                "escalate to the user: name a new agent after adding it with "
                "'lockout roster', or 'lockout unlock ... --by user'")
    if not v.allowed:
        assert v.reason is not None
        return (f"refused: {safe(v.agent)} may not {verb} {safe(v.artifact)}: {v.reason} "
                f"({safe(v.agent)} {WHY[v.reason]}); {eligible_text(v, escalate)}")
    return f"allowed: {safe(v.agent)} may {verb} {safe(v.artifact)}"


def torn_json(torn: TornTail | None) -> dict[str, int] | None:
    return None if torn is None else {"line": torn.line, "bytes": torn.size}


def artifact_json(a: ArtifactState, state: State) -> dict[str, Any]:
    data = a.to_dict()
    data["excluded"] = a.excluded()
    data["eligible"] = a.eligible(state.roster)
    data["deadlocked"] = a.deadlocked(state.roster)
    return data


def artifact_text(d: dict[str, Any]) -> list[str]:
    status = "open" if d["cycle_open"] else ("approved" if d["approved_by"] else "none")
    lines = [path_at_line_start(one_line(d["artifact"], limit=500)),  # never `::` first
             f"  cycle: {d['cycle']} ({status})",
             f"  current author: {safe(d['current_author'] or '-')}"]
    if d["original_author"]:
        lines.append(f"  original author: {safe(d['original_author'])}"
                     + (" (unlocked by user)" if d["original_author_unlocked"] else ""))
    lines.append(f"  locked out: {names(d['locked'])}")
    lines.append(f"  rejecting gates: {names(d['gates'])}")
    last = d["last_decision"] or "-"
    if d["last_decision"] in ("reassign", "escalate"):
        last += f" by {safe(d['rejected_by'])}: {safe(d['reason'])}"
        if d["expertise"]:
            last += f" (expertise: {safe(d['expertise'])})"
    elif d["last_decision"] == "approved":
        last += f" by {safe(d['approved_by'])}"
    lines.append(f"  last decision: {last}")
    if d["eligible"] is not None:
        lines.append(f"  eligible: {names(d['eligible'])}")
    if d["deadlocked"]:
        lines.append("  DEADLOCK: every agent on the roster is locked out; escalate to the user")
    return lines
