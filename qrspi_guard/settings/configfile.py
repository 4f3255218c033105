"""The project configuration file: found, read and checked (no click).

``.qrspi-guard.toml`` (keys at top level, as in ``ruff.toml``) or ``pyproject.toml``
with a ``[tool.qrspi-guard]`` table, looked for from each judged path upward (as ruff
finds its own, not from the working directory), stopping at the repository root (the
directory holding ``.git``), or at the filesystem root outside git. In one directory
``.qrspi-guard.toml`` wins; a ``pyproject.toml`` without the table is passed over.
``--settings FILE`` names the file instead (:func:`load_named`). A file that does not
parse, a key that is not known, or a value of the wrong kind is a
:class:`~qrspi_guard.errors.ConfigFileError` naming the file, the line and the key.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from qrspi_guard.errors import ConfigFileError
from qrspi_guard.parse.capped import FILE_CAP, Refused, read_regular
from qrspi_guard.records import field, record
from qrspi_guard.settings.commandline import CommandLine
from qrspi_guard.settings.locate import PYPROJECT, present
from qrspi_guard.textsafe import one_line

TABLE = ("tool", "qrspi-guard")
#: the largest configuration file read (a config is a few hundred bytes)
MAX_BYTES = FILE_CAP


@record
class ConfigFile:
    """One project configuration file's table, with the line of each key."""

    path: str
    values: dict[str, Any]
    lines: dict[str, int] = field(default_factory=dict)
    text: str = ""

    @property
    def directory(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))

    @property
    def shown(self) -> str:
        name = os.path.basename(self.path)
        return f"{self.path} [tool.qrspi-guard]" if name == PYPROJECT else self.path

    def line_of(self, key: str, sub: str | None = None) -> int:
        """The line of *key* (or of *sub* inside the *key* table), 1 when not found."""
        if sub is not None:
            got = _sub_line(self.text, self._table_path(key), sub)
            if got:
                return got
        return self.lines.get(key, 1)

    def _table_path(self, key: str) -> tuple[str, ...]:
        prefix = TABLE if os.path.basename(self.path) == PYPROJECT else ()
        return (*prefix, key)

    def error(self, key: str, problem: str, sub: str | None = None) -> ConfigFileError:
        where = f"{one_line(self.path)}:{self.line_of(key, sub)}"
        shown = f"{key}.{sub}" if sub is not None else key
        return ConfigFileError(f"{where}: {one_line(shown)!s}: {problem}")


def toml_module() -> Any:
    """The TOML reader: tomllib (Python 3.11+), else tomli."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib


def _read(path: str) -> str | None:
    """A candidate's text; None when it is not a readable regular file."""
    try:
        data, _ = read_regular(path, MAX_BYTES)
    except OSError:
        return None
    except Refused as exc:
        if not exc.too_large:
            return None
        raise ConfigFileError(f"{one_line(path)}:1: larger than {MAX_BYTES} bytes") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ConfigFileError(f"{one_line(path)}:{line}: not valid UTF-8") from None


#: `[tool.qrspi-guard]`, `[tool."qrspi-guard".x]`, `tool.qrspi-guard.x = ...`; or, under a
#: `[tool]` table, `qrspi-guard = {...}` / `qrspi-guard.x = ...`
#: (patterns as text, compiled on first use by `re`'s own cache: a run that finds no
#: configuration file, as most hook calls do, never compiles them)
_TOOL_DOTTED = r"""tool\s*\.\s*["']?qrspi-guard"""
_TOOL_TABLE = r"""(?m)^\s*\[\s*tool\s*\]"""
_BARE_KEY = r"""(?m)^\s*["']?qrspi-guard["']?\s*[.=]"""


def _may_hold_table(text: str) -> bool:
    """Whether a pyproject.toml can hold the table (a cheap look before parsing it)."""
    return bool(re.search(_TOOL_DOTTED, text)
                or (re.search(_TOOL_TABLE, text) and re.search(_BARE_KEY, text)))
_KEY_LINE = r"""\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_.-]+))\s*="""
_HEADER = r"\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$"


def _split_dotted(name: str) -> tuple[str, ...]:
    return tuple(p.strip().strip('"').strip("'") for p in name.split("."))


