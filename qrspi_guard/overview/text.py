"""The overview as terminal text: box drawing and colour on a terminal, ASCII only
elsewhere (logs, copy-paste). Status is never told by colour alone: each status has its
own symbol and word. Every string is escaped already (:mod:`.model`)."""

from __future__ import annotations

from collections.abc import Sequence

from qrspi_guard.contract.codespans import plain
from qrspi_guard.output.text import counts
from qrspi_guard.overview.model import (
    HaltView,
    Overview,
    ReviewerView,
    RoundView,
    RunView,
    StepView,
)
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import plural

_SGR = {"ok": "32", "pending": "33", "halt": "1;31", "dim": "2", "bold": "1"}


@record(frozen=True)
class Style:
    unicode: bool = False
    color: bool = False

    def paint(self, text: str, what: str) -> str:
        return f"\x1b[{_SGR[what]}m{text}\x1b[0m" if self.color and text else text

    def mark(self, status: str) -> str:
        if self.unicode:
            return {"ok": "✓", "pending": "…", "halt": "✗"}.get(status, "?")
        return {"ok": "+", "pending": "~", "halt": "X"}.get(status, "?")


def cell(r: RoundView) -> str:
    """A grid cell: symbol, word, and the count that matters."""
    if r.status == "halt":
        return f"halt {r.errors}"
    if r.status == "pending":
        return f"pending {len(r.awaiting)}"
    return "ok"


def table(head: Sequence[str], rows: Sequence[Sequence[str]], style: Style,
          status_of: Sequence[Sequence[str]] | None = None) -> list[str]:
    """A bordered table; *status_of* gives each body cell's status for colour."""
    widths = [max([len(head[i])] + [len(r[i]) for r in rows]) for i in range(len(head))]
    if style.unicode:
        h, v, tl, tm, tr, ml, mm, mr, bl, bm, br = "─│┌┬┐├┼┤└┴┘"
    else:
        h, v, tl, tm, tr, ml, mm, mr, bl, bm, br = "-|+++++++++"

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join(h * (w + 2) for w in widths) + right

    def line(cells: Sequence[str], statuses: Sequence[str] | None = None) -> str:
        parts = []
        for i, c in enumerate(cells):
            pad = c + " " * (widths[i] - len(c))
            if statuses is not None and statuses[i] in _SGR:
                pad = style.paint(c, statuses[i]) + " " * (widths[i] - len(c))
            parts.append(f" {pad} ")
        return v + v.join(parts) + v

    out = [rule(tl, tm, tr), line(head), rule(ml, mm, mr)]
    for i, r in enumerate(rows):
        out.append(line(r, status_of[i] if status_of is not None else None))
    out.append(rule(bl, bm, br))
    return out


def grid(run: RunView, style: Style) -> list[str]:
    cols = run.columns()
    head = ["step"] + [f"round {n:02d}" for n in cols]
    rows, colours = [], []
    for s in run.steps:
        by_round = {r.round: r for r in s.rounds}
        row, colour = [one_line(s.name)], [""]
        for n in cols:
            r = by_round.get(n)
            row.append(f"{style.mark(r.status)} {cell(r)}" if r else "")
            colour.append(r.status if r else "")
        rows.append(row)
        colours.append(colour)
    return table(head, rows, style, colours)


def _reviewer(v: ReviewerView, r: RoundView) -> str:
    extra = "" if v.expected else " (not expected)"
    if v.state == "error":
        what = f"error: {v.error}" + (f" ({plural(v.findings, 'finding')})"
                                      if v.findings else "")
    elif v.state == "findings":
        what = f"{v.findings} finding{'s' if v.findings != 1 else ''}"
    elif v.state == "clean":
        what = "clean"
    elif v.state == "awaiting":
        what = "nothing yet (awaited)"
    else:
        what = "nothing yet"
    return what + extra


