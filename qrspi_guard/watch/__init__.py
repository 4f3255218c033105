"""`qrspi-guard watch`: keep every round's status file current during a live run.

- :mod:`.events` is the seam over watchdog: file-system notifications in, plain
  :class:`~.events.FsEvent` values out (and a scripted fake for tests).
- :mod:`.policy` decides, with an injected clock, when a file has settled and when a
  round is complete (round-contract §5). It does no I/O of its own.
- :mod:`.judge` keeps one per-file report per settled file and builds round results.
- :mod:`.publish` writes status files (a failed write is retried until it succeeds)
  and status and events lines (streams that may fail: said once, never fatal).
- :mod:`.links` judges a round a symbolic link stands in place of as ``check`` does.
- :mod:`.loop` runs it all: start-up scan, incremental work, reconcile scans, output
  (its :mod:`.options`); :mod:`.lines` words its status lines.
"""
