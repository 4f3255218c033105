"""The fan-in generation (v0.8 on; generations.md §1-§3): all of it in one module.

- **Evidence**: a `.score.md` sidecar, or either of the fan-in's outputs inside the round.
- **Sidecar**: `<tag>.finding-F<NN>.score.md`, `---` fences and free prose after them.
  The rule-carrying keys (``verifier_status``, ``score``, ``failure_reason``) are read
  line-wise from the frontmatter exactly as ``verifier-fan-in.sh``'s awk reads them
  (:func:`fanin_field`); every other key and the body are free.
- **Outputs** inside the round: ``.verifier-fan-in-audit.json`` and
  ``kept-findings.txt``, recounted by the round rules (:mod:`qrspi_guard.rules.verifier`).
- **Thresholds**: style 80, clarity 80, correctness 70; a score of 0 drops any finding.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

from qrspi_guard.contract.generations.model import (
    CONTRACT,
    FindingContract,
    Generation,
    Report,
    SidecarFacts,
    SidecarGrammar,
    Thresholds,
)

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic

KEPT_FINDINGS = "kept-findings.txt"
FANIN_AUDIT = ".verifier-fan-in-audit.json"

#: awk's [[:space:]] (the fan-in's field reader runs under awk)
_AWK_SPACE = " \t\n\v\f\r"
_RULE_KEYS = ("verifier_status", "score", "failure_reason")
_SCORE_PATTERN = r"[0-9]{1,3}"


# -- the fan-in's reading ---------------------------------------------------------------


@cache
def _fence() -> re.Pattern[str]:
    """A `---` line as the fan-in's awk sees one (compiled on first use: a hook call
    that judges a finding never needs it)."""
    return re.compile(r"---[ \t\n\v\f\r]*")


def frontmatter_lines(text: str) -> list[tuple[int, str]] | None:
    """(1-based line number, line) of the frontmatter as the fan-in's awk sees it: the
    lines after the first line that is `---` plus blanks, up to the next such line (or
    the end). None when the text has no such line at all."""
    lines = text.split("\n")
    fence = _fence().fullmatch
    opened = None
    for number, line in enumerate(lines, start=1):
        if fence(line):
            opened = number
            break
    if opened is None:
        return None
    out = []
    for number in range(opened + 1, len(lines) + 1):
        line = lines[number - 1]
        if fence(line):
            break
        out.append((number, line))
    return out


def fanin_field(fm: list[tuple[int, str]], field: str) -> tuple[str, int] | None:
    """The value of the first `field:` line, as verifier-fan-in.sh's
    ``extract_frontmatter_field`` prints it (leading blanks and blanks around the colon
    allowed, trailing blanks cut, one pair of surrounding quotes stripped), with its
    line number; None when no line names the field."""
    for number, line in fm:
        rest = line.lstrip(_AWK_SPACE)
        if not rest.startswith(field):
            continue
        rest = rest[len(field):].lstrip(_AWK_SPACE)
        if not rest.startswith(":"):
            continue
        value = rest[1:].lstrip(_AWK_SPACE).rstrip(_AWK_SPACE)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        return value, number
    return None


def fanin_score(text: str) -> int | None:
    """The score the fan-in reads from a `.score.md` sidecar: `^[0-9]{1,3}$` base 10 and
    at most 100; None when it would halt the finding (`score_unparseable`)."""
    fm = frontmatter_lines(text)
    got = fanin_field(fm, "score") if fm is not None else None
    if got is None or not re.fullmatch(_SCORE_PATTERN, got[0], re.ASCII):
        return None
    score = int(got[0], 10)
    return score if score <= 100 else None


# -- judging one sidecar --------------------------------------------------------------


def read_sidecar(text: str, grammar: SidecarGrammar, d: Report,
                 out: list[Diagnostic]) -> SidecarFacts:
    """Judge a `.score.md` sidecar's decoded text as the fan-in reads it."""
    facts = SidecarFacts()
    fm = frontmatter_lines(text)
    if fm is None:
        out.append(d("sidecar_malformed", "sidecar has no `---` frontmatter fences, so the "
                     "fan-in reads no score from it", line=1))
        return facts
    values: dict[str, tuple[str, int]] = {}
    for key in _RULE_KEYS:
        got = fanin_field(fm, key)
        if got is not None:
            values[key] = got
            _duplicate(fm, key, got[1], d, out)
    # the score as the fan-in reads it, whatever the status says (it never reads the
    # status: a failed sidecar with a score is scored), for the recount
    score = values.get("score")
    if score is not None and re.fullmatch(grammar.score_pattern, score[0], re.ASCII):
        value = int(score[0], 10)
        facts.score = value if value <= 100 else None
    status = values.get("verifier_status")
    if status is not None and status[0] not in grammar.statuses:
        out.append(d("sidecar_malformed", f"verifier_status {_shown(status[0])} is neither "
                     f"{' nor '.join(grammar.statuses)}", line=status[1],
                     field="verifier_status", value=status[0]))
        return facts
    if status is not None and status[0] == grammar.failed_status:
        facts.verify_failed = True
        key = grammar.failure_reason_key or "failure_reason"
        reason = values.get(key)
        if reason is None or not reason[0].strip():
            out.append(d("sidecar_malformed", f"a failed sidecar needs a non-blank {key}",
                         line=reason[1] if reason else status[1], field=key))
        return facts
    if score is None or not score[0]:
        out.append(d("sidecar_malformed", "sidecar has no `score:` line in its frontmatter "
                     "(and is not verifier_status: failed)", line=score[1] if score else 1,
                     field="score"))
    elif not re.fullmatch(grammar.score_pattern, score[0], re.ASCII):
        out.append(d("sidecar_malformed", f"score {_shown(score[0])} is not an integer of "
                     "one to three digits, which is all the fan-in reads", line=score[1],
                     field="score", value=score[0]))
    elif facts.score is None:
        out.append(d("score_out_of_range", f"score {_shown(score[0])} is over 100",
                     line=score[1], field="score", value=score[0]))
    return facts


