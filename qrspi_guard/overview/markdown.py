"""The overview as GitHub-flavoured Markdown (``status --format markdown`` and the step
summary): the grid, each step's current round, the halts with their fixes and the
convergence series, within a byte limit (past it, a last line says what was left out).

Everything copied from a finding or a file name is an inert code span in a table cell
(:mod:`qrspi_guard.output.markdown`): never a link, an image or HTML, and every row keeps
its cell count.
"""

from __future__ import annotations

from collections.abc import Iterator

from qrspi_guard.output.markdown import code, trusted
from qrspi_guard.output.text import counts
from qrspi_guard.overview.model import Overview, RoundView, RunView
from qrspi_guard.overview.text import cell
from qrspi_guard.voice import plural

_MARK = {"ok": "✅", "pending": "⏳", "halt": "❌"}


def _cell(r: RoundView | None) -> str:
    return f"{_MARK.get(r.status, '')} {cell(r)}" if r is not None else ""


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _reviewers(r: RoundView) -> str:
    parts = []
    for v in r.reviewers:
        what = {"findings": plural(v.findings, "finding"), "clean": "clean",
                "awaiting": "nothing yet (awaited)", "nothing": "nothing yet"}.get(v.state, "")
        if v.state == "error":
            what = f"❌ `{v.error}`"
        parts.append(f"{code(v.tag, cell=True)} {what}")
    return "; ".join(parts) or "(no expected reviewers known)"


def _grid(run: RunView) -> Iterator[str]:
    cols = run.columns()
    yield _row(["step"] + [f"round {n:02d}" for n in cols])
    yield _row(["---"] * (len(cols) + 1))
    for s in run.steps:
        by_round = {r.round: r for r in s.rounds}
        yield _row([code(s.name, cell=True)] + [_cell(by_round.get(n)) for n in cols])


def _current(run: RunView) -> Iterator[str]:
    yield _row(["step", "round", "status", "reviewers", "verifier"])
    yield _row(["---"] * 5)
    for s in run.steps:
        r = s.current
        verifier = f"kept {r.kept}, dropped {r.dropped}" if r.verified else ""
        yield _row([code(s.name, cell=True), f"{r.round:02d}", _cell(r), _reviewers(r),
                    verifier])


def _convergence(run: RunView) -> Iterator[str]:
    yield _row(["step", "rounds", "findings", "kept", "dropped", "by change_type"])
    yield _row(["---"] * 6)
    for s in run.steps:
        verified = any(r.verified for r in s.rounds)
        types = sorted({t for r in s.rounds for t in r.by_change_type()})
        split = ", ".join(code(t, cell=True) + " " + " ".join(
            str(r.by_change_type().get(t, 0)) for r in s.rounds) for t in types)
        yield _row([code(s.name, cell=True), " ".join(f"{r.round:02d}" for r in s.rounds),
                    " ".join(map(str, s.series())),
                    " ".join(str(r.kept) for r in s.rounds) if verified else "",
                    " ".join(str(r.dropped) for r in s.rounds) if verified else "", split])


def sections(ov: Overview) -> Iterator[tuple[str, list[str]]]:
    """(what a part is called, its lines), in the order they are written: each run's
    grid and current rounds, the halts with their fixes, each run's convergence."""
    for run in ov.runs:
        yield "a run's grid", ["", f"### Run {code(run.path)}", "", *_grid(run)]
        yield "a run's current rounds", ["", "#### Current round of each step", "",
                                         *_current(run)]
    halts = ov.halts()
    if halts:
        yield "the halts' heading", ["", f"### Halts ({len(halts)})", "",
                                     _row(["cause", "where", "message", "fix"]),
                                     _row(["---"] * 4)]
        for h in halts:
            where = code(h.path + (f":{h.line}" if h.line else ""), cell=True)
            yield "halt", [_row([f"`{h.cause}`", where, code(h.message, cell=True),
                                 trusted(h.fix, cell=True)])]
    for run in ov.runs:
        yield "a run's convergence", ["", f"### Convergence of {code(run.path)}", "",
                                      *_convergence(run)]


def render(ov: Overview, limit: int | None = None, heading: bool = True,
           full_list: str = "this step's log") -> str:
    """The overview; at most *limit* bytes as UTF-8 when given (a last line then names
    what was left out, and *full_list*: where in this job every diagnostic is)."""
    rounds = ov.rounds()
    halted = sum(1 for r in rounds if r.status == "halt")
    head = ["## qrspi-guard overview"] if heading else []
    head += ["", f"{counts(len(rounds), ov.files, ov.errors, ov.warnings)}, "
             f"{plural(halted, 'round')} halted"]
    out = list(head)
    size = sum(len(s.encode()) + 1 for s in out)
    left: dict[str, int] = {}
    reserve = 400
    for what, lines in sections(ov):
        n = sum(len(s.encode()) + 1 for s in lines)
        if left or (limit is not None and size + n + reserve > limit):
            left[what] = left.get(what, 0) + 1
            continue
        out += lines
        size += n
    if left:
        parts = ", ".join(f"{n} × {what}" for what, n in left.items())
        out += ["", f"Left out to stay under GitHub's 1 MiB step summary limit: {parts}; "
                f"every diagnostic is in {full_list}."]
    return "\n".join(out) + "\n"
