"""Reviewer-rejection lockout: a durable, replayed ledger of who may revise what.

The core is pure (no click, no printing): :mod:`.models` defines the events,
:mod:`.ledger` reads and appends the JSON Lines file under a file lock, and
:mod:`.state` replays events into per-artifact state and makes the decisions.
"""

from __future__ import annotations

from qrspi_guard.lockout.ledger import Ledger, LedgerError
from qrspi_guard.lockout.state import LockoutError, State, normalise_artifact

__all__ = ["Ledger", "LedgerError", "LockoutError", "State", "normalise_artifact"]
