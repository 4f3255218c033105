"""A fast reader for the frontmatter subset reviewers write; anything else is declined.

The subset: a flat block mapping at column 0 whose keys are plain ASCII names and
whose values are, on one line, a plain, single-quoted or double-quoted scalar or a
flow list of such scalars, or a block list (``- item`` lines) of such scalars; comment
lines, trailing ``# comments`` and blank lines anywhere. Everything outside the subset
(and every construct whose reading has a corner: floats, timestamps, non-decimal ints,
anchors, tags, multi-line scalars, nested collections, odd characters, ...) returns
``None`` and the caller hands the text to PyYAML's C loader.

What it returns equals the C loader path exactly (values resolved as YAML 1.1 the way
PyYAML's ``CSafeLoader`` does, key lines, the plain scalar text per key, duplicate
keys); ``tests/test_fastparse_differential.py`` proves it against the C loader.
"""

from __future__ import annotations

import re
from typing import Any

#: (data, key_lines, raw, duplicates); lines are 0-based within the frontmatter text
Parsed = tuple[dict[str, Any], dict[str, int], dict[str, "str | None"], list[tuple[str, int]]]

_DECLINE = object()


class _Lazy:
    """A regular expression compiled on first use (start-up time: most runs need only
    a few of these)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._args)
        for method in ("match", "fullmatch", "search", "findall"):
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)

#: Characters libyaml accepts as printable and not as a line break (tab, LF and the
#: printable ranges, less U+2028, U+2029, U+FEFF; U+0085 is a break and is excluded).
_BAD_CHAR = _Lazy("[^\t\n -~\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                       "\U00010000-\U0010ffff]")
#: The same for ASCII text (much cheaper to compile than the Unicode ranges above).
_ASCII_BAD = _Lazy("[\x00-\x08\x0b-\x1f\x7f]")
_KEY = _Lazy(r"([A-Za-z_][A-Za-z0-9_-]{0,127}):(?: |$)")
_DECIMAL = _Lazy(r"0|[1-9][0-9]{0,17}")
#: PyYAML's implicit resolvers (yaml/resolver.py) for the first characters where a
#: plain scalar may be something other than a string. A match here that the fast path
#: does not construct itself (floats, other ints, timestamps) is declined.
_FLOAT = _Lazy(r'''^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$''', re.X)
_INT = _Lazy(r'''^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$''', re.X)
_TIMESTAMP = _Lazy(r'''^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$''', re.X)
_BOOL = {w: True for w in ("yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")}
_BOOL.update({w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                                 "OFF")})
_NULL = frozenset({"null", "Null", "NULL", "~", ""})
_WORD_FIRST = frozenset("yYnNtTfFoO~")
_NUMBER_FIRST = frozenset("-+0123456789.")
#: Characters a plain scalar may not start with (YAML indicators), in block context.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
#: Plain scalar text in block context: no `: ` / trailing `:`, no ` #` comment start.
_BLOCK_PLAIN_BAD = _Lazy(r":(?: |\t|$)|[ \t]#")
#: A plain item inside a flow list: no flow indicators, no '#', ':' only before a
#: character that cannot make it a key or end it.
_FLOW_PLAIN = _Lazy(r"[^,\[\]{}#:'\"\t]*(?::[A-Za-z0-9_./-][^,\[\]{}#:'\"\t]*)*")
_SIMPLE_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "/": "/"}
_HEX_ESCAPES = {"x": 2, "u": 4}


def resolve(text: str) -> Any:
    """A plain scalar's value as PyYAML's resolver and SafeConstructor read it, or
    ``_DECLINE`` for the kinds the fast path leaves to the C loader."""
    if not text:
        return None
    first = text[0]
    if first in _WORD_FIRST:
        if text in _BOOL:
            return _BOOL[text]
        if text in _NULL:
            return None
        return text
    if first in _NUMBER_FIRST:
        if _DECIMAL.fullmatch(text):
            return int(text)
        if _FLOAT.match(text) or _INT.match(text) or _TIMESTAMP.match(text):
            return _DECLINE
        return text
    if text == "<<" or text == "=":
        return _DECLINE
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


def _scalar(line: str, i: int) -> tuple[Any, str | None] | None:
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
    if value is _DECLINE:
        return None
    return value, text


def _flow(line: str, i: int) -> list[Any] | None:
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
            if value is _DECLINE:
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
_ITEM = _Lazy(r"( *)- +(?:"
              r"([A-Za-z0-9_./][A-Za-z0-9_./-]*(?::[A-Za-z0-9_./-]+)*)"
              r"|'([^'\n]*)'"
              r"|\"([^\"\\\n]*)\""
              r")(?:[ \t]*|[ \t]+#.*)")


def _item(line: str) -> tuple[int, Any] | None:
    """A block list line `<indent>- scalar`: (indent, value), or None."""
    m = _ITEM.fullmatch(line)
    if m is not None:
        spaces, plain, single, double = m.groups()
        if plain is None:
            return len(spaces), (single if double is None else double)
        value = resolve(plain)
        if value is _DECLINE:
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
    got = _scalar(line, i)
    if got is None:
        return None
    return indent, got[0]


#: The canonical shape, read with two regular-expression passes: every line is
#: `key: token` or `key: [token, token]` where a token holds only characters that can
#: never start, end or split a YAML scalar.
_TOKEN = r"[A-Za-z0-9_./](?:[A-Za-z0-9_./-]|:(?=[A-Za-z0-9_./-]))*"
_CANON_LINE = (rf"([A-Za-z_][A-Za-z0-9_-]{{0,127}}): ({_TOKEN}|\[(?:{_TOKEN}(?:, {_TOKEN})*)?\])"
               "\n")
_CANON_PAIR = _Lazy(_CANON_LINE)


def _canonical(fm: str) -> Parsed | None:
    pairs = _CANON_PAIR.findall(fm)
    # the matches are disjoint, so they cover the text when their lengths add up
    if sum(len(k) + len(t) for k, t in pairs) + 3 * len(pairs) != len(fm):
        return None
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    raw: dict[str, str | None] = {}
    duplicates: list[tuple[str, int]] = []
    number = 0
    for key, text in pairs:
        if key in _BOOL or key in _NULL:
            return None
        value: Any
        if text[0] == "[":
            value = []
            if len(text) > 2:
                for item in text[1:-1].split(", "):
                    got = resolve(item)
                    if got is _DECLINE:
                        return None
                    value.append(got)
            plain: str | None = None
        else:
            value = resolve(text)
            if value is _DECLINE:
                return None
            plain = text
        if key in data:
            duplicates.append((key, number))
        else:
            key_lines[key] = number
        data[key] = value
        raw[key] = plain
        number += 1
    return data, key_lines, raw, duplicates


#: The common key line: `key: token`, `key: 'text'` or `key: "text"` (no escapes, no
#: inner quotes), with an optional trailing comment. Other key lines take the long way.
_PLAIN_TOKEN = r"[A-Za-z0-9_./][A-Za-z0-9_./-]*(?::[A-Za-z0-9_./-]+)*"
#: A flow list item without a comma or an escape in it: plain token or simple quoted.
_FLOW_ITEM_SRC = rf"(?:{_PLAIN_TOKEN}|'[^',\n]*'|\"[^\",\\\n]*\")"
_LINE = _Lazy(r"([A-Za-z_][A-Za-z0-9_-]{0,127}): +(?:"
              rf"({_PLAIN_TOKEN})"
              r"|'([^'\n]*)'"
              r"|\"([^\"\\\n]*)\""
              rf"|\[ *((?:{_FLOW_ITEM_SRC}(?: *, *{_FLOW_ITEM_SRC})*)?) *\]"
              r")(?:[ \t]*|[ \t]+#.*)")
_FLOW_ITEM = _Lazy(rf"({_PLAIN_TOKEN})|'([^',\n]*)'|\"([^\",\\\n]*)\"")
#: Characters whose absence lets the canonical two-pass reading be tried.
_NOT_CANONICAL = ("#", "'", '"', "\n\n", "\n-", "\n ", "\t")


def parse(fm: str) -> Parsed | None:
    """The frontmatter mapping of *fm* (the text between the fences), or None when the
    text is outside the subset and must go to the C loader."""
    if not any(c in fm for c in _NOT_CANONICAL):
        got = _canonical(fm)
        if got is not None:
            return got
    if (_ASCII_BAD.search(fm) if fm.isascii() else _BAD_CHAR.search(fm)) is not None:
        return None
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    raw: dict[str, str | None] = {}
    duplicates: list[tuple[str, int]] = []
    line_match = _LINE.fullmatch
    #: a key written with no value: a block list follows, or it is null
    pending: str | None = None
    pending_line = 0
    items: list[Any] = []
    indent = -1
    value: Any
    text: str | None
    for number, line in enumerate(fm.split("\n")):
        if not line:
            continue
        c = line[0]
        if c == "#":
            continue
        if c == " " or c == "-":
            stripped = line.lstrip(" ")
            if not stripped or stripped[0] == "#":
                continue
            if stripped[0] != "-" or pending is None:
                return None  # a continuation, or a list where none may start
            got_item = _item(line)
            if got_item is None or (indent != -1 and got_item[0] != indent):
                return None
            indent = got_item[0]
            items.append(got_item[1])
            continue
        if pending is not None:
            if indent == -1:
                value, text = None, ""
            else:
                value, text = items, None
            _store(data, key_lines, raw, duplicates, pending, pending_line, value, text)
            pending = None
        m = line_match(line)
        if m is not None:
            key, plain, single, double, flow = m.groups()
            if plain is not None:
                value = resolve(plain)
                if value is _DECLINE:
                    return None
                text = plain
            elif flow is not None:
                value, text = [], None
                for p, q, qq in _FLOW_ITEM.findall(flow):
                    if p:
                        item = resolve(p)
                        if item is _DECLINE:
                            return None
                        value.append(item)
                    else:
                        value.append(q or qq)
            else:
                value, text = (single if double is None else double), None
        else:
            m = _KEY.match(line)
            if m is None:
                return None
            key = m.group(1)
            j = m.end()
            while j < len(line) and line[j] == " ":
                j += 1
            if j >= len(line) or line[j] == "#":
                if key in _BOOL or key in _NULL:
                    return None
                pending, pending_line, items, indent = key, number, [], -1
                continue
            if line[j] == "\t":
                return None
            if line[j] == "[":
                value, text = _flow(line, j), None
                if value is None:
                    return None
            else:
                got = _scalar(line, j)
                if got is None:
                    return None
                value, text = got
        if key in _BOOL or key in _NULL:
            return None  # a key that reads as a bool or null
        if key in data:
            duplicates.append((key, number))
        else:
            key_lines[key] = number
        data[key] = value
        raw[key] = text
    if pending is not None:
        if indent == -1:
            value, text = None, ""
        else:
            value, text = items, None
        _store(data, key_lines, raw, duplicates, pending, pending_line, value, text)
    return data, key_lines, raw, duplicates


def _store(data: dict[str, Any], key_lines: dict[str, int], raw: dict[str, str | None],
           duplicates: list[tuple[str, int]], key: str, number: int, value: Any,
           text: str | None) -> None:
    if key in data:
        duplicates.append((key, number))
    else:
        key_lines[key] = number
    data[key] = value
    raw[key] = text
