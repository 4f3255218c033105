"""JSON Schemas of what reviewers and the verifier write (round-contract §3, §4;
generations.md §2), rendered from the contract value through pydantic models (built
only when asked for, so the hot path never imports pydantic).
"""

from __future__ import annotations

from typing import Any

from qrspi_guard.contract.generations import CONTRACT, LISTED, FindingContract

# The contract's values, re-exported for the modules and tools that import them here;
# they are defined once, in qrspi_guard.contract.generations.
SEVERITIES: tuple[str, ...] = CONTRACT.severities
CHANGE_TYPES: tuple[str, ...] = CONTRACT.change_types
AUTO_APPLY: frozenset[str] = CONTRACT.auto_apply
FINDING_KEYS: tuple[str, ...] = CONTRACT.finding_keys
CLEAN_KEYS: tuple[str, ...] = CONTRACT.clean_keys
CLEAN_VARIANT_KEYS: tuple[str, ...] = CONTRACT.clean_variant_keys
FINDING_ID_PATTERN = CONTRACT.finding_id_schema
FINDING_ID_RE = CONTRACT.finding_id_re
TAG_PATTERN = CONTRACT.tag_schema
REFERENCE_RANGE_RE = CONTRACT.reference_range_re
VERIFY_FAILED = CONTRACT.verify_failed


def json_schemas(contract: FindingContract = CONTRACT) -> dict[str, Any]:
    """JSON Schemas of a finding's frontmatter, a clean sentinel and both generations'
    sidecars, from *contract*."""
    from typing import Annotated, Literal

    from pydantic import BaseModel, ConfigDict, Field

    Severity = Literal[contract.severities]  # type: ignore[name-defined]
    ChangeType = Literal[contract.change_types]  # type: ignore[name-defined]
    Tag = Annotated[str, Field(pattern=contract.tag_schema)]

    class Finding(BaseModel):
        """Frontmatter of `<tag>.finding-F<NN>.md`; the body after it is the message."""

        # extra keys are a warning (unknown_frontmatter_key), not an error: allowed here
        model_config = ConfigDict(extra="allow", title="QRSPI finding frontmatter")
        finding_id: Annotated[str, Field(pattern=contract.finding_id_schema,
                                         examples=["R3-F02"])]
        severity: Severity
        change_type: ChangeType
        referenced_files: list[str]
        artifact: str = Field(min_length=1)
        round: int = Field(ge=1)
        reviewer: Tag
        actual_model: str | None = Field(None, description="audit field (fan-in runs)")

    class CleanSentinel(BaseModel):
        """Frontmatter of `<tag>.clean.md`."""

        model_config = ConfigDict(extra="allow", title="QRSPI clean sentinel")
        reviewer: Tag
        round: int | None = Field(None, ge=1, description="required in apply-fix rounds; "
                                  "the fan-in splitter writes none")
        findings: Literal[0] = Field(
            0, description="canonical; its absence is warning clean_noncanonical")
        actual_model: str | None = Field(None, description="audit field (fan-in runs)")

    out: dict[str, Any] = {}
    schemas = [("finding", Finding.model_json_schema()),
               ("clean", CleanSentinel.model_json_schema())]
    # each generation's sidecar, from its own module
    schemas += [(g.sidecar.schema_kind, g.sidecar.schema(contract)) for g in LISTED]
    for name, schema in schemas:
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        out[name] = schema
    return out


#: ``schema --kind``'s choices
SCHEMA_KINDS: tuple[str, ...] = ("finding", "clean", *(g.sidecar.schema_kind for g in LISTED))
