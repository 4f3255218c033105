"""The finding contract's values (round-contract §3, §4), and its JSON Schema.

The enums, keys and id pattern are defined once here; the rules check against them
and ``qrspi-guard schema`` renders the same values as JSON Schema through pydantic
models (built only when asked for, so the hot path never imports pydantic).
"""

from __future__ import annotations

import re
from typing import Any

SEVERITIES: tuple[str, ...] = ("low", "medium", "high")
CHANGE_TYPES: tuple[str, ...] = ("style", "clarity", "correctness", "scope", "intent")
#: change types the review loop auto-applies (and the verifier may drop)
AUTO_APPLY: frozenset[str] = frozenset({"style", "clarity", "correctness"})
FINDING_KEYS: tuple[str, ...] = (
    "finding_id", "severity", "change_type", "referenced_files", "artifact", "round", "reviewer",
)
CLEAN_KEYS: tuple[str, ...] = ("reviewer", "round", "findings")
CLEAN_VARIANT_KEYS: tuple[str, ...] = ("finding_id", "artifact")
FINDING_ID_PATTERN = r"^R[0-9]+-F[0-9]+$"
FINDING_ID_RE = re.compile(r"R([0-9]+)-F([0-9]+)")
TAG_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
REFERENCE_RANGE_RE = re.compile(r"[0-9]+|[0-9]+-[0-9]+|L[0-9]+|L[0-9]+-L[0-9]+")
VERIFY_FAILED = "VERIFY_FAILED"
#: verifier scores below this drop an auto-apply finding (round-contract §5)
KEEP_THRESHOLD = 80


def json_schemas() -> dict[str, Any]:
    """JSON Schemas of a finding's frontmatter, a clean sentinel and a sidecar."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field

    Severity = Literal[SEVERITIES]  # type: ignore[valid-type]
    ChangeType = Literal[CHANGE_TYPES]  # type: ignore[valid-type]
    Tag = Annotated[str, Field(pattern=TAG_PATTERN)]

    class Finding(BaseModel):
        """Frontmatter of `<tag>.finding-F<NN>.md`; the body after it is the message."""

        # extra keys are a warning (unknown_frontmatter_key), not an error: allowed here
        model_config = ConfigDict(extra="allow", title="QRSPI finding frontmatter")
        finding_id: Annotated[str, Field(pattern=FINDING_ID_PATTERN, examples=["R3-F02"])]
        severity: Severity
        change_type: ChangeType
        referenced_files: list[str]
        artifact: str = Field(min_length=1)
        round: int = Field(ge=1)
        reviewer: Tag

    class CleanSentinel(BaseModel):
        """Frontmatter of `<tag>.clean.md`."""

        model_config = ConfigDict(extra="allow", title="QRSPI clean sentinel")
        reviewer: Tag
        round: int = Field(ge=1)
        findings: Literal[0] = Field(
            0, description="canonical; its absence is warning clean_noncanonical")

    class Sidecar(BaseModel):
        """`<tag>.finding-F<NN>.score.yml`, written by the verifier."""

        model_config = ConfigDict(extra="forbid", title="QRSPI verifier sidecar")
        score: int | Literal["VERIFY_FAILED"] = Field(
            description="0..100, no leading zero; or VERIFY_FAILED")
        reason: str

    out: dict[str, Any] = {}
    for name, model in (("finding", Finding), ("clean", CleanSentinel), ("sidecar", Sidecar)):
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[name] = schema
    sidecar_score = out["sidecar"]["properties"]["score"]
    for option in sidecar_score.get("anyOf", []):
        if option.get("type") == "integer":
            option.update(minimum=0, maximum=100)
    return out
