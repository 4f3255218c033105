"""What the command line says about the project settings (a light module: the hook
builds one before anything else of the settings is imported)."""

from __future__ import annotations

from qrspi_guard.records import record, replace


@record(frozen=True)
class CommandLine:
    """What the command line says; None (or empty) where it says nothing."""

    format: str | None = None
    strict: bool | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    protocol: str | None = None
    #: ``--isolated``: no configuration file is read
    isolated: bool = False
    #: ``--settings FILE``: this file, instead of the one found from the judged path
    settings_file: str | None = None
    #: what that file's relative ``per-file-ignores`` globs are relative to (None: the
    #: working directory, as ruff resolves its ``--config``; the hook: the payload's cwd)
    workdir: str | None = None

    @property
    def says_nothing(self) -> bool:
        """No option that changes the resolved settings was given."""
        return replace(self, workdir=None) == CommandLine()
