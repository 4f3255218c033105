"""The layout grammar: what a step, a round, a tag and each file in a round is.

Pure functions of names (round-contract §1, §2; generations.md §2, §4, §5, §8).
Nothing here touches the disk. Numbers read from names are bounded (at most 1,000
significant digits; longer is not a number here), so no name can crash a parse.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal

from qrspi_guard.contract.digits import bounded_number
from qrspi_guard.contract.generations import (
    CONTRACT,
    DISPATCH_MANIFEST,
    GENERATIONS,
    SIDECAR_SUFFIXES,
)
from qrspi_guard.records import record

STEPS: tuple[str, ...] = (
    "goals", "questions", "research", "design", "phasing", "structure",
    "plan", "parallelize", "replan", "integration", "test",
)
#: Directories under `reviews/` that are not review rounds and are skipped silently.
SKIPPED_DIRS: frozenset[str] = frozenset({"ci", "telemetry"})
TASKS_DIR = "tasks"

#: The protocol's reviewer-tag grammar (generations.md §5): no fixed suffix.
TAG_RE = CONTRACT.tag_re
ROUND_DIR_RE = re.compile(r"round-([0-9]{2,})")
#: `round-05-fanout/`: a round-NN prefix with a suffix (generations.md §8)
SUFFIXED_ROUND_DIR_RE = re.compile(r"round-([0-9]{2,})-.+")
TASK_DIR_RE = re.compile(r"task-([0-9]+)")
_FINDING_RE = re.compile(r"(?P<tag>.+)\.finding-F(?P<num>[0-9]{2,})\.md")
#: `<finding stem>.score.<anything>`: both generations' suffixes and every other one
_SIDECAR_RE = re.compile(r"(?P<tag>.+)\.finding-F(?P<num>[0-9]{2,})(?P<suffix>\.score\..+)")
_CLEAN_RE = re.compile(r"(?P<tag>.+)\.clean\.md")
#: await-round.sh's clean marker `<tag>.NO_FINDINGS` (it counts as the tag's output)
_NO_FINDINGS_RE = re.compile(r"(?P<tag>.+)\.NO_FINDINGS")
VF_TAG = "visual-fidelity-claude"
_VF_SKIP = f"{VF_TAG}.skipped.md"
_VF_BYPASS_RE = re.compile(re.escape(VF_TAG) + r"\.bypass-attempt-(?P<num>[0-9]{2,})\.md")
_VF_PATH_FILTERED = frozenset({"path-filtered.md", f"{VF_TAG}.path-filtered.md"})
_ROUND_FILE_RE = re.compile(
    r"round-([0-9]{2,})(?P<suffix>\.diff|-[A-Za-z0-9-]+\.(?:md|txt|json))")
#: Files a round directory may hold for its own NN (generations.md §4).
ROUND_INSIDE_SUFFIXES: frozenset[str] = frozenset({".diff", "-verifier-disabled.md"})
#: every generation's verifier completion record beside a round (apply-fix's
#: `round-NN-verified.md`, round-contract §5)
VERIFIED_SUFFIXES: tuple[str, ...] = tuple(
    g.verified_beside_suffix for g in GENERATIONS.values() if g.verified_beside_suffix)
#: Orchestrator files beside a round directory, by suffix (contract §1, generations.md §4).
ROUND_SIDE_SUFFIXES: frozenset[str] = frozenset({
    *VERIFIED_SUFFIXES, ".diff", "-dispositions.md", "-commit.txt", "-scope-set.txt",
    "-verifier-disabled.md", "-guard.json", "-base.txt", "-results.md",
    # apply-fix era orchestrator records
    "-fixes.md", "-baseline.md", "-coverage.md", "-aborted.md",
})
#: The one hidden-name pattern the guard reads: split's temp and commit files
#: (``.qrspi-split.<id>.<role>``); a round holding them is `split_incomplete`.
RESERVED_PREFIX = ".qrspi-split."
_RESIDUE_RE = re.compile(r"\.qrspi-split\.(?P<id>[0-9a-f]{12})\."
                         r"(?:new\.(?P<name>[^/\0]+)|(?P<role>intent|intent-tmp))")
#: Names that `watch` ignores while they exist (editors, partial downloads).
_WATCH_TEMP_RE = re.compile(r".*(?:~|\.sw[a-z]|\.tmp|\.part)|\.#.*|.*___jb_...___")


class Kind(Enum):
    FINDING = "finding"
    CLEAN = "clean"
    NO_FINDINGS = "no_findings"  #: `<tag>.NO_FINDINGS`, await-round's clean marker
    SIDECAR = "sidecar"  #: `<finding stem>.score.md` or `.score.yml` (:attr:`FileName.suffix`)
    SIDECAR_OTHER = "sidecar_other"  #: any other `<finding stem>.score.*`
    VF_SKIP = "vf_skip"  #: visual-fidelity skip sentinel (tasks)
    VF_BYPASS = "vf_bypass"  #: visual-fidelity bypass record (tasks)
    ORCHESTRATOR = "orchestrator"  #: visual-fidelity path-filtered notes (tasks)
    ROUND_FILE = "round_file"  #: `round-NN.diff`, `round-NN-verifier-disabled.md`
    KEPT_LIST = "kept_list"  #: the fan-in's `kept-findings.txt`
    FANIN_AUDIT = "fanin_audit"  #: the fan-in's `.verifier-fan-in-audit.json` (hidden)
    MANIFEST = "manifest"  #: `.dispatch-manifest.json` (hidden)
    HIDDEN = "hidden"
    BAD_TAG = "bad_tag"
    BAD_FINDING_NAME = "bad_finding_name"
    UNKNOWN = "unknown"


#: kinds that stand for a tag's "no findings" (round-contract §4; await-round.sh)
CLEAN_KINDS: frozenset[Kind] = frozenset({Kind.CLEAN, Kind.NO_FINDINGS})
#: names that claim to be reviewer output, however badly (a round holds them; named on
#: the command line they are judged, never ignored)
CLAIMED_KINDS: frozenset[Kind] = frozenset({
    Kind.FINDING, Kind.CLEAN, Kind.SIDECAR, Kind.VF_SKIP, Kind.VF_BYPASS, Kind.NO_FINDINGS,
    Kind.SIDECAR_OTHER, Kind.BAD_TAG, Kind.BAD_FINDING_NAME})
#: kinds that are reviewer output, judged with the per-file rules
OUTPUT_KINDS: frozenset[Kind] = frozenset({Kind.FINDING, Kind.CLEAN, Kind.SIDECAR,
                                           Kind.VF_SKIP, Kind.VF_BYPASS})
#: kinds found only in task rounds (elsewhere: unknown_file_in_round_dir)
TASK_ONLY_KINDS: frozenset[Kind] = frozenset({Kind.VF_SKIP, Kind.VF_BYPASS,
                                              Kind.ORCHESTRATOR})


@record(frozen=True)
class FileName:
    """A round directory entry's name, classified."""

    name: str
    kind: Kind
    tag: str | None = None
    fnum: int | None = None  #: F number of a finding or sidecar; NN of a round file
    suffix: str | None = None  #: a sidecar's `.score.*` suffix; a round file's suffix


