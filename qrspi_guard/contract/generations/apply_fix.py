"""The apply-fix generation (v0.7; round-contract §4-§5): all of it in one module.

- **Evidence**: a `.score.yml` sidecar, or `round-NN-verified.md` beside the round.
- **Sidecar**: `<tag>.finding-F<NN>.score.yml`, plain ``key: value`` lines as the shell
  consumers split them (the first ``:`` splits, so a reason holding ``: `` is fine),
  fences tolerated; ``score`` 0..100 without a leading zero (``087`` breaks shell
  arithmetic) or ``VERIFY_FAILED``, and a ``reason``.
- **Outputs** beside the round: ``round-NN-verified.md``, whose totals the round rules
  recount (:mod:`qrspi_guard.rules.verifier`).
- **Thresholds**: style 80, clarity 80, correctness 70; v0.7's correctness 80 accepted
  too; an escalated finding is never dropped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from qrspi_guard.contract.generations.model import (
    CONTRACT,
    MAX_DIGITS,
    FindingContract,
    Generation,
    Report,
    SidecarFacts,
    SidecarGrammar,
    Thresholds,
)

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic



def read_sidecar(text: str, grammar: SidecarGrammar, d: Report,
                 out: list[Diagnostic]) -> SidecarFacts:
    """Judge a `.score.yml` sidecar: `key: value` lines as the shell consumers split them."""
    facts = SidecarFacts()
    failed_word = CONTRACT.verify_failed
    key_name = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").fullmatch  # (re's cache: one compile)
    values: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip() == "---" or not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not key_name(key):
            out.append(d("sidecar_malformed", f"line {number} is not `key: value`",
                         line=number))
            return facts
        if key in values:
            out.append(d("duplicate_key", f"{key} appears more than once (line "
                         f"{values[key][1]} and line {number}); shell readers disagree on which "
                         "one counts", line=number, field=key))
            continue
        values[key] = (value.strip(), number)
    if "score" not in values:
        out.append(d("sidecar_malformed", "sidecar has no score line", line=1, field="score"))
        return facts
    score, score_line = values["score"]
    if score == failed_word:
        facts.verify_failed = True
    elif re.fullmatch(r"[+-]?[0-9]+", score, re.ASCII):
        digits = score.lstrip("+-")
        canonical = re.fullmatch(r"0|[1-9][0-9]*", score) is not None
        if (canonical or not grammar.leading_zero_is_error) and len(digits) <= MAX_DIGITS \
                and not score.startswith(("+", "-")) and int(digits) <= 100:
            facts.score = int(digits)
        else:
            out.append(d("score_out_of_range", f"score {_shown(score)} must be 0..100 with no "
                         "leading zero or sign", line=score_line, field="score", value=score))
    else:
        out.append(d("sidecar_malformed", f"score {_shown(score)} is neither an integer nor "
                     f"{failed_word}", line=score_line, field="score", value=score))
        return facts
    if grammar.reason_required and ("reason" not in values or not values["reason"][0]):
        out.append(d("sidecar_malformed", "sidecar has no reason", field="reason",
                     line=values.get("reason", ("", score_line))[1]))
    return facts


def _shown(value: Any) -> str:
    from qrspi_guard.contract.diagnostics import untrusted

    return f"'{untrusted(value)}'"


def sidecar_schema(contract: FindingContract) -> dict[str, Any]:
    """The JSON Schema of a `.score.yml` sidecar."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    failed = contract.verify_failed

    class Sidecar(BaseModel):
        """`<tag>.finding-F<NN>.score.yml`, written by the apply-fix verifier."""

        model_config = ConfigDict(extra="forbid", title="QRSPI verifier sidecar (apply-fix)")
        score: int | Literal[failed] = Field(  # type: ignore[valid-type]
            description=f"0..100, no leading zero; or {failed}")
        reason: str

    schema = Sidecar.model_json_schema()
    for option in schema["properties"]["score"].get("anyOf", []):
        if option.get("type") == "integer":
            option.update(minimum=0, maximum=100)
    return schema


APPLY_FIX = Generation(
    name="apply-fix",
    sidecar=SidecarGrammar(suffix=".score.yml", read=read_sidecar, schema_kind="sidecar",
                           schema=sidecar_schema, leading_zero_is_error=True,
                           reason_required=True),
    thresholds=Thresholds(style=80, clarity=80, correctness=70),
    also_accepted=(Thresholds(style=80, clarity=80, correctness=80),),
    escalation_keeps=True,
    verified_beside_suffix="-verified.md",
    contract=CONTRACT,
)
#: the generation module's one value, as the package's list reads it
GENERATION = APPLY_FIX
