"""JSON in and out, one set of rules for every JSON file and stream the guard reads or
writes (loop.md "No traceback on any input", cli.md): a manifest, a baseline, an audit,
a status file, a ledger line, a split journal, the verdict's findings.

Reading (:func:`loads`) refuses, with a :class:`JsonError` whose text is one line:

- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON), and a number no double can carry
  (``1e400``, which Python would read as infinity and write back as ``Infinity``);
- an integer of more significant digits than ``MAX_DIGITS`` (1,000; Python's own limit
  is a bare ``ValueError``), unless the caller keeps such digits its own way
  (*parse_int*);
- the same key twice in one object (readers disagree on which one counts: a manifest
  entry with two ``tag`` keys would be one tag to the guard and another to ``jq``);
- nesting deeper than *max_depth* (default :data:`MAX_DEPTH`), measured on the text
  before it is parsed, so the parser never recurses past it (no ``RecursionError``);
- bytes that are not UTF-8.

Writing (:func:`dumps`) never writes ``NaN`` or ``Infinity``: a value that is not finite
is a :class:`JsonError`, as is nesting past the recursion limit.

On the path of every hook call, the no-op included (the hook reads its payload here):
it imports ``json`` and ``re`` only, and what a rare case needs when it needs it (the
digit bound, :mod:`qrspi_guard.contract.digits`, for an integer of more than 18
characters; the depth of a text with many brackets).
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

__all__ = ["MAX_DEPTH", "JsonError", "dumps", "loads"]

#: the deepest nesting of arrays and objects read (no file the guard reads needs 10)
MAX_DEPTH = 64
#: a JSON string (the unrolled form: no backtracking per character); compiled (and
#: cached by ``re``) only when a text has enough brackets to be measured
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_NOT_BRACKET = r"[^\[\]{}]+"
#: an integer of at most this many characters is within the digit bound whatever it is
#: (the parser hands over only JSON's grammar: ``-?(0|[1-9][0-9]*)``): read at once,
#: and the bound's module loaded only for a longer one
_SHORT = 18
#: what float() makes of a number too large for a double
_INFINITE = (float("inf"), float("-inf"))
#: an opening bracket as +1, a closing one as -1 (signed bytes)
_SIGNS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


class JsonError(ValueError):
    """A text is not JSON the guard reads, or a value is not one it writes; ``str()`` is
    one line saying why (the caller names the file), :attr:`reason` the same without
    the words ``not valid JSON``, for a caller that says them itself. :attr:`syntax`:
    the text is not JSON at all, or not UTF-8 (as against JSON that breaks one of the
    rules above)."""

    def __init__(self, message: str, reason: str | None = None, syntax: bool = False) -> None:
        super().__init__(message)
        self.reason = reason or message
        self.syntax = syntax


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH,
          parse_int: Callable[[str], Any] | None = None, bom: bool = False) -> Any:
    """The JSON value in *data* under the module's rules. *parse_int*: how an integer's
    digits become a value (default: an int, refused past ``MAX_DIGITS`` digits); *bom*:
    one leading byte-order mark is allowed. Raises :class:`JsonError`."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonError(f"not UTF-8 (byte {exc.start})", syntax=True) from None
    else:
        text = data
    if bom and text.startswith("\ufeff"):
        text = text[1:]
    if too_deep(text, max_depth):
        raise JsonError(f"nested more than {max_depth} levels deep")
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite,
                          parse_int=parse_int or _bounded_int, object_pairs_hook=_unique)
    except JsonError:
        raise
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise JsonError(f"not valid JSON ({where})", where, syntax=True) from None
    except (ValueError, RecursionError) as exc:  # pragma: no cover - the checks above
        raise JsonError(f"not usable JSON ({type(exc).__name__})") from None


def dumps(value: Any, *, indent: int | None = None, sort_keys: bool = False,
          ensure_ascii: bool = True, separators: tuple[str, str] | None = None,
          cls: type[json.JSONEncoder] | None = None) -> str:
    """*value* as JSON text (``json.dumps``'s options), never ``NaN`` or ``Infinity``.
    Raises :class:`JsonError`."""
    try:
        return json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                          separators=separators, cls=cls, allow_nan=False)
    except ValueError:
        raise JsonError("a number JSON cannot carry (NaN or Infinity)") from None
    except RecursionError:
        raise JsonError("nested too deeply to write") from None


def too_deep(text: str, bound: int) -> bool:
    """Whether *text* nests arrays and objects more than *bound* deep (brackets inside
    strings do not count). Linear in the text, and in C: the brackets as +1 and -1, the
    deepest running sum. A text that is not JSON may come out either way: the parser
    names it then."""
    if text.count("[") + text.count("{") <= bound:
        return False
    from array import array
    from itertools import accumulate

    brackets = re.sub(_NOT_BRACKET, "", re.sub(_STRING, "", text, flags=re.S))
    signed = array("b", brackets.encode("ascii").translate(_SIGNS))
    return max(accumulate(signed), default=0) > bound


def _no_constant(name: str) -> Any:
    raise JsonError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in _INFINITE:  # (a JSON number's text is never NaN)
        raise JsonError(f"the number {text[:24]}{'...' if len(text) > 24 else ''} is too "
                        "large for a JSON reader to carry")
    return value


def _bounded_int(digits: str) -> int:
    if len(digits) <= _SHORT:
        return int(digits)
    from qrspi_guard.contract.digits import MAX_DIGITS, bounded_number

    number = bounded_number(digits.lstrip("-"))
    if number is None:
        raise JsonError(f"an integer of more than {MAX_DIGITS} digits")
    return -number if digits.startswith("-") else number


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                shown = key[:40].encode("unicode_escape").decode("ascii")
                raise JsonError(f"the key {shown!r} appears twice in one object")
            seen.add(key)
    return out
