"""The engine: paths in, round results out. No printing, no exits.

- :mod:`.plan`        PATH arguments -> whole rounds, layout diagnostics, loose files
- :mod:`.entries`     a round's entries listed, its generation told, each entry judged
- :mod:`.generation`  which protocol generation a round is (generations.md §6)
- :mod:`.inputs`      the files a round's rules read beyond reviewer output
- :mod:`.rounds`      one round's verdict assembled from its files and inputs
- :mod:`.history`     config.md as of a round's commit (git)
- :mod:`.parallel`    forked workers for large trees, results in order
- :mod:`.check`       ``check``: all of the above over a set of paths
- :mod:`.results`     the result types

``check_paths`` is what ``check`` runs; ``evaluate_round`` is the unit that ``watch``
re-runs when a round changes.
"""

from qrspi_guard.engine.check import check_paths, check_round_dir
from qrspi_guard.engine.entries import Context, judge_entry, judge_round_files, read_round
from qrspi_guard.engine.parallel import PARALLEL_MIN_ITEMS as PARALLEL_MIN_ROUNDS
from qrspi_guard.engine.parallel import jobs
from qrspi_guard.engine.plan import plan
from qrspi_guard.engine.results import CheckResult, RoundResult, Status, sort_diagnostics
from qrspi_guard.engine.rounds import evaluate_round, round_facts, round_result
from qrspi_guard.errors import PathNotFound

__all__ = [
    "CheckResult", "Context", "PARALLEL_MIN_ROUNDS", "PathNotFound", "RoundResult", "Status",
    "check_paths", "check_round_dir", "evaluate_round", "jobs", "judge_entry",
    "judge_round_files", "plan", "read_round", "round_facts", "round_result",
    "sort_diagnostics",
]
