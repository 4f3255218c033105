"""A shell word's fields: brace expansion, tilde expansion and the glob it may be.

:func:`fields` turns one literal :class:`~qrspi_guard.hook.bash.tokens.Word` into the
words bash passes on: ``F{01,02}.md`` is ``F01.md F02.md``, ``{1..3}`` is ``1 2 3``
(``{01..10}`` zero-padded, ``{a..e}``, a step), nested and side by side, only where the
braces, commas and dots are unquoted (``"{a,b}"`` is one word; an empty field with
nothing quoted is dropped, so ``{,x}`` is ``x``); a leading unquoted
``~`` or ``~user`` is the home directory. Each field is a :class:`Field`, a string that
also carries the glob pattern it is when an unquoted ``*``, ``?`` or ``[`` is in it
(quoted ones escaped). A word that would expand to more than :data:`MAX_FIELDS` words,
or that starts with the directory stack's ``~+``, ``~-`` or ``~N``, is unknown (None),
like a word holding an expansion. Pure.
"""

from __future__ import annotations

import os
import re

from qrspi_guard.hook.bash.tokens import LIT, Word

#: a word expanding to more words than this is not followed
MAX_FIELDS = 1024
#: a word with braces longer than this (in pieces) is not expanded, nor one whose
#: expansion goes deeper than :data:`MAX_BRACE_DEPTH` braces: unknown, like too many
MAX_BRACE_ATOMS = 4096
MAX_BRACE_DEPTH = 64
_SEQUENCE = (r"(-?[0-9]{1,18})\.\.(-?[0-9]{1,18})(?:\.\.(-?[0-9]{1,18}))?"
             r"|([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?[0-9]{1,18}))?")  # compiled when first used
_GLOB_CHARS = frozenset("*?[")

Atom = tuple[str, bool]  # (text, quoted); `{`, `,` and `}` unquoted are atoms alone


class Field(str):
    """One field of a word; :attr:`pattern` is its glob pattern, or None."""

    pattern: str | None = None


class _TooMany(Exception):
    pass


def fields(word: Word) -> list[Field] | None:
    """The fields of *word*, or None when its value is not known (an expansion, or too
    many words)."""
    if not word.literal:
        return None
    atoms: list[Atom] = []
    for text, kind in word.parts:
        if kind != LIT:
            atoms.append((text, True))
            continue
        for piece in re.split(r"([{},])", text):
            if piece:
                atoms.append((piece, False))
    braced = any(a == ("{", False) for a in atoms)
    if braced and len(atoms) > MAX_BRACE_ATOMS:
        return None
    try:
        expanded = _braces(atoms, [0], 0) if braced else [atoms]
    except _TooMany:
        return None
    # an empty field with nothing quoted in it is no word at all (`{,x}` is `x`)
    out: list[Field] = []
    for one in expanded:
        if not any(q or t for t, q in one):
            continue
        expanded_tilde = _tilde(_merged(one))
        if expanded_tilde is None:
            return None
        out.append(_field(expanded_tilde))
    return out


def _merged(atoms: list[Atom]) -> list[Atom]:
    """Neighbouring atoms quoted alike, joined (``~`` and ``0`` from ``~{0..1}``)."""
    out: list[Atom] = []
    for text, quoted in atoms:
        if out and out[-1][1] == quoted:
            out[-1] = (out[-1][0] + text, quoted)
        else:
            out.append((text, quoted))
    return out


def _field(atoms: list[Atom]) -> Field:
    field = Field("".join(t for t, _ in atoms))
    if any(not quoted and _GLOB_CHARS & set(t) for t, quoted in atoms):
        field.pattern = "".join(_escape(t) if quoted else t for t, quoted in atoms)
    return field


