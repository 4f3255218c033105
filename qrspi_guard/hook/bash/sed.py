"""The files a sed script writes: its ``w`` and ``W`` commands and the ``w`` flag of ``s``.

GNU sed's script grammar (``info sed``, "sed scripts"): commands separated by new
lines or ``;``, each after an optional address or two (a line number, ``$``,
``/regex/`` or ``\\cregexc`` with ``I`` and ``M``, ``first~step``, ``addr,+N``,
``addr,~N``) and ``!``. The file name of ``w``, ``W``, ``r`` and ``R`` is the rest of
the line. The ``e`` command and the ``e`` flag run a command: the script is opaque, as
is one this reader does not understand. Pure.
"""

from __future__ import annotations

from qrspi_guard.hook.bash.options import Opaque

_SIMPLE = frozenset("{}=dDgGhHlnNpPxzF")
_FLAGS = frozenset("gpiImM0123456789")


def sed_writes(script: str) -> list[str]:
    """The files *script* writes, or :class:`Opaque`."""
    out: list[str] = []
    s, n, i = script, len(script), 0
    while i < n:
        c = s[i]
        if c in " \t\n;":
            i += 1
            continue
        if c == "#":
            i = _line_end(s, i)
            continue
        i = _address(s, i)
        if i < n and s[i] == ",":
            i = _address(s, _blanks(s, i + 1))
        i = _blanks(s, i)
        while i < n and s[i] == "!":
            i = _blanks(s, i + 1)
        if i >= n:
            raise Opaque  # an address without a command
        c = s[i]
        i += 1
        if c in _SIMPLE:
            continue
        if c in "qQlL":
            i = _blanks(s, i)
            while i < n and s[i].isdigit():
                i += 1
        elif c in "aic":  # text to the end of the line (a backslash continues it)
            while i < n and s[i] != "\n":
                i += 2 if s[i] == "\\" else 1
        elif c in ":btTv":  # a label
            while i < n and s[i] not in ";\n":
                i += 1
        elif c in "rRwW":
            end = _line_end(s, i)
            name = s[i:end].lstrip(" \t")
            if c in "wW":
                if not name:
                    raise Opaque
                out.append(name)
            i = end
        elif c == "s":
            i = _delimited(s, i, 2)
            while i < n and s[i] in _FLAGS:
                i += 1
            if i < n and s[i] == "w":
                end = _line_end(s, i + 1)
                name = s[i + 1:end].lstrip(" \t")
                if not name:
                    raise Opaque
                out.append(name)
                i = end
            elif i < n and s[i] not in " \t\n;}#":
                raise Opaque  # the e flag runs a command; or a flag sed does not have
        elif c == "y":
            i = _delimited(s, i, 2)
        else:
            raise Opaque  # e runs a command; anything else is not understood here
    return out


def _line_end(s: str, i: int) -> int:
    end = s.find("\n", i)
    return len(s) if end < 0 else end


def _blanks(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _address(s: str, i: int) -> int:
    n = len(s)
    if i < n and s[i] in "+~":  # addr,+N and addr,~N
        i += 1
    if i < n and s[i].isdigit():
        while i < n and (s[i].isdigit() or s[i] == "~"):
            i += 1
        return i
    if i < n and s[i] == "$":
        return i + 1
    if i < n and s[i] in "/\\":
        if s[i] == "\\":
            i += 1
        i = _delimited(s, i, 1)
        while i < n and s[i] in "IM":
            i += 1
    return i


def _delimited(s: str, i: int, parts: int) -> int:
    """Past *parts* sections delimited by the character at *i* (``/a/b/``)."""
    if i >= len(s) or s[i] in "\n\\":
        raise Opaque
    delimiter = s[i]
    i += 1
    for _ in range(parts):
        while i < len(s) and s[i] != delimiter:
            if s[i] == "\n":
                raise Opaque
            i += 2 if s[i] == "\\" else 1
        if i >= len(s):
            raise Opaque  # unterminated: sed refuses it
        i += 1
    return i
