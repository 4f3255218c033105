"""The absorbed-goal redirect map of a design (``round-NN.absorption-map.tsv``).

For the design and plan steps, ``review-prep`` writes beside the round the map that
upstream's ``scripts/design-absorption-markers.sh`` prints for ``design.md``: one line
per marker hit, in document order, ``<absorbed goal>\\t<absorbing CD-n | no-task>\\n``.
This module computes the same bytes itself (the guard never runs upstream's script).
The design is read as bytes, line by line (``\\n``; a last line without one still
counts, a CR stays part of its line), like the byte-oriented ``awk`` upstream's script
runs. Exactly four marker forms are recognised:

1. **heading suffix**: a goal heading ``## G<n> — ...`` (``## ``, ``G``, digits, a space,
   an em dash) whose text holds ``: absorbed by CD-<m>`` (gives ``CD-<m>``), ``: moot``
   or ``: already fixed`` (give ``no-task``); the first of these in the line counts;
2. **explicit non-goal**: a line holding ``**Explicit non-goal.**`` inside a goal
   block gives that goal ``no-task`` (once per line);
3. **acceptance criterion**: ``no separate v<x>.<y>[.<z>] task ships under [the ]G<n> ID``
   anywhere, inside a goal block or not, gives the goal it names ``no-task``, once per
   occurrence;
4. **free prose**: ``deferred to v<x>.<y>`` inside a goal block gives that goal
   ``no-task`` (once per line).

A goal block runs from a goal heading to the next ``## `` heading; any other ``## ``
heading ends it and opens none (``### `` headings and ``# `` titles are body lines). A
heading line carries only the heading-suffix form. On one body line the forms are
emitted in the order 3, 2, 4. A design without markers gives an empty map.
"""

from __future__ import annotations

import re

#: a goal heading: ``## G<digits> —`` (U+2014 in UTF-8) at the start of the line
_GOAL_HEADING = re.compile(rb"## (G[0-9]+) \xe2\x80\x94")
#: the heading-suffix marker; group 2 is the absorbing design decision, when there is one
_SUFFIX = re.compile(rb": (absorbed by (CD-[0-9]+)|moot|already fixed)")
#: the acceptance-criterion marker; group 1 is the goal it names
_NO_SEPARATE_TASK = re.compile(
    rb"no separate v[0-9]+\.[0-9]+(?:\.[0-9]+)? task ships under (?:the )?(G[0-9]+) ID")
_NON_GOAL = b"**Explicit non-goal.**"
_DEFERRED = re.compile(rb"deferred to v[0-9]+\.[0-9]+")
NO_TASK = b"no-task"


def markers(design: bytes) -> list[tuple[bytes, bytes]]:
    """Every marker hit of *design*, in document order: (absorbed goal, absorbing id)."""
    hits: list[tuple[bytes, bytes]] = []
    lines = design.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final newline ends the last line; it opens no empty one
    goal = b""
    for line in lines:
        if line.startswith(b"## "):
            goal = b""
            heading = _GOAL_HEADING.match(line)
            if heading is not None:
                goal = heading.group(1)
                suffix = _SUFFIX.search(line)
                if suffix is not None:
                    hits.append((goal, suffix.group(2) or NO_TASK))
            continue
        for named in _NO_SEPARATE_TASK.finditer(line):
            hits.append((named.group(1), NO_TASK))
        if goal and _NON_GOAL in line:
            hits.append((goal, NO_TASK))
        if goal and _DEFERRED.search(line):
            hits.append((goal, NO_TASK))
    return hits


def absorption_map(design: bytes) -> bytes:
    """The map file's bytes for *design* (empty when it has no markers)."""
    return b"".join(absorbed + b"\t" + absorbing + b"\n"
                    for absorbed, absorbing in markers(design))
