"""Untrusted text made inert in GitHub-flavoured Markdown (the step summary, ``status
--format markdown``): never a link, an image, an autolink, HTML, emphasis or an extra
table cell, whatever a finding or a file name holds.

Untrusted text goes into a code span (:func:`code`): inside one, Markdown renders
nothing (no links, autolinks, images, entities or HTML), and the span's backtick fence
is longer than any run of backticks in the text, so the text cannot close it. In a table
cell every ``|`` is written ``\\|`` (GFM splits cells before it reads code spans and
turns ``\\|`` back into ``|``), so a row keeps its cell count. The text is one escaped
line first (:func:`qrspi_guard.textsafe.one_line`): no line break can end a row.
"""

from __future__ import annotations

import re

from qrspi_guard.textsafe import one_line

_TICKS = re.compile(r"`+")


def code(text: object, cell: bool = False, limit: int | None = None) -> str:
    """*text* as an inert inline code span (empty text: nothing). *cell*: for a table."""
    s = one_line(text, limit)
    if not s:
        return ""
    longest = max((len(m) for m in _TICKS.findall(s)), default=0)
    fence = "`" * (longest + 1)
    if s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ")):
        s = f" {s} "
    if cell:
        s = s.replace("|", "\\|")
    return f"{fence}{s}{fence}"


def trusted(text: str, cell: bool = False) -> str:
    """The guard's own Markdown (the cause catalogue's text) for a table cell."""
    s = text.replace("\n", " ")
    return s.replace("|", "\\|") if cell else s
