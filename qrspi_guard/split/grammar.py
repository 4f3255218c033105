"""split's input grammar and output names (split.md "Input grammar"). Pure bytes in,
data out: nothing here touches the disk."""

from __future__ import annotations

from enum import Enum

from qrspi_guard.contract.layout import TAG_RE
from qrspi_guard.records import record

BOUNDARY = b"<<<FINDING-BOUNDARY>>>"
SENTINEL = b"NO_FINDINGS"
#: The only two byte strings that are the zero-findings sentinel.
SENTINELS: frozenset[bytes] = frozenset({SENTINEL, SENTINEL + b"\n"})


class InputKind(Enum):
    FINDINGS = "findings"
    NO_FINDINGS = "no_findings"
    EMPTY = "empty"  #: zero bytes or a lone newline (as the reference)
    NO_BOUNDARY = "no_boundary"  #: neither a boundary line nor the sentinel


@record(frozen=True)
class Parsed:
    """The stdout after the grammar: its kind, and the non-blank blocks in order."""

    kind: InputKind
    blocks: tuple[bytes, ...] = ()  #: each block's bytes, stripped, ending in one b"\n"
    boundaries: int = 0  #: boundary lines met (blank blocks included)
    hint: str | None = None  #: for a malformed input: a near miss worth naming


def tag_is_valid(tag: str) -> bool:
    """The protocol's tag grammar (generations.md §5): every well-formed tag."""
    return bool(TAG_RE.fullmatch(tag))


def finding_name(tag: str, number: int) -> str:
    """`quality-codex.finding-F07.md`; F100 follows F99."""
    return f"{tag}.finding-F{number:02d}.md"


def clean_name(tag: str) -> str:
    return f"{tag}.clean.md"


def clean_sentinel(tag: str, round_text: str | None) -> bytes:
    """The reference's clean sentinel; *round_text* is the round as the directory (or
    ``--round``) spells it (`01`). None writes no `round` line, as upstream's fan-in
    splitter does (generations.md §8: a directory that is not round-NN)."""
    round_line = "" if round_text is None else f"round: {round_text}\n"
    return f"---\nreviewer: {tag}\n{round_line}findings: 0\n---\n".encode()


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
