"""`qrspi-guard split`: a sandboxed reviewer's stdout -> the files it stands for (split.md).

- :mod:`.grammar`: the input grammar and the output names (pure);
- :mod:`.target`: which directory and round the files go to (generations.md §8);
- :mod:`.plan`: numbering, validation with ``check``'s rules, the mixing rule (pure);
- :mod:`.source`: reading the input with a size cap (a file, a FIFO, ``-``);
- :mod:`.lock`: one split at a time per round (``flock`` on the directory);
- :mod:`.residue`: the reserved hidden names and `split_incomplete`;
- :mod:`.io` and :mod:`.recover`: old state or new under any failure or kill;
- :mod:`.faults`: the fault seam tests drive the write path through.
"""

from __future__ import annotations

from qrspi_guard.split.grammar import (
    BOUNDARY,
    SENTINEL,
    SENTINELS,
    InputKind,
    Parsed,
    clean_name,
    clean_sentinel,
    finding_name,
    parse_stdout,
    tag_is_valid,
)
from qrspi_guard.split.plan import (
    EXIT_OK,
    EXIT_REFUSED,
    EXIT_USAGE,
    SplitPlan,
    Write,
    earlier_output,
    plan_split,
    round_text,
    validate,
)
from qrspi_guard.split.target import Target, target_of

__all__ = [
    "BOUNDARY", "EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "SENTINEL", "SENTINELS",
    "InputKind", "Parsed", "SplitPlan", "Target", "Write", "clean_name", "clean_sentinel",
    "earlier_output", "finding_name", "parse_stdout", "plan_split", "round_text",
    "tag_is_valid", "target_of", "validate",
]
