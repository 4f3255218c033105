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

from typing import Any

from qrspi_guard.parse.yamlscalar import (
    BOOL_WORDS,
    DECLINE,
    NULL_WORDS,
    Lazy,
    block_item,
    flow_list,
    resolve,
    scalar,
)

#: (data, key_lines, raw, duplicates); lines are 0-based within the frontmatter text
Parsed = tuple[dict[str, Any], dict[str, int], dict[str, "str | None"], list[tuple[str, int]]]


#: Characters libyaml accepts as printable and not as a line break (tab, LF and the
#: printable ranges, less U+2028, U+2029, U+FEFF; U+0085 is a break and is excluded).
_BAD_CHAR = Lazy("[^\t\n -~\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                       "\U00010000-\U0010ffff]")
#: The same for ASCII text (much cheaper to compile than the Unicode ranges above).
_ASCII_BAD = Lazy("[\x00-\x08\x0b-\x1f\x7f]")
_KEY = Lazy(r"([A-Za-z_][A-Za-z0-9_-]{0,127}):(?: |$)")
BOOL_WORDS.update({w: False for w in ("no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                                 "OFF")})


#: The canonical shape, read with two regular-expression passes: every line is
#: `key: token` or `key: [token, token]` where a token holds only characters that can
#: never start, end or split a YAML scalar.
_TOKEN = r"[A-Za-z0-9_./](?:[A-Za-z0-9_./-]|:(?=[A-Za-z0-9_./-]))*"
_CANON_LINE = (rf"([A-Za-z_][A-Za-z0-9_-]{{0,127}}): ({_TOKEN}|\[(?:{_TOKEN}(?:, {_TOKEN})*)?\])"
               "\n")
_CANON_PAIR = Lazy(_CANON_LINE)


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
        if key in BOOL_WORDS or key in NULL_WORDS:
            return None
        value: Any
        if text[0] == "[":
            value = []
            if len(text) > 2:
                for item in text[1:-1].split(", "):
                    got = resolve(item)
                    if got is DECLINE:
                        return None
                    value.append(got)
            plain: str | None = None
        else:
            value = resolve(text)
            if value is DECLINE:
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
_LINE = Lazy(r"([A-Za-z_][A-Za-z0-9_-]{0,127}): +(?:"
              rf"({_PLAIN_TOKEN})"
              r"|'([^'\n]*)'"
              r"|\"([^\"\\\n]*)\""
              rf"|\[ *((?:{_FLOW_ITEM_SRC}(?: *, *{_FLOW_ITEM_SRC})*)?) *\]"
              r")(?:[ \t]*|[ \t]+#.*)")
_FLOW_ITEM = Lazy(rf"({_PLAIN_TOKEN})|'([^',\n]*)'|\"([^\",\\\n]*)\"")


#: key lines and block-list items read before, in this process: the same line always
#: reads the same (its reading depends on nothing else; a key line starts with a letter,
#: an item with a space or `-`), and reviewers repeat most of theirs (`severity:
#: high`, `artifact: design`, `round: 3`). Bounded: lines up to :data:`_CACHED_LINE`
#: characters, emptied when :data:`_CACHE_SIZE` lines are held (at most about 1 MB).
_LINES: dict[str, Any] = {}
#: a line :func:`_key_line` leaves to the long way
_OTHER = object()
_CACHE_SIZE = 4096
_CACHED_LINE = 200


def _remember(line: str, got: Any) -> Any:
    """*got*, the reading of *line*, held for the next time *line* is read."""
    if len(line) <= _CACHED_LINE:
        if len(_LINES) >= _CACHE_SIZE:
            _LINES.clear()
        _LINES[line] = got
    return got


def _key_line(line: str) -> object:
    """A one-line ``key: value`` line of the common shape, read: (key, value, plain text),
    a flow list's value as a tuple (each reading gets a list of its own); DECLINE when it
    reads as something the C loader must read; :data:`_OTHER` when it is not of the
    common shape (the long way reads it)."""
    m = _LINE.fullmatch(line)
    if m is None:
        return _OTHER
    key, plain, single, double, flow = m.groups()
    if key in BOOL_WORDS or key in NULL_WORDS:
        return DECLINE  # a key that reads as a bool or null
    value: Any
    if plain is not None:
        value = resolve(plain)
        if value is DECLINE:
            return DECLINE
        return key, value, plain
    if flow is not None:
        items = []
        for p, q, qq in _FLOW_ITEM.findall(flow):
            if p:
                item = resolve(p)
                if item is DECLINE:
                    return DECLINE
                items.append(item)
            else:
                items.append(q or qq)
        return key, tuple(items), None
    return key, (single if double is None else double), None


def parse(fm: str) -> Parsed | None:
    """The frontmatter mapping of *fm* (the text between the fences), or None when the
    text is outside the subset and must go to the C loader."""
    if not ("#" in fm or "'" in fm or '"' in fm or "\t" in fm or "\n\n" in fm
            or "\n-" in fm or "\n " in fm):  # (the canonical reading needs none of them)
        got = _canonical(fm)
        if got is not None:
            return got
    if (_ASCII_BAD.search(fm) if fm.isascii() else _BAD_CHAR.search(fm)) is not None:
        return None
    data: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    raw: dict[str, str | None] = {}
    duplicates: list[tuple[str, int]] = []
    cached = _LINES.get
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
            got_item = cached(line)
            if got_item is None:
                got_item = _remember(line, block_item(line) or DECLINE)
            if got_item is DECLINE or (indent != -1 and got_item[0] != indent):
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
        read = cached(line)
        if read is None:
            read = _remember(line, _key_line(line))
        if read is not _OTHER:
            if read is DECLINE:
                return None
            key, value, text = read
            if type(value) is tuple:
                value = list(value)
        else:
            m = _KEY.match(line)
            if m is None:
                return None
            key = m.group(1)
            j = m.end()
            while j < len(line) and line[j] == " ":
                j += 1
            if j >= len(line) or line[j] == "#":
                if key in BOOL_WORDS or key in NULL_WORDS:
                    return None
                pending, pending_line, items, indent = key, number, [], -1
                continue
            if line[j] == "\t":
                return None
            if line[j] == "[":
                value, text = flow_list(line, j), None
                if value is None:
                    return None
            else:
                got_scalar = scalar(line, j)
                if got_scalar is None:
                    return None
                value, text = got_scalar
            if key in BOOL_WORDS or key in NULL_WORDS:
                return None  # a key that reads as a bool or null (_key_line's DECLINE)
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
