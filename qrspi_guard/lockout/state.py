"""Replay ledger events into per-artifact state, and decide what a command may record.

Pure: no I/O, no printing. Every ``plan_*`` function looks at a replayed :class:`State`
and returns a :class:`Plan` (the event fields to append and the outcome), or raises
:class:`LockoutError` when the request makes no sense against the ledger (exit 2).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from qrspi_guard.lockout.models import (
    Approved,
    Assigned,
    Authored,
    Escalated,
    Refused,
    Rejected,
    Roster,
    Unlocked,
    check_agent,
)
from qrspi_guard.lockout.models import normalise_artifact as _normalise
from qrspi_guard.records import asdict, field, record

Outcome = Literal["recorded", "refused", "deadlock"]


class LockoutError(Exception):
    """A request that cannot be applied to the ledger as it stands (bad arguments)."""


def normalise_artifact(artifact: str) -> str:
    """Normalise an artifact id (``./a//b`` -> ``a/b``); LockoutError if it is unusable."""
    try:
        return _normalise(artifact)
    except ValueError as exc:
        raise LockoutError(str(exc)) from None


def agent_name(agent: str) -> str:
    """Validate an agent name given on the command line; LockoutError if unusable."""
    try:
        return check_agent(agent)
    except ValueError as exc:
        raise LockoutError(str(exc)) from None


@record
class ArtifactState:
    """Everything the ledger says about one artifact."""

    artifact: str
    #: cycles started so far; a cycle opens with the first version after an approval
    cycle: int = 0
    cycle_open: bool = False
    current_author: str | None = None
    #: the author of the version first rejected in this cycle
    original_author: str | None = None
    #: the user unlocked the original author in this cycle
    original_author_unlocked: bool = False
    #: authors locked out in this cycle, in the order they were locked
    locked: list[str] = field(default_factory=list)
    #: reviewers who rejected in this cycle; they may not author it either
    gates: list[str] = field(default_factory=list)
    #: the latest rejection's decision in this cycle (None before any rejection)
    decision: str | None = None
    rejected_by: str | None = None
    reason: str | None = None
    expertise: str | None = None
    #: latest outcome: reassign, escalate, approved, deadlock
    last_decision: str | None = None
    approved_by: str | None = None
    refusals: int = 0
    escalations: int = 0
    last_seq: int = 0

    def excluded(self) -> list[str]:
        """Agents who may not author the artifact now (locked authors, then gates)."""
        out = list(self.locked)
        if self.original_author and not self.original_author_unlocked \
                and self.original_author not in out:
            out.insert(0, self.original_author)
        out.extend(g for g in self.gates if g not in out)
        return out

    def eligible(self, roster: list[str] | None) -> list[str] | None:
        """The roster's agents who may author the artifact now; None without a roster."""
        if roster is None:
            return None
        excluded = self.excluded()
        return [r for r in roster if r not in excluded]

    def deadlocked(self, roster: list[str] | None) -> bool:
        """Under a ``reassign`` decision, no agent on the roster may author the revision
        (the one deadlock formula: ``check``/``assign`` and ``status`` both use it)."""
        return (self.cycle_open and self.decision == "reassign" and roster is not None
                and not self.eligible(roster))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@record
class State:
    """The whole ledger replayed: the roster and every artifact's state."""

    #: eligible agents for deadlock detection; None until a ``roster`` event
    roster: list[str] | None = None
    artifacts: dict[str, ArtifactState] = field(default_factory=dict)
    last_seq: int = 0

    def artifact(self, artifact: str) -> ArtifactState:
        """The state of *artifact* (normalised); an empty state if it has no events."""
        key = normalise_artifact(artifact)
        return self.artifacts.get(key) or ArtifactState(artifact=key)

    def copy(self) -> State:
        return copy.deepcopy(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "roster": list(self.roster) if self.roster is not None else None,
            "last_seq": self.last_seq,
            "artifacts": {k: v.to_dict() for k, v in sorted(self.artifacts.items())},
        }

    # -- replay -------------------------------------------------------------------------

    def apply(self, event: Any) -> None:
        """Fold one validated event into the state (the only way state changes)."""
        self.last_seq = event.seq
        if isinstance(event, Roster):
            self.roster = _dedupe(event.agents)
            return
        a = self.artifacts.get(event.artifact)
        if a is None:
            a = self.artifacts[event.artifact] = ArtifactState(artifact=event.artifact)
        a.last_seq = event.seq
        if isinstance(event, Authored):
            _open_cycle(a)
            a.current_author = event.agent
        elif isinstance(event, Rejected):
            _open_cycle(a)
            author = a.current_author
            if a.original_author is None:
                a.original_author = author
            if author is not None and author not in a.locked:
                a.locked.append(author)
            if event.reviewer not in a.gates:
                a.gates.append(event.reviewer)
            a.decision = a.last_decision = event.decision
            a.rejected_by = event.reviewer
            a.reason = event.reason
            a.expertise = event.expertise
        elif isinstance(event, Assigned):
            _open_cycle(a)
            a.current_author = event.agent
            if event.joined_roster and self.roster is not None \
                    and event.agent not in self.roster:
                self.roster.append(event.agent)
        elif isinstance(event, Refused):
            a.refusals += 1
        elif isinstance(event, Approved):
            a.cycle_open = False
            a.original_author = None
            a.original_author_unlocked = False
            a.locked = []
            a.gates = []
            a.decision = a.rejected_by = a.reason = a.expertise = None
            a.last_decision = "approved"
            a.approved_by = event.reviewer
        elif isinstance(event, Unlocked):
            if event.agent in a.locked:
                a.locked.remove(event.agent)
            if event.agent in a.gates:
                a.gates.remove(event.agent)
            if event.agent == a.original_author:
                a.original_author_unlocked = True
        elif isinstance(event, Escalated):
            a.escalations += 1
            a.last_decision = "deadlock"
        else:  # pragma: no cover - the union is closed
            raise TypeError(f"unhandled event {type(event).__name__}")


def _dedupe(agents: list[str]) -> list[str]:
    return list(dict.fromkeys(agents))


def _open_cycle(a: ArtifactState) -> None:
    if not a.cycle_open:
        a.cycle += 1
        a.cycle_open = True
        a.approved_by = None
        a.refusals = 0
        a.escalations = 0


def replay(events: list[Any]) -> State:
    """Fold *events* (validated models, in ``seq`` order) into a fresh state."""
    state = State()
    for event in events:
        state.apply(event)
    return state


# -- decisions ------------------------------------------------------------------------


@record
class Eligibility:
    """May an agent author an artifact now, and if not, why."""

    artifact: str
    agent: str
    allowed: bool
    #: the first refusal reason that applies, or ``deadlock``; None when allowed
    reason: str | None
    #: roster agents still eligible; None when no roster is known
    eligible: list[str] | None
    #: agents who may not author it now (locked authors and rejecting gates)
    excluded: list[str]
    #: under an escalate decision an agent not on the roster is admitted and joins it
    joins_roster: bool = False
    expertise: str | None = None
    cycle: int = 0

    @property
    def deadlock(self) -> bool:
        return self.reason == "deadlock"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def evaluate(state: State, artifact: str, agent: str, *, for_author: bool = False) -> Eligibility:
    """Decide whether *agent* may author *artifact* now (``assign``/``check`` semantics).

    Reasons are checked in the spec's order: ``original_author``, ``locked_out``,
    ``rejecting_gate``, ``not_on_roster`` (only under a ``reassign`` decision with a
    roster known). When a roster is known, no agent on it is eligible and the request
    is not admissible, the verdict is ``deadlock``: a locked author is never re-admitted.
    Under an ``escalate`` decision there is no deadlock: a new agent can always be
    admitted, so a request for a locked agent is an ordinary refusal.
    With *for_author* (the ``author`` command) the roster is not consulted.
    """
    key = normalise_artifact(artifact)
    agent = agent_name(agent)
    a = state.artifact(key)
    roster = state.roster
    escalate = a.cycle_open and a.decision == "escalate"
    reason: str | None = None
    if a.original_author == agent and not a.original_author_unlocked:
        reason = "original_author"
    elif agent in a.locked:
        reason = "locked_out"
    elif agent in a.gates:
        reason = "rejecting_gate"
    elif (not for_author and roster is not None and a.decision == "reassign"
          and agent not in roster):
        reason = "not_on_roster"
    excluded = a.excluded()
    eligible = a.eligible(roster)
    if not for_author and reason is not None and a.deadlocked(roster):
        reason = "deadlock"
    joins = (reason is None and not for_author and escalate and roster is not None
             and agent not in roster)
    return Eligibility(
        artifact=key, agent=agent, allowed=reason is None, reason=reason,
        eligible=eligible, excluded=excluded, joins_roster=joins,
        expertise=a.expertise if escalate else None, cycle=a.cycle,
    )


@record
class Plan:
    """What a write command will append (fields without ``seq``/``at``) and its outcome."""

    fields: dict[str, Any]
    outcome: Outcome = "recorded"
    verdict: Eligibility | None = None


def plan_author(state: State, artifact: str, agent: str) -> Plan:
    """``author``: record who wrote the current version; refused if the agent is locked."""
    v = evaluate(state, artifact, agent, for_author=True)
    if not v.allowed:
        return Plan({"event": "refused", "artifact": v.artifact, "command": "author",
                     "agent": v.agent, "reason": v.reason, "eligible": v.eligible},
                    "refused", v)
    return Plan({"event": "authored", "artifact": v.artifact, "agent": v.agent}, verdict=v)


def plan_reject(state: State, artifact: str, reviewer: str, decision: str, reason: str,
                **details: str | None) -> Plan:
    """``reject``: lock the current author (and the reviewer) out of the artifact."""
    key = normalise_artifact(artifact)
    reviewer = agent_name(reviewer)
    if not reason.strip():
        raise LockoutError("--reason must not be empty")
    if decision not in ("reassign", "escalate"):
        raise LockoutError(f"--decision must be reassign or escalate, not {decision!r}")
    a = state.artifact(key)
    if a.current_author is None:
        raise LockoutError(f"no author recorded for {key}: record one with "
                           "'lockout author' before rejecting")
    fields: dict[str, Any] = {"event": "rejected", "artifact": key, "reviewer": reviewer,
                              "decision": decision, "reason": reason}
    fields.update({k: v for k, v in details.items() if v is not None})
    return Plan(fields)


def plan_assign(state: State, artifact: str, agent: str) -> Plan:
    """``assign``: name the revision author, or refuse (exit 1), or deadlock (exit 3)."""
    v = evaluate(state, artifact, agent)
    if v.deadlock:
        a = state.artifact(v.artifact)
        return Plan({"event": "escalated", "artifact": v.artifact, "agent": v.agent,
                     "reason": "deadlock", "locked": list(a.locked),
                     "gates": list(a.gates)}, "deadlock", v)
    if not v.allowed:
        return Plan({"event": "refused", "artifact": v.artifact, "command": "assign",
                     "agent": v.agent, "reason": v.reason, "eligible": v.eligible},
                    "refused", v)
    fields: dict[str, Any] = {"event": "assigned", "artifact": v.artifact, "agent": v.agent}
    if v.expertise is not None:
        fields["expertise"] = v.expertise
    if v.joins_roster:
        fields["joined_roster"] = True
    return Plan(fields, verdict=v)


def plan_approve(state: State, artifact: str, reviewer: str) -> Plan:
    """``approve``: end the artifact's cycle; its lockouts clear."""
    key = normalise_artifact(artifact)
    reviewer = agent_name(reviewer)
    a = state.artifact(key)
    if not a.cycle_open:
        what = "already approved" if a.cycle else "no version recorded"
        raise LockoutError(f"nothing to approve for {key}: {what} "
                           "(record a version with 'lockout author' first)")
    return Plan({"event": "approved", "artifact": key, "reviewer": reviewer})


def plan_unlock(state: State, artifact: str, agent: str, by: str) -> Plan:
    """``unlock --by user``: the user's explicit override for one agent."""
    key = normalise_artifact(artifact)
    agent = agent_name(agent)
    if by != "user":
        raise LockoutError("only the user may unlock: pass --by user")
    a = state.artifact(key)
    if agent not in a.excluded():
        raise LockoutError(f"{agent} is not locked out of {key}: nothing to unlock")
    return Plan({"event": "unlocked", "artifact": key, "agent": agent, "by": "user"})


def plan_roster(state: State, agents: list[str]) -> Plan:
    """``roster``: replace the eligible agents (global, used for deadlock detection)."""
    if not agents:
        raise LockoutError("roster needs at least one agent")
    names = _dedupe([agent_name(a) for a in agents])
    return Plan({"event": "roster", "agents": names})
