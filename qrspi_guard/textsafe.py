"""Making untrusted text safe to print.

Anything read from a finding, a findings.json or a payload is untrusted: it must not
inject terminal escape sequences, CI workflow commands or extra lines into any output.
Every shell (CLI, reports, status files, hook messages) passes such text through
:func:`one_line` before printing it.
"""

from __future__ import annotations

import re

#: C0 and C1 controls, DEL, the Unicode line/paragraph separators and the
#: bidirectional overrides/isolates (which can visually reorder a terminal line).
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: object, limit: int | None = None) -> str:
    """Return *text* as one printable line: controls escaped, optionally cut to *limit*.

    The cut is applied to the original text (so an escape is never split): at most
    *limit* characters, the last an ellipsis.
    """
    s = text if isinstance(text, str) else repr(text)
    if limit is not None and len(s) > limit:
        s = s[:max(limit - 1, 0)] + "…"
    return _UNSAFE.sub(_escape, s)