def _key_lines(text: str, table: tuple[str, ...]) -> dict[str, int]:
    """Line of each top-level key of *table* (() = the document's top level)."""
    out: dict[str, int] = {}
    current: tuple[str, ...] = ()
    for number, line in enumerate(text.split("\n"), start=1):
        header = re.match(_HEADER, line)
        if header:
            current = _split_dotted(header.group(1))
            if current[:len(table)] == table and len(current) > len(table):
                out.setdefault(current[len(table)], number)
            continue
        m = re.match(_KEY_LINE, line)
        if m:
            name = _split_dotted(m.group(1) or m.group(2) or m.group(3))
            full = current + name
            if full[:len(table)] == table and len(full) > len(table):
                out.setdefault(full[len(table)], number)
    return out


def _sub_line(text: str, table: tuple[str, ...], sub: str) -> int | None:
    """The line of key *sub* inside *table*: its own line, else the table's line."""
    lines = _key_lines(text, table)
    if sub in lines:
        return lines[sub]
    # an inline table `key = { sub = 1 }`: the line that names both
    for number, line in enumerate(text.split("\n"), start=1):
        if re.search(rf"(^|[{{,\s\"']){re.escape(sub)}([\"']?\s*=)", line) and "=" in line:
            if table[-1] in line:
                return number
    return None


def _parse(path: str, text: str) -> dict[str, Any]:
    toml = toml_module()
    try:
        return toml.loads(text)  # type: ignore[no-any-return]
    except toml.TOMLDecodeError as exc:
        message = str(exc)
        m = re.search(r"line (\d+)", message)
        line = int(m.group(1)) if m else 1
        key = ""
        lines = text.split("\n")
        if 0 < line <= len(lines):
            km = re.match(_KEY_LINE, lines[line - 1])
            if km:
                key = f" (key {(km.group(1) or km.group(2) or km.group(3))!r})"
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", message)
        raise ConfigFileError(f"{one_line(path)}:{line}: cannot be parsed as TOML{key}: "
                              f"{one_line(reason)}") from None


def load(path: str) -> ConfigFile | None:
    """The configuration in *path* (a ``.qrspi-guard.toml`` or a ``pyproject.toml``);
    None for a pyproject.toml without a ``[tool.qrspi-guard]`` table."""
    text = _read(path)
    if text is None:
        if not os.path.exists(path):
            raise ConfigFileError(f"{one_line(path)}: no such file")
        raise ConfigFileError(f"{one_line(path)}:1: not a readable regular file")
    pyproject = os.path.basename(path) == PYPROJECT
    if pyproject and not _may_hold_table(text):
        return None  # cheap: most pyproject.toml files have no such table (no TOML parse)
    doc = _parse(path, text)
    if pyproject:
        tool = doc.get("tool")
        if not isinstance(tool, dict) or "qrspi-guard" not in tool:
            return None
        values = tool["qrspi-guard"]
        if not isinstance(values, dict):
            line = _key_lines(text, ("tool",)).get("qrspi-guard", 1)
            raise ConfigFileError(f"{one_line(path)}:{line}: tool.qrspi-guard: must be a table")
        lines = _key_lines(text, TABLE)
    else:
        values, lines = doc, _key_lines(text, ())
    cfg = ConfigFile(path, values, lines, text)
    from qrspi_guard.settings.declared import KEYS

    for key in values:
        if key not in KEYS:
            known = ", ".join(KEYS)
            raise cfg.error(key, f"unknown key (known keys: {known})")
    return cfg


def _display(path: str) -> str:
    """*path* relative to the working directory when it is below it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive on Windows
        return path
    return path if rel.startswith(os.pardir) else rel


def load_named(path: str) -> ConfigFile:
    """``--settings FILE``: a file named ``pyproject.toml`` is read for its
    ``[tool.qrspi-guard]`` table (none: nothing is set), any other for top-level keys."""
    got = load(path)
    if got is None:  # a pyproject.toml without the table: named, and empty
        return ConfigFile(path, {}, {}, "")
    return got


def find(start: str | None = None) -> ConfigFile | None:
    """The project configuration that applies at *start* (default: the working
    directory), or None when there is none."""
    for path in present(start or os.getcwd()):
        got = load(_display(path))
        if got is not None:
            return got
    return None


def config_for(cli: CommandLine | None = None, start: str | None = None
               ) -> ConfigFile | None:
    """The project configuration file a run reads: ``--settings FILE``, else none with
    ``--isolated``, else the one found from *start* upward to its repository root."""
    cli = cli or CommandLine()
    if cli.settings_file is not None:
        if cli.isolated:
            from qrspi_guard.errors import UsageError

            raise UsageError("--settings and --isolated cannot be used together")
        return load_named(cli.settings_file)
    return None if cli.isolated else find(start)
