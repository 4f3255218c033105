"""Making untrusted text safe to print.

Anything read from a finding, a findings.json, a file name or a payload is untrusted: it
must not inject terminal escape sequences, CI workflow commands or extra lines into any
output. Every shell (CLI, reports, status files, hook messages) passes such text through
:func:`one_line` before printing it.

What is escaped, one way everywhere:

- every character of Unicode category Cc (C0 and C1 controls, DEL), Cf (format
  controls: bidi marks, overrides and isolates, zero-width characters, U+061C, the
  BOM, ...), Zl and Zp (line and paragraph separators), as ``\\n``, ``\\r``, ``\\t``,
  ``\\xNN`` below U+0080 and ``\\uNNNN`` (``\\UNNNNNNNN``) above;
- noncharacters (U+FFFE, U+FFFF, U+FDD0..U+FDEF, ...) and lone surrogates as
  ``\\uNNNN``, except the surrogates Python's ``surrogateescape`` makes of a byte that
  is not valid UTF-8 (a file name such as ``b"\\xff.md"``), which are shown as that
  byte, ``\\xff``.

So a name that is not valid UTF-8 prints the same in `text`, `github` and `junit`
output, and the result is always encodable as UTF-8. (The JSON formats keep such a name
lossless instead, as the surrogate escape ``\\udcff``.)

:func:`line_start` and :func:`path_at_line_start` keep untrusted text at the start of a
line from being read as a GitHub Actions workflow command (``::error ...``).
"""

from __future__ import annotations

import re

#: ASCII text needs only this (the common case, and the hook's fast path)
_ASCII_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _noncharacter(code: int) -> bool:
    return 0xFDD0 <= code <= 0xFDEF or (code & 0xFFFE) == 0xFFFE


def _escape_char(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if code < 0x80:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the raw byte of an undecodable name
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(ch: str) -> bool:
    import unicodedata  # only for non-ASCII text

    code = ord(ch)
    return unicodedata.category(ch) in _ESCAPED_CATEGORIES or _noncharacter(code)


def escape(s: str) -> str:
    """*s* with every unsafe character escaped (see the module docstring); nothing cut."""
    if s.isascii():
        return _ASCII_UNSAFE.sub(lambda m: _escape_char(m.group(0)), s)
    out = []
    for ch in s:
        if ch < "\x80":
            out.append(_escape_char(ch) if ch < " " or ch == "\x7f" else ch)
        elif _unsafe(ch):
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def one_line(text: object, limit: int | None = None) -> str:
    """Return *text* as one printable line: controls escaped, optionally cut to *limit*.

    The cut is applied to the original text (so an escape is never split): at most
    *limit* characters, the last an ellipsis.
    """
    s = text if isinstance(text, str) else repr(text)
    if limit is not None and len(s) > limit:
        s = s[:max(limit - 1, 0)] + "…"
    return escape(s)


def _command_like(s: str) -> bool:
    """Whether a line starting with *s* would be a GitHub Actions workflow command (the
    runner reads a line as one when it starts with ``::`` after leading white space)."""
    return s.lstrip().startswith("::")


def line_start(text: str) -> str:
    """Already-escaped untrusted *text* that will start a line: a leading ``::`` (after
    any white space) has its first colon escaped, so no runner reads it as a command."""
    if not _command_like(text):
        return text
    i = text.index(":")
    return text[:i] + "\\x3a" + text[i + 1:]


def path_at_line_start(path: str) -> str:
    """A path for the start of a line: escaped, and shown as ``./PATH`` when it would
    otherwise start with ``::`` or white space (the line format is otherwise the same)."""
    shown = one_line(path)
    if _command_like(shown) or (shown and shown[0].isspace()):
        return "./" + shown
    return shown
