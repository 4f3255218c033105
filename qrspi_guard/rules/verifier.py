"""The verifier's round results, recounted (contract §5, generations.md §3).

- apply-fix: the totals in `round-NN-verified.md` (frontmatter `scored`, `kept`,
  `dropped`, `failed`, `clean`) against a recount, accepted under either correctness
  threshold the generation allows;
- fan-in: `.verifier-fan-in-audit.json` and `kept-findings.txt` against
  ``verifier-fan-in.sh``'s own recount (:func:`fanin_recount`), exactly.

Pure: the engine reads the files and hands their parsed contents in.
"""

from __future__ import annotations

import os
from typing import Any

from qrspi_guard.contract.generations import DEFAULT_GENERATION, Generation, Thresholds
from qrspi_guard.contract.layout import Kind, is_fanin_finding_glob
from qrspi_guard.records import field, record
from qrspi_guard.rules.facts import FileFacts

TOTAL_KEYS = ("scored", "kept", "dropped", "failed", "clean")
AUDIT_KEYS = ("scored", "kept", "dropped", "halts")


# -- apply-fix: round-NN-verified.md --------------------------------------------------


def applyfix_recount(findings: list[FileFacts], sidecars: dict[tuple[str | None, int | None],
                                                                FileFacts],
                     cleans: int, thresholds: Thresholds, gen: Generation) -> dict[str, int]:
    scored = sum(1 for s in sidecars.values() if s.score is not None)
    failed = sum(1 for s in sidecars.values() if s.verify_failed)
    dropped = 0
    for f in findings:
        s = sidecars.get((f.tag, f.fnum))
        floor = thresholds.for_change_type(f.change_type)
        if (s is not None and s.score is not None and floor is not None
                and s.score < floor and not (gen.escalation_keeps and f.escalated)):
            dropped += 1
    return {"scored": scored, "kept": len(findings) - dropped, "dropped": dropped,
            "failed": failed, "clean": cleans}


def verified_totals_problem(name: str, totals: dict[str, Any] | None, error: str | None,
                            findings: list[FileFacts],
                            sidecars: dict[tuple[str | None, int | None], FileFacts],
                            cleans: int, gen: Generation) -> str | None:
    """Why `round-NN-verified.md`'s totals differ from every accepted recount, or None."""
    if error:
        return f"{name}: totals cannot be read ({error})"
    said = totals or {}
    counts = [applyfix_recount(findings, sidecars, cleans, t, gen)
              for t in (gen.thresholds, *gen.also_accepted)]
    if any(_agrees(said, c) for c in counts):
        return None
    shown = counts[0]
    wrong = []
    for key in TOTAL_KEYS:
        value = said.get(key)
        if value is None:
            wrong.append(f"{key} missing (recount {shown[key]})")
        elif not _is_int(value) or value != shown[key]:
            wrong.append(f"{key} says {_short(value)}, recount {shown[key]}")
    if not wrong:  # agrees at the other threshold only in part: name every total
        wrong = [f"{k} says {_short(said.get(k))}, recount {shown[k]}" for k in TOTAL_KEYS]
    return (f"{name} totals differ from a recount (thresholds {gen.thresholds.shown()}): "
            + "; ".join(wrong))


def _agrees(said: dict[str, Any], counted: dict[str, int]) -> bool:
    return all(_is_int(said.get(k)) and said.get(k) == counted[k] for k in TOTAL_KEYS)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(value: Any) -> str:
    from qrspi_guard.contract.diagnostics import untrusted

    return untrusted(repr(value) if not isinstance(value, str) else repr(value))[:40]


# -- fan-in: .verifier-fan-in-audit.json and kept-findings.txt ------------------------


@record
class FanInRecount:
    scored: int = 0
    kept: list[str] = field(default_factory=list)  #: file names, in name order
    dropped: int = 0
    halted: list[tuple[str, str]] = field(default_factory=list)  #: (file name, cause)


@record(frozen=True)
class GlobFinding:
    """One entry the fan-in counts: a `*.finding-F*.md` name that is not a sidecar."""

    name: str
    change_type: str  #: the fan-in's reading of its first `change_type:` line
    readable: bool = True


