"""The catalogue's text (meanings and fixes) is Markdown with code spans; each output
shows it as code, never as Markdown source: :func:`spans` reads it once, and
:func:`plain` is the form for text outputs (the terminal, SARIF's plain help, the
hook's message), where a code span is quoted. The HTML report wraps the same spans in
``<code>`` (:mod:`qrspi_guard.overview.html`); Markdown outputs keep the source.
"""

from __future__ import annotations

import re

#: a code span: a run of backticks, its text, the same run (CommonMark)
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)


def spans(text: str) -> list[tuple[str, bool]]:
    """*text* as (piece, is code) pairs, in order; a code span's one leading and
    trailing space (written around a backtick inside it) are dropped, as CommonMark
    does."""
    out: list[tuple[str, bool]] = []
    at = 0
    for m in _SPAN.finditer(text):
        if m.start() > at:
            out.append((text[at:m.start()], False))
        code = m.group(2)
        if len(code) > 2 and code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        out.append((code, True))
        at = m.end()
    if at < len(text):
        out.append((text[at:], False))
    return out


def plain(text: str) -> str:
    """*text* for a text output: each code span in single quotes, no backticks."""
    return "".join(f"'{piece}'" if is_code else piece for piece, is_code in spans(text))
