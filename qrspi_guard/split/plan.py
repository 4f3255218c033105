"""`split`'s decision: a reviewer's stdout and a round's listing -> a :class:`SplitPlan`.

Nothing here touches the disk. :func:`plan_split` parses the stdout
(:mod:`.grammar`), numbers the blocks, settles the round of a pseudo-round
(:mod:`.target`), validates each block with the same per-file rules as ``check`` (on the
name it will get and the round's place), applies the mixing rule to the listing it is
given, and returns what to write, what to remove, the diagnostics and the exit code.
:mod:`.io` carries a plan out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.layout import Kind, RoundRef, classify
from qrspi_guard.records import field, record
from qrspi_guard.rules.facts import Place
from qrspi_guard.rules.filejudge import judge_file
from qrspi_guard.rules.rounds import RoundFacts, tag_rules
from qrspi_guard.split.grammar import (
    InputKind,
    Parsed,
    clean_name,
    clean_sentinel,
    finding_name,
    parse_stdout,
)
from qrspi_guard.split.target import Target, infer_round

EXIT_OK = 0
EXIT_REFUSED = 1  #: malformed stdout, a block failing validation, mixing with earlier output
EXIT_USAGE = 2  #: wrong arguments, round directory missing, I/O failure


@record(frozen=True)
class Write:
    """One file to create in the round directory."""

    name: str
    data: bytes


@record
class SplitPlan:
    """What split will do, as data; the CLI prints it and :mod:`.io` carries it out."""

    round_dir: str
    tag: str
    parsed: Parsed
    writes: list[Write] = field(default_factory=list)  #: in rename order
    removals: list[str] = field(default_factory=list)  #: the tag's earlier output (--replace)
    existing: list[str] = field(default_factory=list)  #: the tag's earlier output, found
    unchanged: list[str] = field(default_factory=list)  #: a rerun: these already hold it
    diagnostics: list[Diagnostic] = field(default_factory=list)  #: validation and mixing
    problems: list[str] = field(default_factory=list)  #: non-cause failures (one line each)
    exit_code: int = EXIT_OK

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def files(self) -> list[str]:
        """The names that stand for this stdout in the round once the plan is done."""
        return [w.name for w in self.writes] or list(self.unchanged)


def round_text(ref: RoundRef) -> str:
    """The round as the directory spells it (`round-03` -> `03`), as the reference writes."""
    return Target.of(ref).round_text or ""


def earlier_output(tag: str, names: Iterable[str]) -> list[str]:
    """The tag's findings, sidecars and clean sentinel among a directory's entry names."""
    kinds = (Kind.FINDING, Kind.SIDECAR, Kind.CLEAN)
    found = []
    for name in names:
        fname = classify(name)
        if fname.kind in kinds and fname.tag == tag:
            found.append(name)
    return sorted(found)


def _malformed(parsed: Parsed) -> str | None:
    if parsed.kind is InputKind.EMPTY:
        return "malformed input: the reviewer's stdout is empty"
    if parsed.kind is InputKind.NO_BOUNDARY:
        text = "malformed input: no <<<FINDING-BOUNDARY>>> line and no NO_FINDINGS sentinel"
        return text + (f" ({parsed.hint})" if parsed.hint else "")
    if parsed.kind is InputKind.FINDINGS and not parsed.blocks:
        return (f"malformed input: {parsed.boundaries} boundary line(s) but every block is "
                "blank; no finding to write")
    return None


def plan_split(stdout: bytes, target: Target | RoundRef, tag: str,
               existing_names: Iterable[str], replace: bool = False,
               reject_invalid: bool = False,
               existing_data: Mapping[str, bytes | None] | None = None) -> SplitPlan:
    """Decide everything split will do, from the stdout and the directory's entry names.

    *tag* must already match the tag grammar (the CLI refuses it otherwise).
    *existing_data* holds the bytes of the tag's earlier files (None: not a regular
    file); when they are exactly the files this stdout gives, the plan is a rerun that
    changes nothing, rather than `split_would_mix_attempts`.
    """
    if isinstance(target, RoundRef):
        target = Target.of(target)
    parsed = parse_stdout(stdout)
    plan = SplitPlan(target.round_dir, tag, parsed)
    problem = _malformed(parsed)
    if problem is not None:
        plan.problems.append(problem)
        plan.exit_code = EXIT_REFUSED
        return plan

    if parsed.kind is InputKind.NO_FINDINGS:
        writes = [Write(clean_name(tag), clean_sentinel(tag, target.round_text))]
    else:
        writes = [Write(finding_name(tag, i), block)
                  for i, block in enumerate(parsed.blocks, start=1)]
        target, disagreement = infer_round(target, parsed.blocks, [w.name for w in writes])
        plan.diagnostics.extend(disagreement)
    plan.diagnostics.extend(validate(writes, target))

    plan.existing = earlier_output(tag, existing_names)
    if plan.existing and _same_files(plan.existing, writes, existing_data):
        plan.unchanged = list(plan.existing)
        plan.exit_code = EXIT_REFUSED if plan.errors else EXIT_OK
        return plan
    if plan.existing and not replace:
        shown = ", ".join(plan.existing[:3]) + (" ..." if len(plan.existing) > 3 else "")
        plan.diagnostics.append(diag(
            "split_would_mix_attempts",
            f"{tag} already has {len(plan.existing)} file(s) in the round ({shown}) that "
            "differ from this stdout's; pass --replace to swap that attempt for this one",
            path=target.round_dir, tag=tag, step=target.step, round=target.round))
        plan.exit_code = EXIT_REFUSED
        return plan
    failed = bool(plan.errors)
    if failed and reject_invalid:
        plan.exit_code = EXIT_REFUSED
        return plan
    plan.writes = writes
    plan.removals = list(plan.existing) if replace else []
    plan.exit_code = EXIT_REFUSED if failed else EXIT_OK
    return plan


def _same_files(existing: list[str], writes: list[Write],
                data: Mapping[str, bytes | None] | None) -> bool:
    """The tag's earlier files are exactly the new ones, byte for byte (a rerun)."""
    if data is None or sorted(existing) != sorted(w.name for w in writes):
        return False
    return all(data.get(w.name) == w.data for w in writes)


def validate(writes: list[Write], target: Target | RoundRef) -> list[Diagnostic]:
    """The per-file rules of ``check`` on each file as it will be named and placed, plus
    the tag rules over the new files alone (`duplicate_finding_id`)."""
    if isinstance(target, RoundRef):
        target = Target.of(target)
    out: list[Diagnostic] = []
    facts = []
    for write in writes:
        fname = classify(write.name)
        place = Place(os.path.join(target.round_dir, write.name), target.step, target.round,
                      target.is_task)
        report = judge_file(fname, write.data, place)
        diags = report.diagnostics
        if fname.kind is Kind.CLEAN and target.round_text is None:
            # written without `round` on purpose, as upstream's fan-in splitter does
            diags = [d for d in diags if d.cause != "missing_round"]
        out.extend(diags)
        facts.append(report.facts)
    rf = RoundFacts(path=target.round_dir, step=target.step, round=target.round or 0,
                    is_task=target.is_task, files=facts)
    out.extend(tag_rules(rf))
    return out
