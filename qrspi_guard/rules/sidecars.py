"""Verifier sidecars, in both generations' grammars (contract §4, generations.md §2).

A sidecar is read the way its consumer reads it, never as YAML:

- ``.score.yml`` (apply-fix): plain ``key: value`` lines, fences tolerated, as the
  shell consumers split them (the first ``:`` splits, so a reason holding ``: `` is fine).
- ``.score.md`` (fan-in): the rule-carrying keys (``verifier_status``, ``score``,
  ``failure_reason``) are read line-wise from the frontmatter exactly as
  ``verifier-fan-in.sh``'s awk reads them (:func:`fanin_field`); every other key and
  the body are free.

Which suffix a round should have is a round-level question (its generation); here each
file is judged by its own suffix's grammar.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from qrspi_guard.contract.diagnostics import Diagnostic, untrusted
from qrspi_guard.contract.generations import APPLY_FIX, FAN_IN, SidecarGrammar
from qrspi_guard.contract.layout import MAX_DIGITS

Report = Callable[..., Diagnostic]

#: awk's [[:space:]] (the fan-in's field reader runs under awk)
_AWK_SPACE = " \t\n\v\f\r"
_FENCE_RE = re.compile(r"---[ \t\n\v\f\r]*")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RULE_KEYS = ("verifier_status", "score", "failure_reason")


def grammar_for(suffix: str | None) -> SidecarGrammar | None:
    """The grammar of a sidecar suffix (None for a suffix neither generation writes)."""
    for gen in (APPLY_FIX, FAN_IN):
        if gen.sidecar.suffix == suffix:
            return gen.sidecar
    return None


# -- the fan-in's reading ---------------------------------------------------------------


def frontmatter_lines(text: str) -> list[tuple[int, str]] | None:
    """(1-based line number, line) of the frontmatter as the fan-in's awk sees it: the
    lines after the first line that is `---` plus blanks, up to the next such line (or
    the end). None when the text has no such line at all."""
    lines = text.split("\n")
    opened = None
    for number, line in enumerate(lines, start=1):
        if _FENCE_RE.fullmatch(line):
            opened = number
            break
    if opened is None:
        return None
    out = []
    for number in range(opened + 1, len(lines) + 1):
        line = lines[number - 1]
        if _FENCE_RE.fullmatch(line):
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
    if got is None or not re.fullmatch(FAN_IN.sidecar.score_pattern, got[0], re.ASCII):
        return None
    score = int(got[0], 10)
    return score if score <= 100 else None


# -- judging one sidecar --------------------------------------------------------------


class SidecarFacts:
    """What the round rules need from a sidecar."""

    __slots__ = ("score", "verify_failed")

    def __init__(self) -> None:
        self.score: int | None = None  #: the readable score, 0..100
        self.verify_failed = False


def judge_sidecar(text: str, suffix: str | None, d: Report,
                  out: list[Diagnostic]) -> SidecarFacts:
    """Judge a sidecar's decoded text by its suffix's grammar."""
    grammar = grammar_for(suffix)
    facts = SidecarFacts()
    if grammar is None or grammar.layout == "lines":
        _judge_lines(text, facts, d, out)
    else:
        _judge_fanin(text, grammar, facts, d, out)
    return facts


def _judge_fanin(text: str, grammar: SidecarGrammar, facts: SidecarFacts, d: Report,
                 out: list[Diagnostic]) -> None:
    fm = frontmatter_lines(text)
    if fm is None:
        out.append(d("sidecar_malformed", "sidecar has no `---` frontmatter fences, so the "
                     "fan-in reads no score from it", line=1))
        return
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
        return
    if status is not None and status[0] == grammar.failed_status:
        facts.verify_failed = True
        key = grammar.failure_reason_key or "failure_reason"
        reason = values.get(key)
        if reason is None or not reason[0].strip():
            out.append(d("sidecar_malformed", f"a failed sidecar needs a non-blank {key}",
                         line=reason[1] if reason else status[1], field=key))
        return
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


def _duplicate(fm: list[tuple[int, str]], key: str, first: int, d: Report,
               out: list[Diagnostic]) -> None:
    later = [(n, line) for n, line in fm if n > first]
    again = fanin_field(later, key)
    if again is not None:
        out.append(d("duplicate_key", f"{key} appears more than once (line {first} and line "
                     f"{again[1]}); the fan-in reads the first, other readers may not",
                     line=again[1], field=key))


def _judge_lines(text: str, facts: SidecarFacts, d: Report, out: list[Diagnostic]) -> None:
    """Apply-fix: `key: value` lines as the shell consumers split them."""
    grammar = APPLY_FIX.sidecar
    failed_word = APPLY_FIX.contract.verify_failed
    values: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip() == "---" or not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or not _KEY_RE.fullmatch(key):
            out.append(d("sidecar_malformed", f"line {number} is not `key: value`",
                         line=number))
            return
        if key in values:
            out.append(d("duplicate_key", f"{key} appears more than once (line "
                         f"{values[key][1]} and line {number}); shell readers disagree on which "
                         "one counts", line=number, field=key))
            continue
        values[key] = (value.strip(), number)
    if "score" not in values:
        out.append(d("sidecar_malformed", "sidecar has no score line", line=1, field="score"))
        return
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
        return
    if grammar.reason_required and ("reason" not in values or not values["reason"][0]):
        out.append(d("sidecar_malformed", "sidecar has no reason", field="reason",
                     line=values.get("reason", ("", score_line))[1]))


def _shown(value: Any) -> str:
    return f"'{untrusted(value)}'"
