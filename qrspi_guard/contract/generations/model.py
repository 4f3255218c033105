"""What a protocol generation is: the types every generation module fills in.

Everything a rule, the fast path, the hook's guidance, ``schema`` or ``explain`` needs
to know about what reviewers and the verifier write is a field of
:class:`FindingContract` (shared by every generation) or of :class:`Generation` (what
differs between generations: generations.md §1). Nothing else in the package
restates an enum, a key list, the tag grammar or a threshold; derived forms (compiled
patterns) are computed from these values, so a narrowed value narrows all of them.
The generations themselves are modules of this package, listed in its ``__init__``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import Any

from qrspi_guard.contract.digits import MAX_DIGITS as MAX_DIGITS
from qrspi_guard.records import field, record

#: a generation's name, as `--protocol` and the `protocol` setting spell it
GenerationName = str
#: a diagnostic maker (``functools.partial(diag, file=..., path=...)``)
Report = Callable[..., Any]


@record(frozen=True)
class Thresholds:
    """Keep thresholds per auto-applied change_type: a lower score drops the finding."""

    style: int = 80
    clarity: int = 80
    correctness: int = 70

    def for_change_type(self, change_type: str | None) -> int | None:
        """The threshold of *change_type*, or None where no threshold applies (scope,
        intent, or a change_type that is not valid)."""
        return {"style": self.style, "clarity": self.clarity,
                "correctness": self.correctness}.get(change_type or "")

    def as_dict(self) -> dict[str, int]:
        return {"style": self.style, "clarity": self.clarity, "correctness": self.correctness}

    def shown(self) -> str:
        return f"style {self.style}, clarity {self.clarity}, correctness {self.correctness}"


@record(frozen=True)
class FindingContract:
    """What a finding file and a clean sentinel hold (round-contract §3, §4)."""

    severities: tuple[str, ...] = ("low", "medium", "high")
    change_types: tuple[str, ...] = ("style", "clarity", "correctness", "scope", "intent")
    #: change types the review loop auto-applies (and the verifier may drop)
    auto_apply: frozenset[str] = frozenset({"style", "clarity", "correctness"})
    #: the seven required keys, in the protocol's own order
    finding_keys: tuple[str, ...] = ("finding_id", "severity", "change_type",
                                     "referenced_files", "artifact", "round", "reviewer")
    #: optional audit keys a finding or clean sentinel may carry (generations.md §5)
    audit_keys: tuple[str, ...] = ("actual_model",)
    clean_keys: tuple[str, ...] = ("reviewer", "round", "findings")
    #: the fixture-variant clean shape's extra keys (round-contract §4 Decision)
    clean_variant_keys: tuple[str, ...] = ("finding_id", "artifact")
    finding_id_pattern: str = r"R([0-9]+)-F([0-9]+)"
    #: visual-fidelity bypass records (generations.md §5)
    bypass_id_pattern: str = r"R([0-9]+)-bypass-([0-9]+)"
    tag_pattern: str = r"[a-z0-9][a-z0-9-]*"
    reference_range_pattern: str = r"[0-9]+|[0-9]+-[0-9]+|L[0-9]+|L[0-9]+-L[0-9]+"
    boundary: str = "<<<FINDING-BOUNDARY>>>"
    #: a file over this many bytes is not parsed (file_too_large)
    max_bytes: int = 1024 * 1024
    verify_failed: str = "VERIFY_FAILED"

    @cached_property
    def finding_id_re(self) -> re.Pattern[str]:
        return re.compile(self.finding_id_pattern)

    @cached_property
    def bypass_id_re(self) -> re.Pattern[str]:
        return re.compile(self.bypass_id_pattern)

    @cached_property
    def tag_re(self) -> re.Pattern[str]:
        return re.compile(self.tag_pattern)

    @cached_property
    def reference_range_re(self) -> re.Pattern[str]:
        return re.compile(self.reference_range_pattern)

    @property
    def finding_id_schema(self) -> str:
        """The finding_id pattern anchored, as JSON Schema and messages show it."""
        return "^" + self.finding_id_pattern.replace("([0-9]+)", r"\d+") + "$"

    @property
    def tag_schema(self) -> str:
        return f"^{self.tag_pattern}$"

    def allowed_finding_keys(self) -> tuple[str, ...]:
        return self.finding_keys + self.audit_keys

    def allowed_clean_keys(self) -> tuple[str, ...]:
        return self.clean_keys + self.clean_variant_keys + self.audit_keys


class SidecarFacts:
    """What the round rules need from a sidecar, whichever generation's grammar read it."""

    __slots__ = ("score", "verify_failed")

    def __init__(self) -> None:
        self.score: int | None = None  #: the readable score, 0..100
        self.verify_failed = False


