"""Read one document: bytes -> text -> (frontmatter mapping, body) or a named failure.

This is the single, swappable "parse one file" step. It translates every library
error (UnicodeDecodeError, yaml.YAMLError, RecursionError) into a named cause in one
place, so the rules above it never see a library exception.

python-frontmatter's handler interface is honoured (``yaml_handler_class()``) so
that other tools can load findings with ``frontmatter.loads(text, handler=...)`` and get
exactly the guard's reading: fences are lines that are exactly ``---`` and only a
safe loader is used (PyYAML's C loader when present).
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from qrspi_guard.parse import fastparse
from qrspi_guard.parse.capped import FILE_CAP
from qrspi_guard.records import field, record

#: the one file cap (:mod:`qrspi_guard.parse.capped`); over it, `file_too_large`
MAX_BYTES = FILE_CAP
#: integers with more digits than this are kept as their text (see the loader)
MAX_INT_DIGITS = 1000
BOM = b"\xef\xbb\xbf"

#: The fast path for the frontmatter subset reviewers write (:mod:`fastparse`); off
#: with ``QRSPI_GUARD_NO_FASTPATH=1``. Its results equal the C loader path exactly.
FASTPATH = os.environ.get("QRSPI_GUARD_NO_FASTPATH", "") in ("", "0")

_Y = "tag:yaml.org,2002:"
#: Tags a document may carry: YAML's core schema. Anything else (``!!timestamp``,
#: ``!!binary``, ``!!python/...``, a custom ``!tag``) is malformed. A plain scalar that
#: looks like a date is read as its text, as YAML 1.2's core schema and the protocol's
#: shell readers read it (YAML 1.1 would make it a timestamp).
ALLOWED_TAGS = frozenset(_Y + t for t in ("null", "bool", "int", "float", "str", "seq", "map"))
_MERGE = _Y + "merge"

#: What a line is, for the guard and for every line-based reader of the protocol (awk,
#: grep, ``read``): text up to a LF. YAML also breaks lines at these; inside frontmatter
#: they would make YAML and the shell readers see different fields.
FOREIGN_BREAKS = {"\r": "a lone CR", "\x85": "NEL (U+0085)",
                  "\u2028": "LINE SEPARATOR (U+2028)", "\u2029": "PARAGRAPH SEPARATOR (U+2029)"}
_FOREIGN_BREAK = "[" + "".join(FOREIGN_BREAKS) + "]"


@cache
def _loader_class() -> Any:
    """The guard's loader, built on first use so that files on the fast path never
    import yaml (start-up time)."""
    import yaml
    from yaml.nodes import MappingNode, ScalarNode

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _GuardLoader(base):  # type: ignore[misc]
        """Safe loader that records duplicate keys and refuses tags outside the schema,
        merge keys and implicit timestamps."""

        yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != _Y + "timestamp"]
            for first, resolvers in base.yaml_implicit_resolvers.items()}

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.duplicates: list[tuple[str, int]] = []

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            if node.tag not in ALLOWED_TAGS:
                raise yaml.constructor.ConstructorError(
                    None, None, f"tag {node.tag!r} is not allowed (core schema only)",
                    node.start_mark)
            return super().construct_object(node, deep)

        def construct_yaml_int(self, node: Any) -> Any:
            """An integer of over a thousand digits stays its text: a value must never
            reach Python's int-digits limit (or make a rule's cost grow with it)."""
            if isinstance(node, ScalarNode) and sum(ch.isdigit() for ch in node.value) > \
                    MAX_INT_DIGITS:
                return node.value
            return super().construct_yaml_int(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, MappingNode):
                seen: set[tuple[str, str]] = set()
                for key_node, _ in node.value:
                    if key_node.tag == _MERGE:
                        raise yaml.constructor.ConstructorError(
                            None, None, "merge keys (<<) are not allowed: write each field "
                            "on its own line", key_node.start_mark)
                    if isinstance(key_node, ScalarNode):
                        k = (key_node.tag, key_node.value)
                        if k in seen:
                            self.duplicates.append((key_node.value, key_node.start_mark.line))
                        seen.add(k)
            return super().construct_mapping(node, deep)

    _GuardLoader.add_constructor("tag:yaml.org,2002:int", _GuardLoader.construct_yaml_int)
    return _GuardLoader


def __getattr__(name: str) -> Any:
    """``_GuardLoader`` and ``_BaseLoader`` stay importable (built lazily)."""
    if name == "_GuardLoader":
        return _loader_class()
    if name == "_BaseLoader":
        return _loader_class().__mro__[1]
    raise AttributeError(name)


@record
class Decoded:
    """A file's text after the byte-level checks."""

    text: str  #: LF line endings, BOM removed
    had_bom: bool = False
    had_crlf: bool = False


@record
class ByteFailure:
    cause: str  #: not_utf8 | file_too_large
    message: str
    line: int | None = None


