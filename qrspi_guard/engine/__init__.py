"""The engine: paths in, round results out. No printing, no exits.

- :mod:`.plan`        PATH arguments -> whole rounds, layout diagnostics, loose files
- :mod:`.entries`     a round's entries listed, its generation told, each entry judged
- :mod:`.generation`  which protocol generation a round is (generations.md §6)
- :mod:`.roundinputs` the files a round's rules read beyond reviewer output
- :mod:`.roundverdict` one round's verdict assembled from its files and inputs: the one
  function every verdict comes from (``evaluate_round``)
- :mod:`.configs`     the one run-config type: config.md, the working tree's or as of a
  round's commit
- :mod:`.history`     config.md as of a round's commit (git)
- :mod:`.git`         git run the one way the guard runs it: no shell, none of the
  repository's helper programs (the loop commands' git too)
- :mod:`.parallel`    the standard library's process pool for large trees, results in order
- :mod:`.check`       ``check``: all of the above over a set of paths
- :mod:`.results`     the result types

``evaluate_round`` is the one function a round's verdict comes from; commands reach it
through :class:`qrspi_guard.judge.Judge` (``check_paths`` is what ``Judge.paths`` runs).
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the submodule defining it, imported on first use: the hook judges one
#: write through :mod:`.entries` alone and must not pay for git, workers or planning.
#: (`plan` is not here: the submodule of that name would shadow the function once
#: imported; use ``engine.plan.plan``.)
_EXPORTS: dict[str, str] = {
    "check_paths": "check", "check_round_dir": "check",
    "Context": "entries", "judge_entry": "entries", "judge_round_files": "entries",
    "read_round": "entries",
    "jobs": "parallel", "PARALLEL_MIN_ROUNDS": "parallel",
    "CheckResult": "results", "RoundResult": "results", "Status": "results",
    "sort_diagnostics": "results",
    "evaluate_round": "roundverdict", "round_facts": "roundverdict",
    "PathNotFound": "errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if module == "errors":
        return getattr(importlib.import_module("qrspi_guard.errors"), name)
    target = "PARALLEL_MIN_ITEMS" if name == "PARALLEL_MIN_ROUNDS" else name
    return getattr(importlib.import_module(f"{__name__}.{module}"), target)


__all__ = sorted(_EXPORTS)