#: a sidecar reader: (decoded text, its grammar, a diagnostic maker, where diagnostics go)
#: -> what the round rules need; it appends every problem to the list and never raises
SidecarReader = Callable[[str, "SidecarGrammar", Report, list[Any]], SidecarFacts]
#: a sidecar's JSON Schema, from the finding contract (pydantic imported only when asked)
SidecarSchema = Callable[["FindingContract"], dict[str, Any]]


@record(frozen=True)
class SidecarGrammar:
    """How one generation's verifier sidecar is written and read."""

    suffix: str  #: `.score.yml` or `.score.md`
    #: reads and judges one sidecar of this suffix (the generation module's own reader)
    read: SidecarReader
    #: ``schema --kind <schema_kind>`` prints :attr:`schema`'s output
    schema_kind: str
    schema: SidecarSchema
    #: apply-fix: `087` is score_out_of_range (breaks shell arithmetic); fan-in: 87
    leading_zero_is_error: bool
    #: fan-in: `verifier_status` values and the failed sidecar's reason key
    statuses: tuple[str, ...] = ()
    failed_status: str | None = None
    failure_reason_key: str | None = None
    #: fan-in: how the fan-in reads the score text after stripping quotes
    score_pattern: str = r"[0-9]{1,3}"
    #: apply-fix: a `reason` is required beside the score
    reason_required: bool = False


@record(frozen=True)
class Generation:
    """One protocol generation: what its verifier writes and how a round is recounted."""

    name: GenerationName
    sidecar: SidecarGrammar
    thresholds: Thresholds
    #: other thresholds whose totals are accepted too (apply-fix: v0.7 kept correctness
    #: at 80, contract §5); the message recounts with :attr:`thresholds`
    also_accepted: tuple[Thresholds, ...] = ()
    #: fan-in: a score of 0 drops the finding whatever its change_type
    zero_score_drops: bool = False
    #: apply-fix: an escalated finding (cites feedback/*.md) is never dropped
    escalation_keeps: bool = False
    #: verifier outputs written inside the round (fan-in): (file name, role), the role a
    #: :class:`qrspi_guard.contract.layout.Kind` value the round rules know how to read
    #: and recount (``"kept_list"``, ``"fanin_audit"``). Any of them is evidence of the
    #: generation (generations.md §6)
    outputs: tuple[tuple[str, str], ...] = ()
    #: the verifier result beside the round (apply-fix: round-NN-verified.md), recounted
    #: by the round rules; evidence of the generation too
    verified_beside_suffix: str | None = None
    #: a clean sentinel may omit `round` (the fan-in splitter writes none)
    clean_round_optional: bool = False
    contract: FindingContract = field(default_factory=FindingContract)

    @cached_property
    def outputs_inside(self) -> frozenset[str]:
        """The names of :attr:`outputs`."""
        return frozenset(name for name, _ in self.outputs)

    def output_named(self, role: str) -> str | None:
        """The name of the output inside the round that plays *role*, if any."""
        return next((name for name, r in self.outputs if r == role), None)


CONTRACT = FindingContract()

#: a task round's dispatch manifest (any generation)
DISPATCH_MANIFEST = ".dispatch-manifest.json"


def with_thresholds(gen: Generation, thresholds: Thresholds) -> Generation:
    """*gen* recounting with exactly *thresholds* (the project configuration's
    `thresholds` setting): no alternative is accepted then."""
    from qrspi_guard.records import replace

    return replace(gen, thresholds=thresholds, also_accepted=())
