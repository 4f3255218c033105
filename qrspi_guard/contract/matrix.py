"""The expected-reviewer matrix (round-contract §5): which tags a round must hear from."""

from __future__ import annotations

from qrspi_guard.records import record

_QS = ("quality", "scope")
_PLAN = ("quality", "scope", "spec", "security", "goal-traceability", "test-coverage",
         "silent-failure")

#: matrix row -> reviewer base names (each gets -claude, and -codex with a second reviewer)
ROWS: dict[str, tuple[str, ...]] = {
    "goals": _QS,
    "questions": ("quality",),
    "research": ("quality",),
    "design": _QS,
    "phasing": _QS,
    "structure": _QS,
    "plan": _PLAN,
    "parallelize": _QS,
    "replan": _QS,
    "implement-gate": ("implement-gate",),
    "integrate": ("integration", "security"),
    "test": ("spec", "code-quality", "goal-traceability"),
}

#: step directory -> the matrix rows it serves (`integration/` serves two)
STEP_ROWS: dict[str, tuple[str, ...]] = {row: (row,) for row in ROWS}
del STEP_ROWS["implement-gate"], STEP_ROWS["integrate"]
STEP_ROWS["integration"] = ("implement-gate", "integrate")


def rows_for(step: str) -> tuple[str, ...] | None:
    """The rows a step directory serves; a row name (`integrate`) serves itself."""
    rows = STEP_ROWS.get(step)
    if rows is None and step in ROWS:
        rows = (step,)
    return rows


def row_tags(row: str, second_reviewer: bool) -> tuple[str, ...]:
    """Tags of one matrix row, the -claude tags first."""
    bases = ROWS[row]
    tags = tuple(f"{b}-claude" for b in bases)
    if second_reviewer:
        tags += tuple(f"{b}-codex" for b in bases)
    return tags


@record(frozen=True)
class Expectation:
    """What a round must hear from: one row's tags, or a chosen row out of several."""

    rows: tuple[tuple[str, tuple[str, ...]], ...]  #: (row name, tags) candidates

    @property
    def routed(self) -> frozenset[str]:
        """Tags of every candidate row count as routed."""
        return frozenset(t for _, tags in self.rows for t in tags)

    def best_row(self, reported: set[str]) -> tuple[str, tuple[str, ...]]:
        """The row the round is judged against: a satisfied row if any, else the row
        with the most reported tags (ties go to the first row listed)."""
        best = self.rows[0]
        best_score = -1
        for name, tags in self.rows:
            if set(tags) <= reported:
                return name, tags
            score = len(set(tags) & reported)
            if score > best_score:
                best, best_score = (name, tags), score
        return best


def expectation_for_step(step: str, second_reviewer: bool) -> Expectation | None:
    """The expectation for a step directory, or None when the step has no fixed row."""
    rows = rows_for(step)
    if rows is None:
        return None
    return Expectation(tuple((r, row_tags(r, second_reviewer)) for r in rows))


def expectation_from_tags(tags: tuple[str, ...]) -> Expectation:
    """An explicit `--expect` list."""
    return Expectation((("expect", tags),))


def with_extra(expectation: Expectation, step: str,
               extra: tuple[tuple[str, tuple[str, ...]], ...]) -> Expectation:
    """*expectation* with the project configuration's extra tags for *step* (keyed by the
    step directory or by a matrix row name) added to every row it applies to."""
    if not extra:
        return expectation
    wanted = dict(extra)
    rows = []
    for name, tags in expectation.rows:
        more = tuple(t for key in (step, name) for t in wanted.get(key, ()) if t not in tags)
        rows.append((name, tags + tuple(dict.fromkeys(more))))
    return Expectation(tuple(rows))
