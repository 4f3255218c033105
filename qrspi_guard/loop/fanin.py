"""``fan-in ROUND_DIR``'s core: the round in, the audit, the kept list and the halts out.

:func:`count_round` reads a round the way ``verifier-fan-in.sh`` does (its glob, the
first ``change_type:`` and ``score:`` lines, through the readers ``check``'s recount
uses: :func:`qrspi_guard.rules.filejudge.fanin_change_type`,
:func:`~qrspi_guard.rules.filejudge.fanin_score_of`,
:func:`~qrspi_guard.rules.verifier.fanin_recount`), so ``check`` agrees with what is
written. :func:`plan_fan_in` adds the judge's errors on the round (loop.md "fan-in"):
halts under ``--halt-on all``, ``guard_errors`` under ``--halt-on upstream``, with a
guard cause that means the same as upstream's reported once, under upstream's name.
:func:`render_audit` gives the audit's bytes as upstream's ``jq`` writes them.

Reads, never writes; no printing, no exits (the writer is :mod:`.fanin_write`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any, Literal

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations import CONTRACT
from qrspi_guard.contract.generations.fan_in import (
    FAN_IN,
    FANIN_AUDIT,
    KEPT_FINDINGS,
    fanin_field,
    frontmatter_lines,
)
from qrspi_guard.contract.layout import is_fanin_finding_glob
from qrspi_guard.errors import UnreadablePath
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.reader import ReadFailure, list_round, read_bytes
from qrspi_guard.records import field, record
from qrspi_guard.rules.filejudge import FAN_IN_SUFFIX, fanin_change_type, fanin_score_of
from qrspi_guard.rules.verifier import GlobFinding, fanin_recount

HaltOn = Literal["all", "upstream"]
HALT_ON: tuple[HaltOn, ...] = ("all", "upstream")

#: upstream's seven halt causes (verifier-fan-in.sh's taxonomy), spelled as it does
UPSTREAM_CAUSES = ("missing_change_type", "change_type_out_of_enum", "missing_sidecar",
                   "sidecar_wrong_extension", "sidecar_unreadable", "finding_unreadable",
                   "score_unparseable")
#: the fan-in's own outputs: replaced by this run, so never judged before it
OWN_OUTPUTS = frozenset({FANIN_AUDIT, KEPT_FINDINGS})
#: causes about those outputs (the judge names the round's audit and kept list)
OWN_OUTPUT_CAUSES = frozenset({"fanin_audit_malformed", "fanin_audit_mismatch",
                               "kept_findings_mismatch"})
#: causes that need a run's config.md: not reported outside a run's layout (loop.md)
RUN_ONLY_CAUSES = frozenset({"config_missing", "expected_tag_no_output", "unrouted_tag"})
#: (guard cause, on the sidecar?) -> the upstream cause that means the same
_SAME = {("missing_change_type", False): "missing_change_type",
         ("change_type_out_of_enum", False): "change_type_out_of_enum",
         ("sidecar_missing", False): "missing_sidecar",
         ("unreadable_file", False): "finding_unreadable",
         ("unreadable_file", True): "sidecar_unreadable",
         ("sidecar_wrong_extension", True): "sidecar_wrong_extension",
         ("sidecar_malformed", True): "score_unparseable",
         ("score_out_of_range", True): "score_unparseable"}


@record(frozen=True)
class Halt:
    finding_id: str
    cause: str

    def as_dict(self) -> dict[str, str]:
        return {"finding_id": self.finding_id, "cause": self.cause}


@record
class Count:
    """The round as ``verifier-fan-in.sh`` counts it."""

    round_dir: str  #: absolute, symbolic links resolved (the script's ``pwd -P``)
    scored: int = 0
    kept: list[str] = field(default_factory=list)  #: kept finding names, in name order
    dropped: int = 0
    halts: list[Halt] = field(default_factory=list)
    halted: dict[str, str] = field(default_factory=dict)  #: finding name -> its cause
    findings: set[str] = field(default_factory=set)  #: every name the glob counts
    #: usable finding_id (the contract's pattern) per finding name, for guard halts
    ids: dict[str, str] = field(default_factory=dict)
    #: (what, name) of each file that could not be read, for stderr
    unreadable: list[tuple[str, str]] = field(default_factory=list)


@record
class FanIn:
    """What one fan-in run writes and says."""

    count: Count
    halt_on: HaltOn
    halts: list[Halt]  #: upstream's, then (``--halt-on all``) the guard's
    guard_errors: list[dict[str, str]]  #: ``--halt-on upstream``: the guard's other errors
    audit: dict[str, Any]

    @property
    def halted(self) -> bool:
        return bool(self.halts)

    @property
    def first_cause(self) -> str | None:
        return self.halts[0].cause if self.halts else None

    def kept_list(self) -> bytes:
        """``kept-findings.txt``: one absolute path per line, empty when none is kept."""
        return b"".join(os.fsencode(os.path.join(self.count.round_dir, n)) + b"\n"
                        for n in self.count.kept)


def _stem(name: str) -> str:
    return name[:-3] if name.endswith(".md") else name


def _shown(name: str) -> str:
    """A name as upstream's jq would print it: bytes that are not UTF-8 replaced."""
    return os.fsencode(name).decode("utf-8", "replace")


