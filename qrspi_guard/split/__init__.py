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

import importlib
from typing import Any

#: public name -> the submodule defining it (imported on first use, so that importing
#: one light submodule, such as :mod:`.residue` for the engine, loads only that one)
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("BOUNDARY", "SENTINEL", "SENTINELS", "InputKind", "Parsed",
                     "clean_name", "clean_sentinel", "finding_name", "parse_stdout",
                     "tag_is_valid"), "grammar"),
    **dict.fromkeys(("EXIT_OK", "EXIT_REFUSED", "EXIT_USAGE", "SplitPlan", "Write",
                     "earlier_output", "plan_split", "round_text", "validate"), "plan"),
    **dict.fromkeys(("Target", "target_of"), "target"),
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = sorted(_EXPORTS)
