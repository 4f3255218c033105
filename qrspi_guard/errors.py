"""One error hierarchy for failures that stop a command (never a reviewer's defect).

A reviewer's defect is a :class:`~qrspi_guard.contract.diagnostics.Diagnostic`, data that a
report renders. A failure that keeps a command from doing its job at all (a path that
does not exist, an output that cannot be written, a configuration file that does not
parse) is one of these exceptions. The core raises them, never click's; the command
line translates them in one place (:func:`qrspi_guard.cli.main`) into one line on
stderr and the documented exit code. Anything else that escapes is a bug: `internal
error`, with its traceback under ``QRSPI_GUARD_DEBUG=1``.
"""

from __future__ import annotations


class GuardError(Exception):
    """A command cannot run or cannot finish; ``str(error)`` is the one line to print."""

    #: the command's exit code for this failure (cli.md: 2, "could not run")
    exit_code: int = 2


class UsageError(GuardError):
    """Bad arguments or option values."""


class PathNotFound(GuardError):
    """A command-line path that does not exist."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path

    def __str__(self) -> str:
        from qrspi_guard.textsafe import one_line

        return f"path not found: {one_line(self.path)}"


class UnreadablePath(GuardError):
    """A command-line path that exists but cannot be read or listed."""


class InputError(GuardError):
    """An input stream or file the command must read is unusable (not a regular file
    where one is required, over its size cap, unreadable)."""


class OutputError(GuardError):
    """The command's result cannot be written (stdout closed or full, ``--output``,
    a status file): the previous file, if any, is left as it was."""


class ConfigFileError(GuardError):
    """The project configuration file does not parse or names an unknown key."""