def fanin_recount(found: list[GlobFinding], sidecar_names: set[str],
                  sidecar_scores: dict[str, int], thresholds: Thresholds,
                  gen: Generation = DEFAULT_GENERATION,
                  unreadable_sidecars: frozenset[str] = frozenset()) -> FanInRecount:
    """``verifier-fan-in.sh``'s recount: every finding is scored; it halts on an
    unreadable finding, a missing or out-of-enum change_type, a missing,
    wrong-extension or unreadable sidecar (*unreadable_sidecars*: names that could not
    be read), or an unreadable score; otherwise score 0 drops, scope and intent keep,
    and style, clarity and correctness keep at or above their threshold. ``check``'s
    recount and ``fan-in`` (:mod:`qrspi_guard.loop.fanin`) both count through here."""
    out = FanInRecount()
    enum = gen.contract.change_types
    suffix = gen.sidecar.suffix
    for f in sorted(found, key=lambda f: f.name):
        out.scored += 1
        if not f.readable:
            out.halted.append((f.name, "finding_unreadable"))
            continue
        if not f.change_type:
            out.halted.append((f.name, "missing_change_type"))
            continue
        if f.change_type not in enum:
            out.halted.append((f.name, "change_type_out_of_enum"))
            continue
        stem = f.name[:-len(".md")]
        right = stem + suffix
        if right not in sidecar_names:
            other = any(n.startswith(stem + ".score.") for n in sidecar_names)
            out.halted.append((f.name, "sidecar_wrong_extension" if other else "missing_sidecar"))
            continue
        if right in unreadable_sidecars:
            out.halted.append((f.name, "sidecar_unreadable"))
            continue
        score = sidecar_scores.get(right)
        if score is None:
            out.halted.append((f.name, "score_unparseable"))
            continue
        floor = thresholds.for_change_type(f.change_type)
        if gen.zero_score_drops and score == 0:
            out.dropped += 1
        elif floor is None or score >= floor:
            out.kept.append(f.name)
        else:
            out.dropped += 1
    return out


@record
class Audit:
    """A parsed `.verifier-fan-in-audit.json` (or why it cannot be used)."""

    totals: dict[str, Any] = field(default_factory=dict)
    halts: int = 0
    thresholds: Thresholds = field(default_factory=Thresholds)
    problem: str | None = None  #: fanin_audit_malformed, when set


def parse_audit(doc: Any) -> Audit:
    """The audit's totals, halts and thresholds from its parsed JSON value."""
    if not isinstance(doc, dict):
        return Audit(problem="the audit is not a JSON object")
    missing = [k for k in AUDIT_KEYS if k not in doc]
    if missing:
        return Audit(problem=f"the audit lacks {', '.join(missing)}")
    if not isinstance(doc["halts"], list):
        return Audit(problem="the audit's halts is not a list")
    bad = [k for k in ("scored", "kept", "dropped") if not _is_int(doc[k])]
    if bad:
        return Audit(problem=f"the audit's {', '.join(bad)} is not an integer")
    thresholds = Thresholds()
    given = doc.get("thresholds")
    if given is not None:
        if not isinstance(given, dict) or not all(
                _is_int(given.get(k, 0)) for k in ("style", "clarity", "correctness")):
            return Audit(problem="the audit's thresholds is not a map of integers")
        thresholds = Thresholds(**{k: given[k] for k in ("style", "clarity", "correctness")
                                   if k in given})
    return Audit(totals={k: doc[k] for k in ("scored", "kept", "dropped")},
                 halts=len(doc["halts"]), thresholds=thresholds)


def audit_problem(audit: Audit, recount: FanInRecount) -> str | None:
    """How the audit's totals differ from the recount, or None."""
    counted = {"scored": recount.scored, "kept": len(recount.kept), "dropped": recount.dropped}
    wrong = [f"{k} says {audit.totals[k]}, recount {counted[k]}"
             for k in ("scored", "kept", "dropped") if audit.totals[k] != counted[k]]
    if not wrong:
        return None
    return (f".verifier-fan-in-audit.json totals differ from a recount (thresholds "
            f"{audit.thresholds.shown()}): " + "; ".join(wrong))


def kept_list_problem(lines: list[str], recount: FanInRecount, round_names: set[str],
                      audit_halts: int) -> str | None:
    """How `kept-findings.txt` differs from what the recount keeps, or None. Its paths
    are from the machine that ran the fan-in: compared by file name."""
    if audit_halts or recount.halted:
        who = "the audit records halts" if audit_halts else "the recount halts"
        return f"kept-findings.txt exists although {who} (the fan-in removes it on a halt)"
    listed = [os.path.basename(line) for line in lines]
    strays = sorted({n for n in listed if n not in round_names})
    named = set(listed)
    should = set(recount.kept)
    extra = sorted(named - should - set(strays))
    absent = sorted(should - named)
    parts = []
    if strays:
        parts.append("names files not in the round: " + _names(strays))
    if extra:
        parts.append("keeps what the recount drops or halts: " + _names(extra))
    if absent:
        parts.append("omits what the recount keeps: " + _names(absent))
    return "kept-findings.txt " + "; ".join(parts) if parts else None


def _names(names: list[str]) -> str:
    from qrspi_guard.contract.diagnostics import untrusted

    shown = ", ".join(untrusted(n) for n in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def glob_findings(files: list[FileFacts]) -> list[GlobFinding]:
    """The fan-in's findings among a round's judged files (names it counts)."""
    return [GlobFinding(f.name, f.fanin_change_type or "")
            for f in files if is_fanin_finding_glob(f.name)
            and f.kind in (Kind.FINDING, Kind.BAD_TAG, Kind.BAD_FINDING_NAME)]
