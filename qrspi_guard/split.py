"""`split`'s pure core: a sandboxed reviewer's stdout -> the files it stands for (split.md).

Nothing here touches the disk. :func:`parse_stdout` applies the input grammar to the
raw bytes; :func:`plan_split` numbers the blocks, validates each one with the same
per-file rules as ``check`` (on the name it will get and the round directory's place),
applies the mixing rule to the directory listing it is given, and returns a
:class:`SplitPlan`: what to write, what to remove, the diagnostics and the exit code.
:mod:`qrspi_guard.splitio` carries a plan out, all or nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from qrspi_guard.diagnostics import Diagnostic, diag
from qrspi_guard.discover import RoundRef
from qrspi_guard.layout import TAG_RE, Kind, classify
from qrspi_guard.rules.files import Place, judge_file
from qrspi_guard.rules.rounds import RoundFacts, tag_rules

BOUNDARY = b"<<<FINDING-BOUNDARY>>>"
SENTINEL = b"NO_FINDINGS"
#: The only two byte strings that are the zero-findings sentinel.
SENTINELS: frozenset[bytes] = frozenset({SENTINEL, SENTINEL + b"\n"})

EXIT_OK = 0
EXIT_REFUSED = 1  #: malformed stdout, a block failing validation, mixing with earlier output
EXIT_USAGE = 2  #: wrong arguments, round directory missing, I/O failure


class InputKind(Enum):
    FINDINGS = "findings"
    NO_FINDINGS = "no_findings"
    EMPTY = "empty"  #: zero bytes or a lone newline (as the reference)
    NO_BOUNDARY = "no_boundary"  #: neither a boundary line nor the sentinel


@dataclass(frozen=True)
class Parsed:
    """The stdout after the grammar: its kind, and the non-blank blocks in order."""

    kind: InputKind
    blocks: tuple[bytes, ...] = ()  #: each block's bytes, stripped, ending in one b"\n"
    boundaries: int = 0  #: boundary lines met (blank blocks included)
    hint: str | None = None  #: for a malformed input: a near miss worth naming


@dataclass(frozen=True)
class Write:
    """One file to create in the round directory."""

    name: str
    data: bytes


@dataclass
class SplitPlan:
    """What split will do, as data; the CLI prints it and :mod:`splitio` carries it out."""

    round_dir: str
    tag: str
    parsed: Parsed
    writes: list[Write] = field(default_factory=list)  #: in rename order
    removals: list[str] = field(default_factory=list)  #: the tag's earlier output (--replace)
    existing: list[str] = field(default_factory=list)  #: the tag's earlier output, found
    diagnostics: list[Diagnostic] = field(default_factory=list)  #: validation and mixing
    problems: list[str] = field(default_factory=list)  #: non-cause failures (one line each)
    exit_code: int = EXIT_OK

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.level == "error"]

    @property
    def will_write(self) -> bool:
        return bool(self.writes)


def tag_is_valid(tag: str) -> bool:
    return bool(TAG_RE.fullmatch(tag))


def finding_name(tag: str, number: int) -> str:
    """`quality-codex.finding-F07.md`; F100 follows F99."""
    return f"{tag}.finding-F{number:02d}.md"


def clean_name(tag: str) -> str:
    return f"{tag}.clean.md"


def _is_blank(line: bytes) -> bool:
    """Blank as the reference's awk `NF==0`: only spaces and tabs (a lone CR is not)."""
    return not line.strip(b" \t")


def _block(lines: list[bytes]) -> bytes | None:
    """Leading and trailing blank lines dropped; None when nothing is left."""
    start, end = 0, len(lines)
    while start < end and _is_blank(lines[start]):
        start += 1
    while end > start and _is_blank(lines[end - 1]):
        end -= 1
    if start == end:
        return None
    return b"\n".join(lines[start:end]) + b"\n"


def _near_miss(lines: list[bytes]) -> str | None:
    for number, line in enumerate(lines, start=1):
        if line != BOUNDARY and line.strip() == BOUNDARY:
            how = "is indented" if line[:1].isspace() else "has trailing characters (CR?)"
            return f"line {number} looks like a boundary but {how}; boundaries must be exact"
    return None


