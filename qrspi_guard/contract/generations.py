"""The finding contract and the protocol generations, each as one value.

Everything a rule, the fast path, the hook's guidance, ``schema`` or ``explain`` needs
to know about what reviewers and the verifier write is a field of
:class:`FindingContract` (shared by every generation) or of :class:`Generation` (what
differs between apply-fix and fan-in: generations.md §1). Nothing else in the package
restates an enum, a key list, the tag grammar or a threshold; derived forms (compiled
patterns) are computed from these values, so a narrowed value narrows all of them.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

from qrspi_guard.records import field, record

GenerationName = Literal["apply-fix", "fan-in"]


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


@record(frozen=True)
class SidecarGrammar:
    """How one generation's verifier sidecar is written and read."""

    suffix: str  #: `.score.yml` or `.score.md`
    #: "lines": plain `key: value` lines, fences tolerated (apply-fix, contract §4);
    #: "frontmatter": `---` fences, rules read line-wise from the frontmatter, a body
    #: of free prose (fan-in, generations.md §2)
    layout: Literal["lines", "frontmatter"]
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
    #: verifier outputs written inside the round (fan-in)
    outputs_inside: frozenset[str] = frozenset()
    #: the verifier result beside the round (apply-fix: round-NN-verified.md)
    verified_beside_suffix: str | None = None
    #: a clean sentinel may omit `round` (the fan-in splitter writes none)
    clean_round_optional: bool = False
    contract: FindingContract = field(default_factory=FindingContract)


CONTRACT = FindingContract()

KEPT_FINDINGS = "kept-findings.txt"
FANIN_AUDIT = ".verifier-fan-in-audit.json"
DISPATCH_MANIFEST = ".dispatch-manifest.json"

APPLY_FIX = Generation(
    name="apply-fix",
    sidecar=SidecarGrammar(suffix=".score.yml", layout="lines", leading_zero_is_error=True,
                           reason_required=True),
    thresholds=Thresholds(style=80, clarity=80, correctness=70),
    also_accepted=(Thresholds(style=80, clarity=80, correctness=80),),
    escalation_keeps=True,
    verified_beside_suffix="-verified.md",
    contract=CONTRACT,
)

FAN_IN = Generation(
    name="fan-in",
    sidecar=SidecarGrammar(suffix=".score.md", layout="frontmatter",
                           leading_zero_is_error=False, statuses=("passed", "failed"),
                           failed_status="failed", failure_reason_key="failure_reason"),
    thresholds=Thresholds(style=80, clarity=80, correctness=70),
    zero_score_drops=True,
    outputs_inside=frozenset({KEPT_FINDINGS, FANIN_AUDIT}),
    clean_round_optional=True,
    contract=CONTRACT,
)

GENERATIONS: dict[str, Generation] = {g.name: g for g in (APPLY_FIX, FAN_IN)}
#: every generation's sidecar suffix (both are sidecar names, generations.md §2)
SIDECAR_SUFFIXES: tuple[str, ...] = tuple(g.sidecar.suffix for g in GENERATIONS.values())
#: when no rule decides a round's generation (generations.md §6, rule 3)
DEFAULT_GENERATION = FAN_IN
PROTOCOL_CHOICES: tuple[str, ...] = ("auto", *GENERATIONS)


def with_thresholds(gen: Generation, thresholds: Thresholds) -> Generation:
    """*gen* recounting with exactly *thresholds* (the project configuration's
    `thresholds` setting): no alternative is accepted then."""
    from qrspi_guard.records import replace

    return replace(gen, thresholds=thresholds, also_accepted=())
