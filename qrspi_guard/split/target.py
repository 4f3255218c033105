"""Where split's files go and which round they belong to (generations.md §8).

A `round-NN` directory is a round wherever it sits, and its NN is the round. Any other
directory (upstream's splitter tests use ``mktemp -d``) is a *pseudo-round*: its round is
``--round N``, else the R-number that the findings' own ``finding_id``s agree on, else
unknown (a ``NO_FINDINGS`` stdout then gives a clean sentinel without ``round``).
Directories that are plainly a mistake are refused: one named like a round but not
`round-NN` (`round-1`, `round-00`), and any other directory inside a `reviews/` tree
(a step directory, `reviews/` itself), where ``check`` would never look for findings.
"""

from __future__ import annotations

import os

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.layout import RoundRef, looks_like_round_dir
from qrspi_guard.contract.schema import FINDING_ID_RE
from qrspi_guard.engine.discover import round_of_dir
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.records import record, replace
from qrspi_guard.split.errors import SplitUsageError

#: An inferred round longer than this is not taken as the round (no round has a
#: billion predecessors, and converting more than 4,300 digits raises in Python).
MAX_ROUND_DIGITS = 9


@record(frozen=True)
class Target:
    """The directory split writes into, and the round its files are judged in."""

    round_dir: str
    step: str | None
    round: int | None  #: None: not known (a pseudo-round without --round or finding_id)
    is_task: bool = False
    round_text: str | None = None  #: the clean sentinel's `round:` text; None: no line
    pseudo: bool = False  #: not a `round-NN` directory

    @classmethod
    def of(cls, ref: RoundRef) -> Target:
        name = os.path.basename(os.path.abspath(ref.round_dir))
        return cls(ref.round_dir, ref.step, ref.round, ref.is_task, name[len("round-"):])


def _inside_reviews(path: str) -> bool:
    parts = os.path.abspath(path).split(os.sep)
    return "reviews" in parts


def target_of(round_dir: str, round_option: int | None = None) -> Target:
    """The target for ROUND_DIR (which must exist) and ``--round``; raises
    :class:`SplitUsageError` for a directory split must not write into."""
    ref = round_of_dir(round_dir)
    if ref is not None and ref.kind == "suffixed":
        ref = None  # round-05-fanout/: judged per file by check, never written into
    if ref is not None:
        if round_option is not None and round_option != ref.round:
            raise SplitUsageError(
                f"--round {round_option} disagrees with ROUND_DIR {round_dir}, which is "
                f"round {ref.round}; drop --round or name the right directory")
        return Target.of(ref)
    name = os.path.basename(os.path.abspath(round_dir))
    if looks_like_round_dir(name):
        raise SplitUsageError(f"ROUND_DIR {round_dir} is not a round directory: named like "
                              "one but not round-NN (two or more digits, >= 01)")
    if _inside_reviews(round_dir):
        raise SplitUsageError(f"ROUND_DIR {round_dir} is not a round directory: inside a "
                              "reviews/ tree only round-NN directories take split's output")
    text = None if round_option is None else str(round_option)
    return Target(os.path.normpath(round_dir), None, round_option, False, text, pseudo=True)


def _id_round(block: bytes) -> str | None:
    """The R-number of a block's well-formed finding_id, as digits without leading
    zeros; None when the block has none (it then has no say in the round)."""
    decoded = fm.decode(block)
    if not isinstance(decoded, fm.Decoded):
        return None
    doc = fm.parse(decoded.text)
    if not isinstance(doc, fm.Document):
        return None
    fid = doc.data.get("finding_id")
    m = FINDING_ID_RE.fullmatch(fid) if isinstance(fid, str) else None
    if m is None:
        return None
    return m.group(1).lstrip("0") or "0"


def infer_round(target: Target, blocks: tuple[bytes, ...],
                names: list[str]) -> tuple[Target, list[Diagnostic]]:
    """For a pseudo-round without ``--round``: the round the blocks' finding_ids agree
    on (*names* are the files the blocks become, for the message). Disagreement is
    `round_mismatch` and leaves the round unknown, so each file is judged on its own."""
    if not target.pseudo or target.round is not None:
        return target, []
    votes = [(name, r) for name, r in zip(names, map(_id_round, blocks), strict=True)
             if r is not None]
    if not votes:
        return target, []
    first_name, first = votes[0]
    for name, r in votes[1:]:
        if r != first:
            return target, [diag(
                "round_mismatch",
                f"the findings disagree on the round: {first_name} says R{_cut(first)}, "
                f"{name} says R{_cut(r)}; ROUND_DIR is not a round-NN directory, so pass "
                "--round N", file=name, path=os.path.join(target.round_dir, name))]
    if len(first) > MAX_ROUND_DIGITS or first == "0":
        return target, []
    return replace(target, round=int(first)), []


def _cut(digits: str) -> str:
    return digits if len(digits) <= 12 else f"{digits[:6]}...({len(digits)} digits)"
