"""Reconciling a watch with the disk: the tree (names, sizes, mtimes) compared with what
was judged, so a lost or coalesced event never leaves a round stale. It only reads
directory listings and stats; the loop judges what this finds changed."""

from __future__ import annotations

import os
from typing import Any

from qrspi_guard.contract.layout import VERIFIED_SUFFIXES, is_split_residue
from qrspi_guard.watch.events import EventKind
from qrspi_guard.watch.judge import ignored, signature
from qrspi_guard.watch.policy import Policy
from qrspi_guard.watch.registry import Tracked


def sig_or_none(path: str) -> tuple[int, int, int, int] | None:
    """The file's signature (:func:`~.judge.signature`), None when it is not there."""
    try:
        return signature(os.lstat(path))
    except OSError:
        return None


def mtime_or_zero(path: str) -> float:
    """The entry's mtime (0.0 when it is not there)."""
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return 0.0


def reconcile_rounds(rounds: dict[str, Tracked], policy: Policy,
                     side_sigs: dict[str, Any]) -> bool:
    """Tell *policy* about every round entry and side file that differs from what was
    judged (*side_sigs* is updated). False when a round directory could not be listed
    (a discovery is due)."""
    listed = True
    for key, t in rounds.items():
        try:
            entries = list(os.scandir(key))
        except OSError:
            listed = False
            continue
        pending = {os.path.basename(p) for p in policy.unsettled(key)}
        present = set()
        for entry in entries:
            name = entry.name
            if ignored(name):
                if is_split_residue(name):  # a split killed since: split_incomplete
                    policy.mark_dirty(key)
                continue
            present.add(name)
            if name in pending:
                continue
            try:
                sig = signature(entry.stat(follow_symlinks=False))
            except OSError:
                continue
            v = t.judge.verdicts.get(name)
            if v is None or v.sig != sig:
                policy.file_event(entry.path, key, EventKind.CREATED)
        if any(n not in present for n in t.judge.verdicts):
            policy.mark_dirty(key)
        for side in t.side_files():
            sig2 = sig_or_none(side)
            if sig2 != side_sigs.get(side):
                side_sigs[side] = sig2
                if sig2 is not None and side.endswith(VERIFIED_SUFFIXES):
                    policy.round_complete(key)
                policy.mark_dirty(key)
    return listed
