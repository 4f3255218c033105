"""split's commit record and its reserved hidden names (the names themselves are in
:mod:`qrspi_guard.contract.layout`, `split_incomplete` in :mod:`qrspi_guard.rules.splitresidue`).

Every file split creates before its commit is complete is named
``.qrspi-split.<id>.<role>`` in the round directory (``<id>``: 12 hex digits, one per
attempt):

- ``.qrspi-split.<id>.new.<name>``: a new file, complete and fsynced, to become ``<name>``;
- ``.qrspi-split.<id>.intent-tmp``: the intent being written;
- ``.qrspi-split.<id>.intent``: the commit record, JSON ``{"tag", "writes", "removals"}``.

Any name that starts with :data:`RESERVED_PREFIX` is residue: a round holding one is
`split_incomplete` (round-contract §10) in ``check``, and in ``watch`` while no split
holds the round's lock. The next ``split`` into the round repairs it first
(:mod:`qrspi_guard.split.recover`).
"""

from __future__ import annotations

import os
from typing import Any

from qrspi_guard.contract.layout import (
    RESERVED_PREFIX,
    Kind,
    ResidueName,
    classify,
    intent_name,
    intent_tmp_name,
    is_split_residue,
    new_name,
    parse_residue,
)
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record

__all__ = ["MAX_INTENT_BYTES", "RESERVED_PREFIX", "Intent", "ResidueName", "intent_name",
           "intent_tmp_name", "is_split_residue", "new_name", "parse_residue", "residue_in"]

#: An intent lists at most a round's worth of names; a bigger file is not one of ours.
MAX_INTENT_BYTES = 1 << 20


@record(frozen=True)
class Intent:
    """The commit record of one attempt: what the round must hold once it is done."""

    tag: str
    writes: tuple[str, ...]
    removals: tuple[str, ...]

    def encode(self) -> bytes:
        return jsondoc.dumps({"tag": self.tag, "writes": list(self.writes),
                           "removals": list(self.removals)}).encode() + b"\n"

    @classmethod
    def decode(cls, data: bytes) -> Intent | None:
        """The intent in *data*, or None unless every name in it is one of the tag's
        own output names (so a damaged record can never touch another file)."""
        if len(data) > MAX_INTENT_BYTES:
            return None
        try:
            doc: Any = jsondoc.loads(data)
        except jsondoc.JsonError:
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("tag"), str):
            return None
        tag = doc["tag"]
        lists: list[Any] = [doc.get("writes"), doc.get("removals")]
        if not all(isinstance(x, list) and all(isinstance(n, str) for n in x) for x in lists):
            return None
        if not all(_is_output_of(tag, n) for x in lists for n in x):
            return None
        return cls(tag, tuple(lists[0]), tuple(lists[1]))


def _is_output_of(tag: str, name: str) -> bool:
    fname = classify(name)
    return fname.kind in (Kind.FINDING, Kind.CLEAN, Kind.SIDECAR) and fname.tag == tag


def residue_in(round_dir: str | Dir) -> list[str]:
    """The reserved names in a round directory now (sorted)."""
    names = round_dir.listdir() if isinstance(round_dir, Dir) else os.listdir(round_dir)
    return sorted(n for n in names if is_split_residue(n))
