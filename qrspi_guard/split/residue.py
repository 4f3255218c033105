"""split's reserved hidden names: the one exception to "hidden names are ignored".

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

import json
import os
import re
from collections.abc import Iterable
from typing import Any

from qrspi_guard.diagnostics import Diagnostic, diag
from qrspi_guard.layout import RESERVED_PREFIX, Kind, classify
from qrspi_guard.records import record

_NAME_RE = re.compile(r"\.qrspi-split\.(?P<id>[0-9a-f]{12})\."
                      r"(?:new\.(?P<name>[^/\0]+)|(?P<role>intent|intent-tmp))")
#: An intent lists at most a round's worth of names; a bigger file is not one of ours.
MAX_INTENT_BYTES = 1 << 20


def is_split_residue(name: str) -> bool:
    """True for every name in split's reserved pattern (well formed or not)."""
    return name.startswith(RESERVED_PREFIX)


def new_name(attempt: str, name: str) -> str:
    return f"{RESERVED_PREFIX}{attempt}.new.{name}"


def intent_name(attempt: str) -> str:
    return f"{RESERVED_PREFIX}{attempt}.intent"


def intent_tmp_name(attempt: str) -> str:
    return f"{RESERVED_PREFIX}{attempt}.intent-tmp"


@record(frozen=True)
class ResidueName:
    """A parsed reserved name: its attempt, and its role (`new`, `intent`,
    `intent-tmp`); *target* is the name a `new` file becomes."""

    attempt: str
    role: str
    target: str | None = None


def parse_residue(name: str) -> ResidueName | None:
    """The parts of a well-formed reserved name; None for any other name."""
    m = _NAME_RE.fullmatch(name)
    if m is None:
        return None
    if m.group("name") is not None:
        return ResidueName(m.group("id"), "new", m.group("name"))
    return ResidueName(m.group("id"), m.group("role"))


@record(frozen=True)
class Intent:
    """The commit record of one attempt: what the round must hold once it is done."""

    tag: str
    writes: tuple[str, ...]
    removals: tuple[str, ...]

    def encode(self) -> bytes:
        return json.dumps({"tag": self.tag, "writes": list(self.writes),
                           "removals": list(self.removals)}).encode() + b"\n"

    @classmethod
    def decode(cls, data: bytes) -> Intent | None:
        """The intent in *data*, or None unless every name in it is one of the tag's
        own output names (so a damaged record can never touch another file)."""
        if len(data) > MAX_INTENT_BYTES:
            return None
        try:
            doc: Any = json.loads(data)
        except (ValueError, RecursionError):
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("tag"), str):
            return None
        tag = doc["tag"]
        lists = [doc.get("writes"), doc.get("removals")]
        if not all(isinstance(x, list) and all(isinstance(n, str) for n in x) for x in lists):
            return None
        if not all(_is_output_of(tag, n) for x in lists for n in x):
            return None
        return cls(tag, tuple(lists[0]), tuple(lists[1]))  # type: ignore[arg-type]


def _is_output_of(tag: str, name: str) -> bool:
    fname = classify(name)
    return fname.kind in (Kind.FINDING, Kind.CLEAN, Kind.SIDECAR) and fname.tag == tag


def residue_diagnostics(round_dir: str, names: Iterable[str], watching: bool = False,
                        step: str | None = None, round: int | None = None) -> list[Diagnostic]:
    """`split_incomplete` for a round directory whose entry *names* hold residue: one
    diagnostic for the round. With *watching* (``watch``), nothing while a split holds
    the round's lock: the residue is then a split at work, not an interrupted one."""
    residue = sorted(n for n in names if is_split_residue(n))
    if not residue:
        return []
    if watching:
        from qrspi_guard.split.lock import split_lock_held

        if split_lock_held(round_dir):
            return []
    parsed = [p for p in map(parse_residue, residue) if p is not None]
    tags = sorted({classify(p.target).tag or "?" for p in parsed if p.target})
    committed = any(p.role == "intent" for p in parsed)
    then = ("it had committed, so the next split completes it" if committed
            else "it had not committed, so the next split removes its files and the "
            "round is as it was")
    whose = f" of {', '.join(tags)}" if tags else ""
    return [diag("split_incomplete",
                 f"a qrspi-guard split{whose} did not finish: {len(residue)} hidden file(s) "
                 f"such as {residue[0]}; {then}: run qrspi-guard split into this round "
                 "again (any tag)", path=round_dir, step=step, round=round)]


def residue_in(round_dir: str) -> list[str]:
    """The reserved names in a round directory now (sorted)."""
    return sorted(n for n in os.listdir(round_dir) if is_split_residue(n))