def _escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _tilde(atoms: list[Atom]) -> list[Atom] | None:
    """``~`` or ``~user`` at the start, unquoted, up to a ``/``, a ``:``, a ``=~`` (as bash
    ends it) or the end of the word;
    None for the directory stack's ``~+``, ``~-``, ``~N`` (not known here)."""
    if not atoms or atoms[0][1] or not atoms[0][0].startswith("~"):
        return atoms
    first = atoms[0][0]
    end = min((i for i in (first.find(c) for c in ("/", ":", "=~")) if i >= 0), default=-1)
    if end < 0 and len(atoms) > 1:
        return atoms  # `~"x"`: a quoted part in the prefix, no expansion
    prefix = first if end < 0 else first[:end]
    if re.fullmatch(r"~[+-]?[0-9]*", prefix) and prefix != "~":
        return None
    if not re.fullmatch(r"~[A-Za-z0-9._-]*", prefix):
        return atoms
    home = os.path.expanduser(prefix)
    if home == prefix:
        return atoms  # no such user: bash leaves it as it is
    return [(home, True), (first[len(prefix):], False)] + atoms[1:]


def _braces(atoms: list[Atom], count: list[int], depth: int) -> list[list[Atom]]:
    """Every brace expansion of *atoms*, left to right, as bash does it."""
    if depth > MAX_BRACE_DEPTH:
        raise _TooMany
    for i, (close, commas) in _pairs(atoms):
        inner = atoms[i + 1:close]
        alternatives = _split(inner) if commas else _sequence(inner)
        if alternatives is None:
            continue
        head, tail = atoms[:i], atoms[close + 1:]
        out: list[list[Atom]] = []
        for alternative in alternatives:
            out.extend(_braces(head + alternative + tail, count, depth + 1))
        return out
    count[0] += 1
    if count[0] > MAX_FIELDS:
        raise _TooMany
    return [atoms]


def _pairs(atoms: list[Atom]) -> list[tuple[int, tuple[int, bool]]]:
    """Each unquoted ``{`` that has its ``}``, in order: (where, (its ``}``, whether a
    ``,`` stands at its own level)). One pass."""
    opened: list[list[int]] = []  # [where, has a comma] of each open brace
    found: dict[int, tuple[int, bool]] = {}
    for j, atom in enumerate(atoms):
        if atom == ("{", False):
            opened.append([j, 0])
        elif atom == ("}", False) and opened:
            where, commas = opened.pop()
            found[where] = (j, bool(commas))
        elif atom == (",", False) and opened:
            opened[-1][1] = 1
    return sorted(found.items())


def _split(inner: list[Atom]) -> list[list[Atom]]:
    parts: list[list[Atom]] = [[]]
    depth = 0
    for atom in inner:
        if atom == ("{", False):
            depth += 1
        elif atom == ("}", False):
            depth -= 1
        elif atom == (",", False) and depth == 0:
            parts.append([])
            continue
        parts[-1].append(atom)
    return parts


def _sequence(inner: list[Atom]) -> list[list[Atom]] | None:
    """``{x..y[..step]}`` of numbers or letters, or None when it is not one."""
    if any(quoted for _, quoted in inner):
        return None
    m = re.fullmatch(_SEQUENCE, "".join(t for t, _ in inner))
    if m is None:
        return None
    first, last, step, c1, c2, cstep = m.groups()
    by = abs(int(step or cstep or "1")) or 1
    if first is not None:
        a, b = int(first), int(last)
        padded = any(len(x.lstrip("-")) > 1 and x.lstrip("-").startswith("0")
                     for x in (first, last))
        width = max(len(first), len(last)) if padded else 0
        if abs(b - a) // by + 1 > MAX_FIELDS:
            raise _TooMany
        numbers = range(a, b + 1, by) if a <= b else range(a, b - 1, -by)
        return [[(_padded(x, width), False)] for x in numbers]
    a, b = ord(c1), ord(c2)
    letters = range(a, b + 1, by) if a <= b else range(a, b - 1, -by)
    return [[(chr(x), False)] for x in letters]


def _padded(number: int, width: int) -> str:
    if not width:
        return str(number)
    sign = "-" if number < 0 else ""
    return sign + str(abs(number)).zfill(width - len(sign))
