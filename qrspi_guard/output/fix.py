"""`check --fix`: the one automatic fix, trailing newlines (round-contract §3).

Each file is rewritten atomically, keeping its permissions. A file that cannot be
rewritten (a read-only round, a full disk) is left exactly as it was and reported as a
:class:`FixFailure`; the others are still fixed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator

from qrspi_guard.contract.layout import Kind, classify
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.plan import plan
from qrspi_guard.output.files import write_atomic
from qrspi_guard.parse.reader import ReadFailure, list_round, read_bytes
from qrspi_guard.records import record


@record(frozen=True)
class Fixed:
    path: str


@record(frozen=True)
class FixFailure:
    path: str
    reason: str  #: the OS's reason, e.g. "Read-only file system"


def fixed_text(data: bytes) -> bytes:
    """The bytes with exactly one final newline (CRLF files keep CRLF)."""
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    stripped = data.rstrip(b"\r\n")
    return stripped + newline if stripped else data


def fix_trailing_newlines(paths: Iterable[str], overrides: Overrides,
                          wanted: Callable[[str], bool] | None = None
                          ) -> Iterator[Fixed | FixFailure]:
    """Rewrite findings and clean sentinels that do not end in exactly one newline,
    yielding each file fixed or that could not be fixed (and was left intact). With
    *wanted*, only the paths it accepts (where `trailing_newline` is selected)."""
    for ref in plan(list(paths), overrides).rounds.values():
        listing = list_round(ref.round_dir)
        if isinstance(listing, ReadFailure):
            continue
        for entry in listing:
            if entry.is_symlink or not entry.is_file:
                continue
            if classify(entry.name).kind not in (Kind.FINDING, Kind.CLEAN):
                continue
            path = os.path.join(ref.round_dir, entry.name)
            if wanted is not None and not wanted(path):
                continue
            data = read_bytes(path)
            if isinstance(data, ReadFailure) or len(data) > 1024 * 1024:
                continue
            new = fixed_text(data)
            if new == data:
                continue
            try:
                write_atomic(path, new)
            except OSError as exc:
                yield FixFailure(path, exc.strerror or type(exc).__name__)
            else:
                yield Fixed(path)