def decode(data: bytes) -> Decoded | ByteFailure:
    """Bytes -> text: size limit, BOM, UTF-8, CRLF normalisation."""
    if len(data) > MAX_BYTES:
        return ByteFailure("file_too_large", "file is over 1 MiB; not parsed")
    had_bom = data.startswith(BOM)
    if had_bom:
        data = data[len(BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return ByteFailure("not_utf8", f"byte {exc.start} is not valid UTF-8 ({exc.reason})",
                           line)
    had_crlf = "\r\n" in text
    if had_crlf:
        text = text.replace("\r\n", "\n")
    return Decoded(text, had_bom, had_crlf)


@record
class Document:
    """A parsed frontmatter document."""

    data: dict[Any, Any]
    body: str
    body_line: int  #: 1-based line where the body starts
    key_lines: dict[str, int] = field(default_factory=dict)  #: 1-based line of each key
    raw: dict[str, str | None] = field(default_factory=dict)  #: plain scalar text per key
    duplicates: list[tuple[str, int]] = field(default_factory=list)  #: (key, 1-based line)


@record
class ParseFailure:
    cause: str  #: no_frontmatter | malformed_yaml
    message: str
    line: int | None = None


def split(text: str) -> tuple[str, str, int] | None:
    """(frontmatter text, body, 1-based body line), or None without fences.

    Fences are lines that are exactly ``---``; the first line must be one.
    """
    if not text.startswith("---\n"):
        return None
    start = 4
    if text.startswith("---\n", start) or text == "---\n---":
        close = start - 1
    else:
        close = text.find("\n---\n", start - 1)
        if close == -1:
            if text.endswith("\n---"):
                close = len(text) - 4
            else:
                return None
    fm = text[start:close + 1]
    body = text[close + 5:]
    body_line = fm.count("\n") + 3
    return fm, body, body_line


def load_yaml(fm: str, line_offset: int = 1) -> Document | ParseFailure:
    """Parse frontmatter text with the safe loader; *line_offset* lines precede it.

    The fast path reads the subset reviewers write; anything else goes to the C loader.
    """
    if FASTPATH:
        got = fastparse.parse(fm)
        if got is not None:
            data, key_lines, raw, duplicates = got
            off = 1 + line_offset
            return Document(data, "", 0, {k: n + off for k, n in key_lines.items()}, raw,
                            [(k, n + off) for k, n in duplicates])
    return load_yaml_c(fm, line_offset)


def load_yaml_c(fm: str, line_offset: int = 1) -> Document | ParseFailure:
    """:func:`load_yaml` through PyYAML's C loader only (the reference reading)."""
    import yaml
    from yaml.nodes import MappingNode, ScalarNode

    foreign = _foreign_break(fm, line_offset)
    if foreign is not None:
        return foreign
    loader = _loader_class()(fm)
    try:
        node = loader.get_single_node()
        if node is not None:
            alias = _aliased(node)
            if alias is not None:
                return ParseFailure(
                    "malformed_yaml", "an alias (*name) reuses the value anchored "
                    "elsewhere; line-based readers see the alias, not the value: write the "
                    "value itself", alias.start_mark.line + 1 + line_offset)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark is not None else None
        return ParseFailure("malformed_yaml", _yaml_message(exc), line)
    except yaml.YAMLError as exc:
        return ParseFailure("malformed_yaml", _yaml_message(exc), None)
    except RecursionError:
        return ParseFailure("malformed_yaml", "frontmatter is nested too deeply", None)
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. an impossible date
        return ParseFailure("malformed_yaml", f"value cannot be read: {exc}", None)
    finally:
        loader.dispose()
    if data is None:
        data = {}
        node = None
    if not isinstance(data, dict):
        return ParseFailure("malformed_yaml",
                            f"frontmatter is not a mapping (it is {_kind(data)})",
                            1 + line_offset)
    doc = Document(data=data, body="", body_line=0)
    if isinstance(node, MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                continue
            key = key_node.value
            doc.key_lines.setdefault(key, key_node.start_mark.line + 1 + line_offset)
            if isinstance(value_node, ScalarNode) and not value_node.style:
                doc.raw[key] = value_node.value
            else:
                doc.raw[key] = None
    doc.duplicates = [(k, ln + 1 + line_offset) for k, ln in loader.duplicates]
    return doc


def parse(text: str) -> Document | ParseFailure:
    """Frontmatter document from decoded text."""
    parts = split(text)
    if parts is None:
        return ParseFailure("no_frontmatter",
                            "no YAML frontmatter: the file must start with a line `---` "
                            "and the fields must be closed by another line `---`", 1)
    fm, body, body_line = parts
    result = load_yaml(fm)
    if isinstance(result, Document):
        result.body = body
        result.body_line = body_line
    return result


def _foreign_break(fm: str, line_offset: int) -> ParseFailure | None:
    """A line break other than LF in frontmatter text, as a failure."""
    import re

    m = re.search(_FOREIGN_BREAK, fm)
    if m is None:
        return None
    return ParseFailure(
        "malformed_yaml", f"the frontmatter holds {FOREIGN_BREAKS[m.group()]}: YAML "
        "starts a new line there, the protocol's line-based readers do not",
        fm.count("\n", 0, m.start()) + 1 + line_offset)


def _aliased(root: Any) -> Any:
    """The first node reached twice from *root* (an alias of an anchored node), or None.
    Iterative, each node visited once: cost bounded by the document's size."""
    from yaml.nodes import MappingNode, SequenceNode

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return node
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in reversed(node.value):
                stack.extend((value, key))
        elif isinstance(node, SequenceNode):
            stack.extend(reversed(node.value))
    return None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


def _yaml_message(exc: Any) -> str:
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        return "YAML error: " + "; ".join(parts) if parts else "YAML error"
    return f"YAML error: {exc}"


@cache
def yaml_handler_class() -> type:
    """A python-frontmatter handler class with the guard's exact fence and loader rules
    (built on first use: python-frontmatter is imported only by those who ask)."""
    from frontmatter.default_handlers import YAMLHandler

    class QrspiYAMLHandler(YAMLHandler):
        def detect(self, text: str) -> bool:
            return split(text.replace("\r\n", "\n")) is not None

        def split(self, text: str) -> tuple[str, str]:
            parts = split(text.replace("\r\n", "\n"))
            if parts is None:
                raise ValueError("no frontmatter")
            return parts[0], parts[1]

        def load(self, fm: str, **kwargs: Any) -> Any:
            result = load_yaml(fm)
            if isinstance(result, ParseFailure):
                raise ValueError(result.message)
            return result.data

    return QrspiYAMLHandler