#: the verifier outputs every generation writes inside a round, by the role each names
_SPECIAL: dict[str, Kind] = {name: Kind(role) for gen in GENERATIONS.values()
                             for name, role in gen.outputs}
_SPECIAL[DISPATCH_MANIFEST] = Kind.MANIFEST


def classify(name: str) -> FileName:
    """Classify a file name found inside a round directory."""
    special = _SPECIAL.get(name)
    if special is not None:
        return FileName(name, special)
    if name.startswith("."):
        return FileName(name, Kind.HIDDEN)
    m = _SIDECAR_RE.fullmatch(name)
    if m:
        suffix = m.group("suffix")
        kind = Kind.SIDECAR if suffix in SIDECAR_SUFFIXES else Kind.SIDECAR_OTHER
        return _tagged(name, kind, m.group("tag"), m.group("num"), suffix)
    m = _FINDING_RE.fullmatch(name)
    if m:
        return _tagged(name, Kind.FINDING, m.group("tag"), m.group("num"))
    if name == _VF_SKIP:
        return FileName(name, Kind.VF_SKIP, tag=VF_TAG)
    m = _VF_BYPASS_RE.fullmatch(name)
    if m:
        return _numbered(name, Kind.VF_BYPASS, m.group("num"), tag=VF_TAG)
    m = _CLEAN_RE.fullmatch(name)
    if m:
        return _tagged(name, Kind.CLEAN, m.group("tag"))
    m = _NO_FINDINGS_RE.fullmatch(name)
    if m:
        return _tagged(name, Kind.NO_FINDINGS, m.group("tag"))
    if name in _VF_PATH_FILTERED:
        return FileName(name, Kind.ORCHESTRATOR)
    m = _ROUND_FILE_RE.fullmatch(name)
    if m and m.group("suffix") in ROUND_INSIDE_SUFFIXES:
        return _numbered(name, Kind.ROUND_FILE, m.group(1), suffix=m.group("suffix"))
    if (".finding-" in name and name.endswith(".md")) or name.endswith(SIDECAR_SUFFIXES):
        return FileName(name, Kind.BAD_FINDING_NAME)
    return FileName(name, Kind.UNKNOWN)


