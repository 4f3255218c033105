"""``check --statistics``: the number of diagnostics per cause, most frequent first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.parse import jsondoc

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult

#: the formats --statistics prints
FORMATS = ("text", "json")


def statistics(diags: Iterable[Diagnostic]) -> list[tuple[str, str, int]]:
    """(cause, level, count) per cause, most frequent first, then by name."""
    counts: dict[tuple[str, str], int] = {}
    for d in diags:
        counts[(d.cause, d.level)] = counts.get((d.cause, d.level), 0) + 1
    return sorted(((c, lv, n) for (c, lv), n in counts.items()), key=lambda t: (-t[2], t[0]))


def render(result: CheckResult, fmt: str) -> str:
    """The statistics of *result* as *fmt* (one of :data:`FORMATS`): a JSON list, or
    one line per cause and the summary line."""
    from qrspi_guard.output.text import summary

    rows = statistics(result.diagnostics)
    if fmt == "json":
        return jsondoc.dumps([{"cause": c, "level": lv, "count": n} for c, lv, n in rows],
                             indent=2) + "\n"
    width = max((len(str(n)) for _, _, n in rows), default=1)
    cause_width = max((len(c) for c, _, _ in rows), default=0)
    lines = [f"{n:>{width}}  {c:<{cause_width}}  {lv}" for c, lv, n in rows]
    lines.append(summary(result))
    return "\n".join(lines) + "\n"
