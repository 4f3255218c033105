"""`check --fix`: the one automatic fix, trailing newlines (round-contract §3).

Each file is read and rewritten atomically, keeping its permissions, relative to its
round directory's descriptor (opened without following links), under the round's lock
(the one ``split`` and the loop commands write under), so no write of theirs lands
between the read and the rewrite. A fix never creates a halt: a
newline that would take a file over the 1 MiB cap is not added. A file that cannot be
rewritten (a read-only round, a full disk) is left exactly as it was and reported as a
:class:`FixFailure`; the others are still fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from qrspi_guard.contract.layout import Kind, classify
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.plan import plan
from qrspi_guard.engine.roundlock import LOOP_LOCK_WAIT, LockTimeout, round_lock
from qrspi_guard.output.files import write_in
from qrspi_guard.parse.capped import FILE_CAP
from qrspi_guard.parse.nofollow import Dir
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
        try:
            d = Dir.round_path(ref.round_dir)
        except OSError:
            continue  # a link or gone since it was planned: check reports it, never fixed
        with d:
            try:
                # a fix rewrites a file: read and written under the round's lock, as
                # split and the loop commands write, so no write of theirs is lost
                with round_lock(d.path, timeout=LOOP_LOCK_WAIT, dir_fd=d.fd):
                    yield from _fix_round(d, wanted)
            except LockTimeout as exc:
                yield FixFailure(d.path, str(exc))


def _fix_round(d: Dir, wanted: Callable[[str], bool] | None) -> Iterator[Fixed | FixFailure]:
    """One round, every read and write relative to its directory's descriptor."""
    listing = list_round(d.fd)
    if isinstance(listing, ReadFailure):
        return
    for entry in listing:
        if entry.is_symlink or not entry.is_file:
            continue
        if classify(entry.name).kind not in (Kind.FINDING, Kind.CLEAN):
            continue
        path = d.join(entry.name)
        if wanted is not None and not wanted(path):
            continue
        data = read_bytes(entry.name, dir_fd=d.fd)
        if isinstance(data, ReadFailure) or len(data) > FILE_CAP:
            continue
        new = fixed_text(data)
        # a fix never creates a halt: a newline that would take the file over the cap
        # (file_too_large) is not added, and its trailing_newline warning stays
        if new == data or len(new) > FILE_CAP:
            continue
        try:
            write_in(d, entry.name, new, shown=path)
        except OSError as exc:
            yield FixFailure(path, exc.strerror or type(exc).__name__)
        else:
            yield Fixed(path)
