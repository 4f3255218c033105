"""The round status file, `round-NN-guard.json` beside the round (round-contract §8)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from qrspi_guard.contract.layout import side_file_name, status_file_name
from qrspi_guard.engine import RoundResult
from qrspi_guard.parse import jsondoc

SCHEMA = "qrspi-guard/round-status/1"


def status_path(result: RoundResult) -> str | None:
    """Where the round's status file goes; None for pseudo-rounds and `round-NN-<suffix>/`
    directories, which never get one (generations.md §8)."""
    ref = result.ref
    if not ref.has_status_file or ref.round is None:
        return None
    canonical = side_file_name(ref.round, "")
    if (os.path.basename(os.path.abspath(ref.round_dir)) != canonical
            and os.path.isdir(os.path.join(ref.step_dir, canonical))):
        return None  # `round-001` named beside `round-01`: the file is round-01's own
    return os.path.join(ref.step_dir, status_file_name(ref.round))


def status_document(result: RoundResult, now: datetime | None = None) -> dict[str, Any]:
    now = now or datetime.now(timezone.utc)
    diags = result.all_diagnostics
    return {
        "schema": SCHEMA,
        "step": result.ref.step,
        "round": result.ref.round,
        "status": result.status,
        "protocol": result.protocol,
        "config_source": result.config_source,
        "checked_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "expected_tags": result.expected_tags,
        "reported_tags": result.reported_tags,
        "awaiting": result.awaiting,
        "halts": [d.to_dict() for d in diags if d.level == "error"],
        "warnings": [d.to_dict() for d in diags if d.level != "error"],
    }


def without_timestamp(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "checked_at"}


def render(doc: dict[str, Any]) -> bytes:
    return (jsondoc.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode()


def write_atomic(path: str, data: bytes) -> None:
    """Temp file in the same directory, flush, fsync, rename: readers never see half;
    the step directory and `reviews/` are opened without following links, so one
    swapped for a link during the run is refused, never written through
    (:func:`qrspi_guard.output.files.write_round_file`; the file is 0644)."""
    from qrspi_guard.output.files import write_round_file

    write_round_file(path, data, mode=0o644)


def write_status(result: RoundResult, now: datetime | None = None) -> str | None:
    """Write the round's status file; returns its path (None: the round has none)."""
    path = status_path(result)
    if path is not None:
        write_atomic(path, render(status_document(result, now)))
    return path


def write_statuses(rounds: Iterable[RoundResult]) -> list[tuple[str, str]]:
    """Every round's status file (``check --write-status``). A round whose file cannot
    be written keeps its old one (and no temp file) and the others are still written;
    returns (round directory, the OS's reason) for each that could not be."""
    failed = []
    for r in rounds:
        try:
            write_status(r)
        except OSError as exc:
            failed.append((r.ref.round_dir, str(exc.strerror or exc)))
    return failed