def parse_stdout(data: bytes) -> Parsed:
    """Apply the input grammar (split.md) to a reviewer's raw stdout."""
    if data in SENTINELS:
        return Parsed(InputKind.NO_FINDINGS)
    if data in (b"", b"\n"):
        return Parsed(InputKind.EMPTY)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the final newline ends the last line; it does not start a new one
    blocks: list[bytes] = []
    current: list[bytes] | None = None  # None: still in the preamble
    boundaries = 0
    for line in lines:
        if line == BOUNDARY:
            boundaries += 1
            if current is not None:
                block = _block(current)
                if block is not None:
                    blocks.append(block)
            current = []
        elif current is not None:
            current.append(line)
    if boundaries == 0:
        hint = _near_miss(lines)
        if hint is None and data.rstrip(b"\r\n \t") == SENTINEL:
            hint = "stdout looks like NO_FINDINGS but is not byte-exact " \
                   "(only NO_FINDINGS or NO_FINDINGS plus one LF is the sentinel)"
        return Parsed(InputKind.NO_BOUNDARY, hint=hint)
    assert current is not None
    block = _block(current)
    if block is not None:
        blocks.append(block)
    return Parsed(InputKind.FINDINGS, tuple(blocks), boundaries)


def clean_sentinel(tag: str, round_text: str) -> bytes:
    """The reference's clean sentinel; *round_text* is the directory's digits (`01`)."""
    return f"---\nreviewer: {tag}\nround: {round_text}\nfindings: 0\n---\n".encode()


def round_text(ref: RoundRef) -> str:
    """The round as the directory spells it (`round-03` -> `03`), as the reference writes."""
    name = os.path.basename(os.path.abspath(ref.round_dir))
    return name[len("round-"):]


def earlier_output(tag: str, names: Iterable[str]) -> list[str]:
    """The tag's findings, sidecars and clean sentinel among a directory's entry names."""
    kinds = (Kind.FINDING, Kind.SIDECAR, Kind.CLEAN)
    found = []
    for name in names:
        fname = classify(name)
        if fname.kind in kinds and fname.tag == tag:
            found.append(name)
    return sorted(found)


def plan_split(stdout: bytes, ref: RoundRef, tag: str, existing_names: Iterable[str],
               replace: bool = False, reject_invalid: bool = False) -> SplitPlan:
    """Decide everything split will do, from the stdout and the directory's entry names.

    *tag* must already match the tag grammar (the CLI refuses it otherwise).
    """
    parsed = parse_stdout(stdout)
    plan = SplitPlan(ref.round_dir, tag, parsed)
    if parsed.kind is InputKind.EMPTY:
        plan.problems.append("malformed input: the reviewer's stdout is empty")
        plan.exit_code = EXIT_REFUSED
        return plan
    if parsed.kind is InputKind.NO_BOUNDARY:
        text = "malformed input: no <<<FINDING-BOUNDARY>>> line and no NO_FINDINGS sentinel"
        plan.problems.append(text + (f" ({parsed.hint})" if parsed.hint else ""))
        plan.exit_code = EXIT_REFUSED
        return plan
    if parsed.kind is InputKind.FINDINGS and not parsed.blocks:
        plan.problems.append(f"malformed input: {parsed.boundaries} boundary line(s) but every "
                             "block is blank; no finding to write")
        plan.exit_code = EXIT_REFUSED
        return plan

    if parsed.kind is InputKind.NO_FINDINGS:
        writes = [Write(clean_name(tag), clean_sentinel(tag, round_text(ref)))]
    else:
        writes = [Write(finding_name(tag, i), block)
                  for i, block in enumerate(parsed.blocks, start=1)]
    plan.diagnostics.extend(validate(writes, ref))

    plan.existing = earlier_output(tag, existing_names)
    if plan.existing and not replace:
        shown = ", ".join(plan.existing[:3]) + (" ..." if len(plan.existing) > 3 else "")
        plan.diagnostics.append(diag(
            "split_would_mix_attempts",
            f"{tag} already has {len(plan.existing)} file(s) in the round ({shown}); "
            "pass --replace to swap that attempt for this one",
            path=ref.round_dir, tag=tag, step=ref.step, round=ref.round))
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


def validate(writes: list[Write], ref: RoundRef) -> list[Diagnostic]:
    """The per-file rules of ``check`` on each file as it will be named and placed, plus
    the tag rules over the new files alone (`duplicate_finding_id`)."""
    out: list[Diagnostic] = []
    facts = []
    for write in writes:
        fname = classify(write.name)
        place = Place(os.path.join(ref.round_dir, write.name), ref.step, ref.round,
                      ref.is_task)
        report = judge_file(fname, write.data, place)
        out.extend(report.diagnostics)
        facts.append(report.facts)
    rf = RoundFacts(path=ref.round_dir, step=ref.step, round=ref.round, is_task=ref.is_task,
                    files=facts)
    out.extend(tag_rules(rf))
    return out
