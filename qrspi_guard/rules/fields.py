"""Frontmatter fields as the per-file rules read and quote them: reporters for missing
and wrong fields, enum and round fields, unknown keys, untrusted values shown safely."""

from __future__ import annotations

from typing import Any

from qrspi_guard.contract.diagnostics import Diagnostic, describe, untrusted
from qrspi_guard.contract.digits import bounded_number
from qrspi_guard.parse import frontmatter as fm


def field_reporters(doc: fm.Document, d: Any, out: list[Diagnostic],
                     noun: str) -> tuple[Any, Any]:
    """`missing(cause, key)` (pointing at the closing fence) and `wrong(cause, key, msg)`
    (pointing at the key's line, carrying its value)."""

    def missing(cause: str, key: str, extra: str = "") -> None:
        out.append(d(cause, f"{noun} {key} is missing{extra}", field=key,
                     line=doc.body_line - 1))

    def wrong(cause: str, key: str, message: str) -> None:
        out.append(d(cause, message, field=key, line=doc.key_lines.get(key),
                     value=doc.data.get(key)))

    return missing, wrong


def unknown_keys(data: dict[Any, Any], lines: dict[str, int], allowed: tuple[str, ...],
                  what: str, d: Any, out: list[Diagnostic]) -> None:
    for key in data:
        if key not in allowed:
            line = lines.get(key) if isinstance(key, str) else None
            out.append(d("unknown_frontmatter_key", f"key {shown(key)} is not part of {what}",
                         field=untrusted(key), line=line))


def enum_field(data: dict[Any, Any], lines: dict[str, int], key: str, allowed: tuple[str, ...],
          missing_cause: str, wrong_cause: str, missing: Any, wrong: Any) -> bool:
    if key not in data:
        missing(missing_cause, key)
        return False
    value = data[key]
    if isinstance(value, str) and value in allowed:
        return True
    wrong(wrong_cause, key, f"{key} {shown(value)} is not one of {', '.join(allowed)}")
    return False


def round_field(doc: fm.Document, key: str, missing: Any, wrong: Any) -> int | None:
    """`round` read as a base-10 integer from the raw scalar text (08 is 8, 010 is 10)."""
    if key not in doc.data:
        missing("missing_round", key)
        return None
    raw = doc.raw.get(key)
    number = bounded_number(raw) if raw is not None else None
    if number is not None and number >= 1:
        return number
    wrong("round_not_integer", key,
          f"{key} {shown(raw if raw is not None else doc.data[key])} is not an integer >= 1")
    return None


def round_pins(dir_round: int | None, field_round: int | None, id_round: int | None,
                doc: fm.Document, d: Any, out: list[Diagnostic]) -> None:
    known = {name: n for name, n in (("directory", dir_round), ("round field", field_round),
                                     ("finding_id", id_round)) if n is not None}
    if len(set(known.values())) > 1:
        said = ", ".join(f"{k} says {v}" for k, v in known.items())
        line_key = "round" if field_round is not None and field_round != dir_round else "finding_id"
        out.append(d("round_mismatch", f"round numbers disagree: {said}", field=line_key,
                     line=doc.key_lines.get(line_key)))


def shown(value: Any) -> str:
    """A finding's value, quoted for a message: escaped and cut."""
    return f"'{untrusted(value)}'" if isinstance(value, str) else untrusted(describe(value))


def describe_list(value: Any) -> str:
    if isinstance(value, list):
        bad = next(x for x in value if not isinstance(x, str))
        return f"a list with a non-string item ({untrusted(describe(bad))})"
    return shown(value)