_CLASSIFIED: dict[str, FileName] = {}


def classify_cached(name: str) -> FileName:
    """:func:`classify`, remembered: rounds repeat the same names (a pure function; at
    most 4,096 names are kept)."""
    got = _CLASSIFIED.get(name)
    if got is None:
        got = classify(name)
        if len(_CLASSIFIED) < 4096:
            _CLASSIFIED[name] = got
    return got


def _tagged(name: str, kind: Kind, tag: str, digits: str | None = None,
            suffix: str | None = None) -> FileName:
    if not TAG_RE.fullmatch(tag):
        return FileName(name, Kind.BAD_TAG, tag=tag)
    if digits is None:
        return FileName(name, kind, tag=tag)
    return _numbered(name, kind, digits, tag=tag, suffix=suffix)


def _numbered(name: str, kind: Kind, digits: str, tag: str | None = None,
              suffix: str | None = None) -> FileName:
    number = bounded_number(digits)
    if number is None:  # thousands of digits: not a number
        return FileName(name, Kind.BAD_FINDING_NAME if tag else Kind.UNKNOWN, tag=tag)
    return FileName(name, kind, tag=tag, fnum=number, suffix=suffix)


def is_fanin_finding_glob(name: str) -> bool:
    """The fan-in's own selection of findings: `*.finding-F*.md` that is not a sidecar
    (verifier-fan-in.sh's glob), whatever the tag or number looks like."""
    return (".finding-F" in name and name.endswith(".md")
            and not name.endswith(SIDECAR_SUFFIXES) and not name.startswith("."))


def round_number(dirname: str) -> int | None:
    """The round of a `round-NN` directory name, or None when it is not one (or is 0)."""
    m = ROUND_DIR_RE.fullmatch(dirname)
    return _positive(m.group(1)) if m else None


def suffixed_round_number(dirname: str) -> int | None:
    """NN of a `round-NN-<suffix>` directory (`round-05-fanout`), or None."""
    m = SUFFIXED_ROUND_DIR_RE.fullmatch(dirname)
    return _positive(m.group(1)) if m else None


def _positive(digits: str) -> int | None:
    n = bounded_number(digits)
    return n if n is not None and n >= 1 else None


def looks_like_round_dir(dirname: str) -> bool:
    """A directory under a step whose name starts with `round` claims to be a round."""
    return dirname.startswith("round")


def round_side_file(name: str) -> tuple[int, str] | None:
    """`round-03-verified.md` -> (3, '-verified.md') for a file beside the rounds."""
    m = _ROUND_FILE_RE.fullmatch(name)
    if not m:
        return None
    n = _positive(m.group(1))
    return (n, m.group("suffix")) if n is not None else None


