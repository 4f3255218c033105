"""What the per-file rules know about a file and report: its place (round, step,
generation), the facts the round rules need, and the per-file report."""

from __future__ import annotations

import os

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.contract.generations import DEFAULT_GENERATION, Generation
from qrspi_guard.contract.layout import Kind
from qrspi_guard.records import field, record


@record(frozen=True)
class Place:
    """Where a file is: its display path, its round's step and number, and the protocol
    generation the round is judged by. A round's own place (its path the round
    directory) gives each of its entries theirs (:meth:`entry`)."""

    path: str
    step: str | None  #: step directory name, e.g. `design`, `integration`, `task-03`
    round: int | None
    is_task: bool = False
    gen: Generation = DEFAULT_GENERATION
    #: read each finding's `change_type:` line as the fan-in does (a verified fan-in
    #: round: its recount needs it)
    fanin_fields: bool = False

    def entry(self, name: str) -> Place:
        """The place of the entry *name* of this round directory: the same round, its
        path the directory's joined with *name* (just *name* in ``.``)."""
        base = self.path
        return Place(name if base in ("", ".") else os.path.join(base, name), self.step,
                     self.round, self.is_task, self.gen, self.fanin_fields)


@record
class FileFacts:
    """What the round rules need to know about one file."""

    name: str
    kind: Kind
    tag: str | None = None
    fnum: int | None = None
    suffix: str | None = None  #: a sidecar's `.score.*` suffix
    finding_id: str | None = None
    change_type: str | None = None  #: the valid change_type, else None
    severity: str | None = None  #: the valid severity, else None
    escalated: bool = False  #: cites feedback/*.md
    score: int | None = None  #: sidecar: the readable score 0..100, else None
    verify_failed: bool = False  #: sidecar: VERIFY_FAILED / verifier_status: failed
    parsed: bool = False
    #: finding: the first `change_type:` line as verifier-fan-in.sh reads it ("" when
    #: absent or empty); None when not read (:attr:`Place.fanin_fields` off)
    fanin_change_type: str | None = None
    #: `<stem>.score.md`: the score as verifier-fan-in.sh reads it from the raw bytes (None
    #: when it would halt the finding, or when not read)
    fanin_score: int | None = None
    stands_for_output: bool = False  #: a valid visual-fidelity skip sentinel


@record
class FileReport:
    facts: FileFacts
    diagnostics: list[Diagnostic] = field(default_factory=list)