def count_round(round_dir: str, opened: int | None = None) -> Count:
    """Read and count *round_dir* as ``verifier-fan-in.sh`` does (through the open
    directory *opened* when given). Raises :class:`~qrspi_guard.errors.UnreadablePath`
    when the directory cannot be listed."""
    real = os.path.realpath(round_dir)
    try:
        dir_fd = os.open(real if opened is None else ".",
                         os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), dir_fd=opened)
    except OSError as exc:
        raise UnreadablePath(f"round-dir cannot be read: {exc.strerror or exc}") from None
    listing = list_round(dir_fd)
    if isinstance(listing, ReadFailure):
        os.close(dir_fd)
        raise UnreadablePath(f"round-dir {listing.message}")
    names = {e.name for e in listing}
    out = Count(real)
    found: list[GlobFinding] = []
    upstream_ids: dict[str, str] = {}
    scores: dict[str, int] = {}
    unreadable: set[str] = set()
    try:
        for name in sorted(n for n in names if is_fanin_finding_glob(n)):
            out.findings.add(name)
            data = read_bytes(name, dir_fd=dir_fd)
            if isinstance(data, ReadFailure):
                found.append(GlobFinding(name, "", readable=False))
                out.unreadable.append(("finding", name))
                continue
            change_type = fanin_change_type(data)
            found.append(GlobFinding(name, change_type))
            lines = frontmatter_lines(data.decode("utf-8", "replace"))
            got = fanin_field(lines, "finding_id") if lines is not None else None
            upstream_ids[name] = got[0] if got and got[0] else _shown(_stem(name))
            if got and CONTRACT.finding_id_re.fullmatch(got[0]):
                out.ids[name] = got[0]
            sidecar = _stem(name) + FAN_IN_SUFFIX
            if change_type in CONTRACT.change_types and sidecar in names:
                side = read_bytes(sidecar, dir_fd=dir_fd)
                if isinstance(side, ReadFailure):
                    unreadable.add(sidecar)
                    out.unreadable.append(("sidecar", sidecar))
                else:
                    score = fanin_score_of(side)
                    if score is not None:
                        scores[sidecar] = score
    finally:
        os.close(dir_fd)
    recount = fanin_recount(found, names, scores, FAN_IN.thresholds, FAN_IN,
                            frozenset(unreadable))
    out.scored, out.kept, out.dropped = recount.scored, recount.kept, recount.dropped
    for name, cause in recount.halted:
        out.halted[name] = cause
        fid = _shown(_stem(name)) if cause == "finding_unreadable" else upstream_ids[name]
        out.halts.append(Halt(fid, cause))
    return out


