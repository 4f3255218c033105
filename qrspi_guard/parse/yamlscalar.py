"""YAML 1.1 scalars as PyYAML's ``CSafeLoader`` resolves them, for the fast reader
(:mod:`.fastparse`): plain, single- and double-quoted scalars, flow lists of them and
block-list items, each read from one line; :data:`DECLINE` (or ``None``) for anything
with a corner, which the caller hands to the C loader."""

from __future__ import annotations

import re
from typing import Any

DECLINE = object()


class Lazy:
    """A regular expression compiled on first use (start-up time: most runs need only
    a few of these)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._args)
        for method in ("match", "fullmatch", "search", "findall"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


_DECIMAL = Lazy(r"0|[1-9][0-9]{0,17}")


#: PyYAML's implicit resolvers (yaml/resolver.py) for the first characters where a
#: plain scalar may be something other than a string. A match here that the fast path
#: does not construct itself (floats, other ints, timestamps) is declined.
_FLOAT = Lazy(r'''^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$''', re.X)


_INT = Lazy(r'''^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$''', re.X)


_TIMESTAMP = Lazy(r'''^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$''', re.X)


BOOL_WORDS = {w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")}


NULL_WORDS = frozenset({"null", "Null", "NULL", "~", ""})


_WORD_FIRST = frozenset("yYnNtTfFoO~")


_NUMBER_FIRST = frozenset("-+0123456789.")


#: Characters a plain scalar may not start with (YAML indicators), in block context.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


#: Plain scalar text in block context: no `: ` / trailing `:`, no ` #` comment start.
_BLOCK_PLAIN_BAD = Lazy(r":(?: |\t|$)|[ \t]#")


#: A plain item inside a flow list: no flow indicators, no '#', ':' only before a
#: character that cannot make it a key or end it.
_FLOW_PLAIN = Lazy(r"[^,\[\]{}#:'\"\t]*(?::[A-Za-z0-9_./-][^,\[\]{}#:'\"\t]*)*")


_SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "/": "/"}


_HEX_ESCAPES = {"x": 2, "u": 4}


def resolve(text: str) -> Any:
    """A plain scalar's value as PyYAML's resolver and SafeConstructor read it, or
    ``DECLINE`` for the kinds the fast path leaves to the C loader."""
    if not text:
        return None
    first = text[0]
    if first in _WORD_FIRST:
        if text in BOOL_WORDS:
            return BOOL_WORDS[text]
        if text in NULL_WORDS:
            return None
        return text
    if first in _NUMBER_FIRST:
        if _DECIMAL.fullmatch(text):
            return int(text)
        if _FLOAT.match(text) or _INT.match(text) or _TIMESTAMP.match(text):
            return DECLINE
        return text
    if text == "<<" or text == "=":
        return DECLINE
    return text


def _double(line: str, start: int) -> tuple[str, int] | None:
    """A one-line double-quoted scalar starting after the quote at *start*:
    (value, index after the closing quote), or None."""
    out: list[str] = []
    i = start
    n = len(line)
    while True:
        j = i
        while j < n and line[j] != '"' and line[j] != "\\":
            j += 1
        out.append(line[i:j])
        if j >= n:
            return None
        if line[j] == '"':
            return "".join(out), j + 1
        if j + 1 >= n:
            return None
        esc = line[j + 1]
        if esc in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[esc])
            i = j + 2
            continue
        width = _HEX_ESCAPES.get(esc)
        if width is None:
            return None
        digits = line[j + 2:j + 2 + width]
        if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
            return None
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDFFF:
            return None
        out.append(chr(code))
        i = j + 2 + width


def _single(line: str, start: int) -> tuple[str, int] | None:
    """A one-line single-quoted scalar starting after the quote at *start*."""
    out: list[str] = []
    i = start
    while True:
        j = line.find("'", i)
        if j == -1:
            return None
        out.append(line[i:j])
        if line.startswith("'", j + 1):
            out.append("'")
            i = j + 2
            continue
        return "".join(out), j + 1


def _rest_is_comment(line: str, i: int) -> bool:
    """Only blanks, optionally followed by a `#` comment after a blank, from *i*."""
    rest = line[i:]
    stripped = rest.lstrip(" \t")
    return not stripped or (stripped[0] == "#" and len(stripped) < len(rest))


def scalar(line: str, i: int) -> tuple[Any, str | None] | None:
    """The block-context scalar at *i* to the end of the line (comment allowed):
    (value, plain text or None when quoted), or None to decline."""
    ch = line[i]
    if ch == "'" or ch == '"':
        got = _single(line, i + 1) if ch == "'" else _double(line, i + 1)
        if got is None or not _rest_is_comment(line, got[1]):
            return None
        return got[0], None
    if ch in _INDICATORS:
        return None
    text = line[i:]
    m = _BLOCK_PLAIN_BAD.search(text)
    if m is not None:
        if m.group()[0] == ":":
            return None
        text = text[:m.start()]
    text = text.rstrip(" \t")
    value = resolve(text)
    if value is DECLINE:
        return None
    return value, text


def flow_list(line: str, i: int) -> list[Any] | None:
    """A one-line flow list of scalars starting at the `[` at *i*."""
    n = len(line)
    i += 1
    items: list[Any] = []
    while True:
        while i < n and line[i] == " ":
            i += 1
        if i >= n:
            return None
        ch = line[i]
        if ch == "]":
            if items:  # `[a, ]`: a trailing comma
                return None
            break
        if ch == "'" or ch == '"':
            got = _single(line, i + 1) if ch == "'" else _double(line, i + 1)
            if got is None:
                return None
            items.append(got[0])
            i = got[1]
        else:
            if ch in _INDICATORS:
                return None
            m = _FLOW_PLAIN.match(line, i)
            end = m.end() if m else i
            text = line[i:end].rstrip(" ")
            if not text or end >= n or line[end] not in ",]":
                return None
            value = resolve(text)
            if value is DECLINE:
                return None
            items.append(value)
            i = end
        while i < n and line[i] == " ":
            i += 1
        if i >= n:
            return None
        if line[i] == "]":
            break
        if line[i] != ",":
            return None
        i += 1
        while i < n and line[i] == " ":
            i += 1
        if i < n and line[i] == "]":
            return None  # trailing comma
    if not _rest_is_comment(line, i + 1):
        return None
    return items


#: The common block list line: `- token`, `- 'text'`, `- "text"`, optional comment.
_ITEM = Lazy(r"( *)- +(?:"
              r"([A-Za-z0-9_./][A-Za-z0-9_./-]*(?::[A-Za-z0-9_./-]+)*)"
              r"|'([^'\n]*)'"
              r"|\"([^\"\\\n]*)\""
              r")(?:[ \t]*|[ \t]+#.*)")


def block_item(line: str) -> tuple[int, Any] | None:
    """A block list line `<indent>- scalar`: (indent, value), or None."""
    m = _ITEM.fullmatch(line)
    if m is not None:
        spaces, plain, single, double = m.groups()
        if plain is None:
            return len(spaces), (single if double is None else double)
        value = resolve(plain)
        if value is DECLINE:
            return None
        return len(spaces), value
    indent = len(line) - len(line.lstrip(" "))
    if not line.startswith("- ", indent):
        return None
    i = indent + 2
    n = len(line)
    while i < n and line[i] == " ":
        i += 1
    if i >= n or line[i] == "#" or line[i] == "\t":
        return None
    got = scalar(line, i)
    if got is None:
        return None
    return indent, got[0]
