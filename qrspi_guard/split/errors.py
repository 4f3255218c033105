"""split's failures that stop the command, in the guard's one hierarchy
(:mod:`qrspi_guard.errors`); ``cli/split.py`` prints each as one line with its exit
code. A reviewer's defect is never one of these: it is a diagnostic."""

from __future__ import annotations

from qrspi_guard.errors import GuardError, InputError, OutputError, UsageError


class SplitUsageError(UsageError):
    """Wrong arguments: a bad TAG or ROUND_DIR, ``--round`` disagreeing with it."""


class SplitInputError(InputError):
    """STDOUT cannot be read (missing, a directory, an I/O error): exit 2."""


class InputTooLarge(SplitInputError):
    """STDOUT is over the size cap. Not a reviewer's stdout at all: the input is at
    fault, like an empty one, so exit 1 (the orchestrator's retry/skip menu)."""

    exit_code = 1


class SplitIOError(OutputError):
    """Writing failed. ``restored``: the directory is exactly as it was. Otherwise it
    holds an interrupted split that ``check`` reports as `split_incomplete` and the next
    split completes."""

    def __init__(self, message: str, restored: bool = True) -> None:
        super().__init__(message)
        self.restored = restored


class RecoveryError(GuardError):
    """An interrupted split's leftovers cannot be rolled forward or back."""
