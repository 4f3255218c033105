"""A round's status change as one line of text (``watch`` off a terminal, and the live
view's events): the time, the status, the round, and every halt by name (a halt the
quiet time brought says so) or what the round awaits."""

from __future__ import annotations

import os
from typing import Any

from qrspi_guard.textsafe import one_line

#: an event line names each halt with its message up to this many halts; past it, the
#: rest are named by cause and count
NAMED_HALTS = 20
#: causes a quiet time can bring: a reviewer that had not written when --settle ran out
QUIET_CAUSES = frozenset({"expected_tag_no_output"})


def text_line(round_dir: str, doc: dict[str, Any], quiet: float | None = None) -> str:
    """A status change as one line of text: time, status, round, and every halt (or what
    the round awaits). A halt the quiet time brought (*quiet*: the --settle seconds
    that completed the round) says so."""
    where = _display(round_dir)
    status = doc["status"]
    if status == "halt":
        parts = []
        halts = doc["halts"]
        for h in halts[:NAMED_HALTS]:
            at = h.get("file") or h.get("tag") or ""
            if h.get("line"):
                at += f":{h['line']}"
            part = f"{h['cause']}" + (f" {at}" if at else "") + \
                f": {one_line(h['message'], 160)}"
            if quiet is not None and h["cause"] in QUIET_CAUSES:
                part += f" (quiet time: nothing written {quiet:g}s after the last change)"
            parts.append(part)
        rest: dict[str, int] = {}
        for h in halts[NAMED_HALTS:]:
            rest[h["cause"]] = rest.get(h["cause"], 0) + 1
        if rest:
            parts.append(f"and {len(halts) - NAMED_HALTS} more: " +
                         ", ".join(f"{c} x{n}" for c, n in rest.items()))
        detail = f" ({len(halts)} halts): " + "; ".join(parts) if len(halts) > 1 else \
            ": " + parts[0]
    elif status == "pending":
        detail = f": awaiting {', '.join(doc['awaiting'])}" if doc["awaiting"] else ""
    else:
        detail = ""
    stamp = doc["checked_at"][11:19]
    return one_line(f"{stamp} {status.upper():7} {where}{detail}")


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel
