"""The layout grammar: what a step, a round, a tag and each file in a round is.

Pure functions of names (round-contract §1, §2). Nothing here touches the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

STEPS: tuple[str, ...] = (
    "goals", "questions", "research", "design", "phasing", "structure",
    "plan", "parallelize", "replan", "integration", "test",
)
#: Directories under `reviews/` that are not review rounds and are skipped silently.
SKIPPED_DIRS: frozenset[str] = frozenset({"ci", "telemetry"})
TASKS_DIR = "tasks"

#: The protocol's reviewer-tag grammar (generations.md §5): no fixed suffix.
TAG_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
ROUND_DIR_RE = re.compile(r"round-([0-9]{2,})")
TASK_DIR_RE = re.compile(r"task-([0-9]+)")
_FINDING_RE = re.compile(r"(?P<tag>.+)\.finding-F(?P<num>[0-9]{2,})\.md")
_SIDECAR_RE = re.compile(r"(?P<tag>.+)\.finding-F(?P<num>[0-9]{2,})\.score\.yml")
_CLEAN_RE = re.compile(r"(?P<tag>.+)\.clean\.md")
_TASK_EXTRA_RE = re.compile(
    r"visual-fidelity-claude\.skipped\.md"
    r"|visual-fidelity-claude\.bypass-attempt-[0-9]{2,}\.md"
    r"|(?:visual-fidelity-claude\.)?path-filtered\.md"
)
_ROUND_FILE_RE = re.compile(r"round-([0-9]{2,})(?P<suffix>\.diff|-[A-Za-z0-9-]+\.(?:md|txt|json))")
#: Orchestrator files beside a round directory, by suffix.
ROUND_SIDE_SUFFIXES: frozenset[str] = frozenset({
    ".diff", "-verified.md", "-dispositions.md", "-commit.txt", "-scope-set.txt",
    "-verifier-disabled.md", "-guard.json",
})
#: Names that `watch` ignores while they exist (editors, partial downloads).
_WATCH_TEMP_RE = re.compile(r".*(?:~|\.sw[a-z]|\.tmp|\.part)|\.#.*|.*___jb_...___")


class Kind(Enum):
    FINDING = "finding"
    CLEAN = "clean"
    SIDECAR = "sidecar"
    ORCHESTRATOR = "orchestrator"  # task extras and the per-task verifier bypass
    HIDDEN = "hidden"
    BAD_TAG = "bad_tag"
    BAD_FINDING_NAME = "bad_finding_name"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class FileName:
    """A round directory entry's name, classified."""

    name: str
    kind: Kind
    tag: str | None = None
    fnum: int | None = None
    base_kind: Kind | None = None  #: for BAD_TAG: what the name looked like


def classify(name: str) -> FileName:
    """Classify a file name found inside a round directory."""
    if name.startswith("."):
        return FileName(name, Kind.HIDDEN)
    for regex, kind in ((_SIDECAR_RE, Kind.SIDECAR), (_FINDING_RE, Kind.FINDING),
                        (_CLEAN_RE, Kind.CLEAN)):
        m = regex.fullmatch(name)
        if m:
            tag = m.group("tag")
            num = m.groupdict().get("num")
            if not TAG_RE.fullmatch(tag):
                return FileName(name, Kind.BAD_TAG, tag=tag, base_kind=kind)
            return FileName(name, kind, tag=tag, fnum=int(num) if num else None)
    if _TASK_EXTRA_RE.fullmatch(name) or _is_round_side_file(name, "-verifier-disabled.md"):
        return FileName(name, Kind.ORCHESTRATOR)
    if ".finding-" in name and name.endswith(".md"):
        return FileName(name, Kind.BAD_FINDING_NAME)
    return FileName(name, Kind.UNKNOWN)


def _is_round_side_file(name: str, suffix: str) -> bool:
    m = _ROUND_FILE_RE.fullmatch(name)
    return bool(m and m.group("suffix") == suffix)


def round_number(dirname: str) -> int | None:
    """The round of a `round-NN` directory name, or None when it is not one (or is 0)."""
    m = ROUND_DIR_RE.fullmatch(dirname)
    if not m:
        return None
    n = int(m.group(1))
    return n if n >= 1 else None


def looks_like_round_dir(dirname: str) -> bool:
    """A directory under a step whose name starts with `round` claims to be a round."""
    return dirname.startswith("round")


def round_side_file(name: str) -> tuple[int, str] | None:
    """`round-03-verified.md` -> (3, '-verified.md') for a file beside the rounds."""
    m = _ROUND_FILE_RE.fullmatch(name)
    if not m:
        return None
    return int(m.group(1)), m.group("suffix")


def is_legacy_round_file(name: str) -> bool:
    """Older single-file rounds: `round-NN-claude.md` and other unknown `round-NN-*.md`."""
    side = round_side_file(name)
    return side is not None and side[1].endswith(".md") and side[1] not in ROUND_SIDE_SUFFIXES


def is_watch_temp(name: str) -> bool:
    """Editor and temp names that `watch` ignores while they exist."""
    return name.startswith(".") or bool(_WATCH_TEMP_RE.fullmatch(name))


def status_file_name(round_no: int) -> str:
    return f"round-{round_no:02d}-guard.json"


def verified_file_name(round_no: int) -> str:
    return f"round-{round_no:02d}-verified.md"


def verifier_disabled_name(round_no: int) -> str:
    return f"round-{round_no:02d}-verifier-disabled.md"


def normalise_step(step: str) -> str:
    """`integrate`, `integration` and `implement-gate` are one step for artifact checks."""
    return "integration" if step in ("integrate", "implement-gate") else step
