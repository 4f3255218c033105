"""The watch loop's options (the command line's ``--settle``, ``--rescan``, ``--format``,
``--events``), as one record."""

from __future__ import annotations

from qrspi_guard.records import record


@record
class Options:
    settle: float = 2.0
    rescan: float = 30.0
    quiet: float = 0.5
    fmt: str = "text"  #: "text" or "json"
    events_file: str | None = None
    retry: float = 1.0  #: how often a status file that could not be written is retried
