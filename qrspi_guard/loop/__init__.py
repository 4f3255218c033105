"""The review loop's deterministic steps as drop-ins for upstream's scripts (loop.md).

Each command owns its modules here (no click; the command lines are in
:mod:`qrspi_guard.cli`):

- ``fan-in ROUND_DIR``        (``scripts/verifier-fan-in.sh``): the pure count and
  audit :mod:`.fanin`, its lock, judge and ordered writes :mod:`.fanin_write`
- ``await --round-dir DIR``   (``scripts/await-round.sh``): :mod:`.awaiting`, the
  manifest read, checked and merged back :mod:`.manifest`, the commands run without a
  shell under exec roots :mod:`.commands`, the settling and writing of each entry
  :mod:`.drain`
- ``prepare NN OUTPUT_DIR``   (``scripts/round-prepare.sh``): :mod:`.prepare`, its
  argument grammar :mod:`.prepare_args`, the narrowing decision :mod:`.narrowing`
- ``review-prep --step S``    (``scripts/review-prep.sh``): :mod:`.reviewprep`, and the
  design absorption map :mod:`.absorption`
- :mod:`.git`: the questions asked of git (:mod:`qrspi_guard.engine.git`: no shell,
  no helper program of the repository), its failures as data

Common to all: outputs written old-or-new in a stated order, the per-round lock
(:func:`qrspi_guard.engine.roundlock.round_lock` with a bounded wait), one named line per
problem, and rounds judged with the same rules as ``check``.
"""
