"""Diagnostics: what every rule returns. Plain data, no printing."""

from __future__ import annotations

from typing import Any

from qrspi_guard.contract.causes import Level, cause
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

#: Untrusted strings copied from a finding are cut to this many characters (§8).
UNTRUSTED_LIMIT = 200


@record(frozen=True)
class Diagnostic:
    """One defect: a cause from the catalogue, where it is, and what was found."""

    cause: str
    level: Level
    message: str
    path: str = ""  #: the file's (or directory's) path as given or discovered
    file: str | None = None  #: the file's name inside its round directory
    line: int | None = None
    field: str | None = None
    value: str | None = None  #: the offending value, escaped and cut
    tag: str | None = None  #: for round-level causes about one tag
    step: str | None = None
    round: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cause": self.cause, "level": self.level}
        for key in ("file", "line", "field", "value", "tag"):
            val = getattr(self, key)
            if val is not None:
                out[key] = val
        out["message"] = self.message
        return out


def diag(name: str, message: str, *, level: Level | None = None, value: Any = None,
         **kw: Any) -> Diagnostic:
    """Build a diagnostic for cause *name*; the level comes from the catalogue.

    The message is made one safe line here, whatever went into it (library errors
    quote input too), so no shell needs to trust a rule's message.
    """
    return Diagnostic(
        cause=name,
        level=level or cause(name).level,
        message=one_line(message),
        value=None if value is None else untrusted(value),
        **kw,
    )


def untrusted(value: Any) -> str:
    """A value read from a finding, made printable and cut to the limit."""
    if isinstance(value, str):
        return one_line(value, UNTRUSTED_LIMIT)
    return one_line(describe(value), UNTRUSTED_LIMIT)


def describe(value: Any) -> str:
    """A short, bounded rendering of a parsed YAML value (never walks deep structures)."""
    if value is None:
        return "null (empty)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        return f"a mapping of {len(value)} key(s)"
    return f"a {type(value).__name__}"