def is_legacy_round_file(name: str) -> bool:
    """Older single-file rounds: `round-NN-claude.md` and other unknown `round-NN-*.md`."""
    side = round_side_file(name)
    return side is not None and side[1].endswith(".md") and side[1] not in ROUND_SIDE_SUFFIXES


def is_watch_temp(name: str) -> bool:
    """Editor and temp names that `watch` ignores while they exist."""
    return name.startswith(".") or bool(_WATCH_TEMP_RE.fullmatch(name))


def side_file_name(round_no: int, suffix: str) -> str:
    """`round-03` + `-commit.txt` -> `round-03-commit.txt` (files beside a round)."""
    return f"round-{round_no:02d}{suffix}"


def status_file_name(round_no: int) -> str:
    return side_file_name(round_no, "-guard.json")


def verified_file_names(round_no: int) -> tuple[str, ...]:
    return tuple(side_file_name(round_no, suffix) for suffix in VERIFIED_SUFFIXES)


def verifier_disabled_name(round_no: int) -> str:
    return side_file_name(round_no, "-verifier-disabled.md")


def normalise_step(step: str) -> str:
    """`integrate`, `integration` and `implement-gate` are one step for artifact checks."""
    return "integration" if step in ("integrate", "implement-gate") else step


# -- split's reserved names ---------------------------------------------------------------
#
# Every file split creates before its commit is complete is named
# ``.qrspi-split.<id>.<role>`` in the round directory (``<id>``: 12 hex digits, one per
# attempt): ``new.<name>`` (a new file, complete and fsynced, to become ``<name>``),
# ``intent-tmp`` (the commit record being written), ``intent`` (the commit record).


def is_split_residue(name: str) -> bool:
    """True for every name in split's reserved pattern (well formed or not)."""
    return name.startswith(RESERVED_PREFIX)


def new_name(attempt: str, name: str) -> str:
    return f"{RESERVED_PREFIX}{attempt}.new.{name}"


def intent_name(attempt: str) -> str:
    return f"{RESERVED_PREFIX}{attempt}.intent"


def intent_tmp_name(attempt: str) -> str:
    return f"{RESERVED_PREFIX}{attempt}.intent-tmp"


@record(frozen=True)
class ResidueName:
    """A parsed reserved name: its attempt, and its role (`new`, `intent`,
    `intent-tmp`); *target* is the name a `new` file becomes."""

    attempt: str
    role: str
    target: str | None = None


def parse_residue(name: str) -> ResidueName | None:
    """The parts of a well-formed reserved name; None for any other name."""
    m = _RESIDUE_RE.fullmatch(name)
    if m is None:
        return None
    if m.group("name") is not None:
        return ResidueName(m.group("id"), "new", m.group("name"))
    return ResidueName(m.group("id"), m.group("role"))


RoundKind = Literal["step", "task", "unknown_step", "suffixed", "pseudo"]


@record(frozen=True)
class RoundRef:
    """A round directory and where it sits."""

    round_dir: str  #: display path of the round directory
    step_dir: str  #: display path of the directory holding it
    step: str | None  #: `design`, `integration`, `task-03`, ...
    round: int | None  #: None: a pseudo-round whose number comes from its findings
    is_task: bool
    artifact_dir: str | None  #: the directory holding `reviews/`, when there is one
    #: step: `reviews/<step>/round-NN`; task: `reviews/tasks/task-NN/round-NN`;
    #: unknown_step: `round-NN` under a step directory of unknown name (judged like a
    #: task round); suffixed: `round-NN-<suffix>/` (per-file rules only); pseudo: a
    #: directory named on the command line that holds reviewer output (§8)
    kind: RoundKind = "step"

    @property
    def has_status_file(self) -> bool:
        """Pseudo-rounds and suffixed round directories never get a status file, so
        they cannot overwrite a real round's (generations.md §8)."""
        return self.kind not in ("suffixed", "pseudo") and self.round is not None

    @property
    def has_matrix(self) -> bool:
        """Whether the step's matrix row can apply (never for tasks, unknown steps,
        suffixed directories; pseudo-rounds only with `--step`)."""
        return self.kind in ("step", "pseudo") and self.step is not None
