"""One pydantic model per ledger event, and a discriminated union over ``event``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, field_validator

#: every event type the ledger may hold, in the order the spec lists them
EVENT_TYPES: tuple[str, ...] = (
    "authored",
    "rejected",
    "assigned",
    "refused",
    "approved",
    "unlocked",
    "roster",
    "escalated",
)

Decision = Literal["reassign", "escalate"]
RefusalReason = Literal["original_author", "locked_out", "rejecting_gate", "not_on_roster"]


def normalise_artifact(artifact: str) -> str:
    """``./a//b`` -> ``a/b``; ``src/`` -> ``src``. No other rewriting, no substring logic.

    Empty and ``.`` segments are dropped; ``..`` is kept as written (resolving it would
    guess at symlinks). A leading ``/`` is kept so ``/a`` and ``a`` stay different.
    Raises ValueError for an id that is empty after normalising or holds control
    characters.
    """
    if not isinstance(artifact, str):
        raise ValueError("artifact id must be a string")
    if any(not ch.isprintable() for ch in artifact):
        raise ValueError("artifact id holds control characters")
    parts = [p for p in artifact.split("/") if p not in ("", ".")]
    if not parts:
        raise ValueError(f"artifact id {artifact!r} is empty after normalising")
    joined = "/".join(parts)
    return "/" + joined if artifact.startswith("/") else joined


def check_agent(agent: str) -> str:
    """Agent names are compared exactly, so reject ones that cannot be told apart."""
    if not isinstance(agent, str) or not agent:
        raise ValueError("agent name is empty")
    if agent != agent.strip():
        raise ValueError(f"agent name {agent!r} has leading or trailing whitespace")
    if any(not ch.isprintable() for ch in agent):
        raise ValueError("agent name holds control characters")
    return agent


Agent = Annotated[str, AfterValidator(check_agent)]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    seq: int = Field(ge=1)
    at: datetime

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("'at' must carry a time zone (UTC)")
        try:
            return value.astimezone(timezone.utc)
        except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC
            raise ValueError("'at' is out of range in UTC") from None


class _ArtifactEvent(_Event):
    artifact: str

    @field_validator("artifact")
    @classmethod
    def _norm(cls, value: str) -> str:
        return normalise_artifact(value)


class Authored(_ArtifactEvent):
    event: Literal["authored"]
    agent: Agent



class Rejected(_ArtifactEvent):
    event: Literal["rejected"]
    reviewer: Agent
    decision: Decision
    reason: str = Field(min_length=1)
    evidence: str | None = None
    requirement: str | None = None
    scope: str | None = None
    condition: str | None = None
    expertise: str | None = None



class Assigned(_ArtifactEvent):
    event: Literal["assigned"]
    agent: Agent
    #: the expertise the escalating rejection asked for (escalate only)
    expertise: str | None = None
    #: True when an escalate decision admitted an agent who was not on the roster
    joined_roster: bool = False



class Refused(_ArtifactEvent):
    event: Literal["refused"]
    #: the command that was refused: ``assign`` or ``author``
    command: Literal["assign", "author"]
    agent: Agent
    reason: RefusalReason
    #: roster agents still eligible; None when no roster is known
    eligible: list[Agent] | None = None



class Approved(_ArtifactEvent):
    event: Literal["approved"]
    reviewer: Agent



class Unlocked(_ArtifactEvent):
    event: Literal["unlocked"]
    agent: Agent
    by: Literal["user"]



class Roster(_Event):
    event: Literal["roster"]
    #: the roster is global, not per artifact
    artifact: None = None
    agents: list[Agent] = Field(min_length=1)



class Escalated(_ArtifactEvent):
    event: Literal["escalated"]
    reason: Literal["deadlock"] = "deadlock"
    #: the agent whose assignment hit the deadlock
    agent: Agent
    #: authors locked out of the artifact in this cycle
    locked: list[Agent]
    #: reviewers who rejected in this cycle (they may not author it either)
    gates: list[Agent] = Field(default_factory=list)



LedgerEvent = Annotated[
    Union[Authored, Rejected, Assigned, Refused, Approved, Unlocked, Roster, Escalated],  # noqa: UP007
    Field(discriminator="event"),
]

EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(LedgerEvent)

_KEY_ORDER = ("seq", "at", "event", "artifact")


def event_to_dict(event: BaseModel) -> dict[str, Any]:
    """The event as the JSON object stored on its line: ``seq, at, event, artifact`` first."""
    data = event.model_dump(mode="json")
    ordered = {k: data.pop(k) for k in _KEY_ORDER if k in data}
    ordered.update(data)
    return ordered


def build_event(seq: int, at: datetime, fields: dict[str, Any]) -> Any:
    """Validate *fields* (which include ``event``) into a model with *seq* and *at*."""
    return EVENT_ADAPTER.validate_python({"seq": seq, "at": at, **fields})