def current(run: RunView, style: Style) -> list[str]:
    out = []
    for s in run.steps:
        r = s.current
        head = (f"{one_line(s.name)} round {r.round:02d}: "
                f"{style.paint(style.mark(r.status) + ' ' + cell(r), r.status)}")
        if r.verified:
            head += f"; verifier kept {r.kept}, dropped {r.dropped}"
        out.append(head)
        width = max((len(v.tag) for v in r.reviewers), default=0)
        for v in r.reviewers:
            out.append(f"  {v.tag.ljust(width)}  {_reviewer(v, r)}")
        if not r.reviewers:
            out.append("  (no expected reviewers known: config.md's matrix row does not apply)")
    return out


def halt_lines(halts: Sequence[HaltView], style: Style, quiet: dict[str, float]) -> list[str]:
    out = []
    for h in halts:
        where = one_line(h.path) + (f":{h.line}" if h.line else "")
        note = ""
        settle = quiet.get(h.path)
        if settle is not None and h.cause == "expected_tag_no_output":
            note = f" (quiet time: nothing written {settle:g}s after the last change)"
        out.append(f"{style.paint(style.mark('halt'), 'halt')} "
                   f"{style.paint(h.cause, 'bold')} {where}{note}")
        out.append(f"    {h.message}")
        if h.fix:
            out.append(f"    fix: {plain(h.fix)}")
    return out


def series(s: StepView) -> list[tuple[str, list[int]]]:
    """A step's convergence series, each named: the findings per round, the verifier's
    kept and dropped (where it ran), and the findings per change_type."""
    rows = [("findings", s.series())]
    if any(r.verified for r in s.rounds):
        rows += [("kept", [r.kept for r in s.rounds]),
                 ("dropped", [r.dropped for r in s.rounds])]
    if sum(s.series()):
        types = sorted({t for r in s.rounds for t in r.by_change_type()})
        rows += [(one_line(t), [r.by_change_type().get(t, 0) for r in s.rounds])
                 for t in types]
    return rows


def convergence(run: RunView) -> list[str]:
    """Per step, a header line naming its rounds, then each series under it, one
    number per round in the round's column: no number is left to guess."""
    width = max((len(one_line(s.name)) for s in run.steps), default=0)
    out = []
    for s in run.steps:
        rows = series(s)
        label = max(len("round"), *(len(name) for name, _ in rows))
        heads = [f"{r.round:02d}" for r in s.rounds]
        cell = max(len(x) for x in heads + [str(n) for _, ns in rows for n in ns])
        out.append(f"{one_line(s.name).ljust(width)}  {'round'.ljust(label)}  "
                   + " ".join(h.rjust(cell) for h in heads))
        out += [f"{''.ljust(width)}  {name.ljust(label)}  "
                + " ".join(str(n).rjust(cell) for n in ns) for name, ns in rows]
    return out


def render(ov: Overview, style: Style, events: Sequence[str] = ()) -> str:
    """The whole overview; *events* (the live view's latest lines) go below it."""
    rounds = ov.rounds()
    halted = sum(1 for r in rounds if r.status == "halt")
    head = counts(len(rounds), ov.files, ov.errors, ov.warnings)
    out = [style.paint(f"qrspi-guard status: {head}, {plural(halted, 'round')} halted",
                       "bold")]
    quiet = {h.path: r.quiet for r in rounds if r.quiet is not None for h in r.halts}
    for run in ov.runs:
        out += ["", style.paint(f"run {one_line(run.path)}", "bold")]
        out += grid(run, style)
        out += ["", "current round of each step:"] + ["  " + x for x in current(run, style)]
        out += ["", "convergence (per step, each series by round):"] + [
            "  " + x for x in convergence(run)]
    halts = ov.halts()
    if halts:
        out += ["", f"halts ({len(halts)}):"] + ["  " + x for x in halt_lines(halts, style, quiet)]
    elif rounds:
        out += ["", "no halts"]
    else:
        out += ["", "no review rounds found"]
    if events:
        out += ["", "latest events:"] + ["  " + e for e in events]
    return "\n".join(out) + "\n"