def _duplicate(fm: list[tuple[int, str]], key: str, first: int, d: Report,
               out: list[Diagnostic]) -> None:
    later = [(n, line) for n, line in fm if n > first]
    again = fanin_field(later, key)
    if again is not None:
        out.append(d("duplicate_key", f"{key} appears more than once (line {first} and line "
                     f"{again[1]}); the fan-in reads the first, other readers may not",
                     line=again[1], field=key))


def _shown(value: Any) -> str:
    from qrspi_guard.contract.diagnostics import untrusted

    return f"'{untrusted(value)}'"


def sidecar_schema(contract: FindingContract) -> dict[str, Any]:
    """The JSON Schema of a `.score.md` sidecar's frontmatter."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    statuses = FAN_IN.sidecar.statuses

    class FanInSidecar(BaseModel):
        """Frontmatter of `<tag>.finding-F<NN>.score.md`, written by the fan-in verifier
        (the prose after it is free)."""

        model_config = ConfigDict(extra="allow", title="QRSPI verifier sidecar (fan-in)")
        verifier_status: Literal[statuses] | None = Field(  # type: ignore[valid-type]
            None, description="absent is accepted with a score")
        score: int | None = Field(None, ge=0, le=100,
                                  description="required unless verifier_status is failed")
        failure_reason: str | None = Field(None, description="required when failed")
        actual_model: str | None = None
        defect_class: str | None = Field(None, pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=30)
        reason: str | None = None

    return FanInSidecar.model_json_schema()


FAN_IN = Generation(
    name="fan-in",
    sidecar=SidecarGrammar(suffix=".score.md", read=read_sidecar,
                           schema_kind="fanin-sidecar", schema=sidecar_schema,
                           leading_zero_is_error=False, statuses=("passed", "failed"),
                           failed_status="failed", failure_reason_key="failure_reason",
                           score_pattern=_SCORE_PATTERN),
    thresholds=Thresholds(style=80, clarity=80, correctness=70),
    zero_score_drops=True,
    outputs=((KEPT_FINDINGS, "kept_list"), (FANIN_AUDIT, "fanin_audit")),
    clean_round_optional=True,
    contract=CONTRACT,
)
#: the generation module's one value, as the package's list reads it
GENERATION = FAN_IN