def own_output(d: Diagnostic) -> bool:
    """A diagnostic about the fan-in's own outputs from an earlier run."""
    return d.cause in OWN_OUTPUT_CAUSES or (d.file is not None and d.file in OWN_OUTPUTS)


def _owner(count: Count, name: str | None) -> tuple[str | None, bool]:
    """(the counted finding *name* is or belongs to, whether *name* is its sidecar)."""
    if name is None:
        return None, False
    if name in count.findings:
        return name, False
    head, dot, _ = name.rpartition(".score.")
    if dot and head + ".md" in count.findings:
        return head + ".md", True
    return None, False


def _label(count: Count, d: Diagnostic) -> str:
    """The halt's finding_id: the finding's usable id, else the file stem, else the tag
    or the last part of the path the diagnostic names."""
    owner, _ = _owner(count, d.file)
    if owner is not None and owner in count.ids:
        return count.ids[owner]
    if d.file:
        return _shown(_stem(owner or d.file))
    if d.tag:
        return d.tag
    return _shown(os.path.basename(os.path.normpath(d.path)) if d.path else "")


def guard_errors(count: Count, diags: Iterable[Diagnostic]) -> list[tuple[Halt, Diagnostic]]:
    """The judge's errors on the round that upstream's halts do not already say, in the
    judge's order, one per (finding_id, cause)."""
    out: list[tuple[Halt, Diagnostic]] = []
    seen: set[Halt] = set()
    for d in diags:
        if d.level != "error" or own_output(d):
            continue
        owner, on_sidecar = _owner(count, d.file)
        same = _SAME.get((d.cause, on_sidecar))
        if owner is not None and same is not None and same == count.halted.get(owner):
            continue  # upstream names it already, under its own name
        halt = Halt(_label(count, d), d.cause)
        if halt not in seen:
            seen.add(halt)
            out.append((halt, d))
    return out


def line_broken(name: str | None) -> bool:
    """A name ``kept-findings.txt`` (one path per line) cannot carry."""
    return name is not None and ("\n" in name or "\r" in name)


def plan_fan_in(count: Count, diags: Iterable[Diagnostic], halt_on: HaltOn = "all") -> FanIn:
    """The run's outcome from the count and the judge's diagnostics on the round (as it
    will stand: diagnostics about the fan-in's own earlier outputs are left out). A
    finding whose name holds a line break (``bad_finding_filename``) halts under either
    ``--halt-on``: kept, it would put lines in the kept list that are no kept finding."""
    extra = guard_errors(count, diags)
    halts = list(count.halts)
    errors: list[dict[str, str]] = []
    if halt_on == "all":
        halts.extend(h for h, _ in extra)
    else:
        halts.extend(h for h, d in extra if line_broken(d.file))
        errors = [{**h.as_dict(), "message": d.message} for h, d in extra
                  if not line_broken(d.file)]
    audit: dict[str, Any] = {
        "scored": count.scored, "kept": len(count.kept), "dropped": count.dropped,
        "halts": [h.as_dict() for h in halts],
        "thresholds": FAN_IN.thresholds.as_dict(),
    }
    if errors:
        audit["guard_errors"] = errors
    return FanIn(count, halt_on, halts, errors, audit)


class _JqEncoder(json.JSONEncoder):
    """jq's string escapes: Python's, plus DEL as ``\\u007f``."""

    def iterencode(self, o: Any, _one_shot: bool = False) -> Any:
        for chunk in super().iterencode(o, _one_shot):
            yield chunk.replace("\x7f", "\\u007f")


def render_audit(audit: dict[str, Any]) -> bytes:
    """The audit's bytes, as ``jq -n`` prints the same object (two-space indent, keys in
    upstream's order, non-ASCII as UTF-8)."""
    text = jsondoc.dumps(audit, indent=2, ensure_ascii=False, cls=_JqEncoder) + "\n"
    return text.encode("utf-8", "surrogateescape")
