"""What one ``check`` covers: PATH arguments resolved to whole rounds (cli.md, §8).

Directories are walked for rounds; a directory that directly holds reviewer output but
is not `round-NN` is a pseudo-round; files are grouped by their round, and a finding
file outside any round is judged on its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.layout import CLAIMED_KINDS, RoundRef, classify, is_legacy_round_file
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.discover import (
    discover_dir,
    holds_reviewer_output,
    pseudo_round,
    round_of_dir,
    round_of_file,
    with_step,
)
from qrspi_guard.errors import PathNotFound, UnreadablePath
from qrspi_guard.records import field, record


@record
class Plan:
    """Rounds in order, layout diagnostics met on the way, and loose files."""

    rounds: dict[str, RoundRef] = field(default_factory=dict)
    layout: list[Diagnostic] = field(default_factory=list)
    not_in_round: list[str] = field(default_factory=list)
    #: finding, clean and sidecar files named outside any round (judged per file)
    loose: list[str] = field(default_factory=list)


def plan(paths: Iterable[str], overrides: Overrides) -> Plan:
    """Resolve PATH arguments to whole rounds. Raises :class:`PathNotFound`, and
    :class:`UnreadablePath` for a directory argument that cannot be listed."""
    p = Plan()
    seen: set[Diagnostic] = set()
    real_dirs: dict[str, str] = {}
    for path in paths:
        if not os.path.lexists(path):
            raise PathNotFound(path)
        for item in _found(path, overrides, p):
            if isinstance(item, Diagnostic):
                if item not in seen:
                    seen.add(item)
                    p.layout.append(item)
            else:
                item = with_step(item, overrides.step)
                p.rounds.setdefault(_round_key(item, real_dirs), item)
    return p


def _found(path: str, overrides: Overrides, p: Plan) -> Iterator[RoundRef | Diagnostic]:
    if os.path.isdir(path):
        try:
            os.scandir(path).close()
        except OSError as exc:
            raise UnreadablePath(f"cannot list {path}: {exc.strerror or exc}") from None
        ref = round_of_dir(path)
        if ref is not None and ref.artifact_dir is not None and _linked(path):
            yield diag("symlink_in_round_dir", f"round directory {os.path.basename(path)!r} "
                       "is reached through a symbolic link; not followed", path=path,
                       step=ref.step)  # as the walk says it: never judged through it
            return
        # named on the command line, a directory holding reviewer output that is not
        # round-NN (a fixture, round-05-fanout/) is judged as a round (generations.md §8)
        if (ref is None or ref.kind == "suffixed") and holds_reviewer_output(path):
            yield pseudo_round(path, overrides.step, overrides.round_no)
            return
        yield from discover_dir(path)
        return
    ref = round_of_file(path, overrides.step)
    if ref is not None:
        yield ref
        return
    name = os.path.basename(path)
    if is_legacy_round_file(name) or name.endswith("-review.md"):
        yield diag("legacy_layout", f"older single-file round layout ({name}); skipped",
                   path=path)
    elif classify(name).kind in CLAIMED_KINDS:
        p.loose.append(path)
    else:
        p.not_in_round.append(path)


def _linked(path: str) -> bool:
    """Whether a round path's `reviews/`, step or round directory is a symbolic link."""
    import errno

    from qrspi_guard.parse.nofollow import open_round_dir

    try:
        os.close(open_round_dir(path))
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _round_key(ref: RoundRef, real_dirs: dict[str, str]) -> str:
    """The round directory's real path (how rounds reached twice are told apart),
    resolving each step directory once: a round directory that is not a symbolic link
    is its parent's real path plus its name (its name is `round-NN`, never `.` or `..`)."""
    norm = os.path.normpath(ref.round_dir)
    if ref.kind == "pseudo" or os.path.islink(norm):
        return os.path.realpath(norm)
    parent, name = os.path.split(norm)
    real = real_dirs.get(parent)
    if real is None:
        real = real_dirs[parent] = os.path.realpath(parent or ".")
    return os.path.join(real, name)
