"""Bash's tokens as the hook reads them: words (their quoted, unquoted and expanded
parts), redirections, and what is wrong with a text bash would refuse.

A :class:`Word` keeps each part of its text with its kind (:data:`LIT` unquoted,
:data:`QUO` quoted, :data:`EXP` an expansion whose value is not known here) and the
tokens of the commands its substitutions run. Pure.
"""

from __future__ import annotations

import re

#: word part kinds: unquoted text, quoted text, an expansion (its source text kept)
LIT, QUO, EXP = 0, 1, 2
#: command substitutions nested deeper than this are not read
MAX_DEPTH = 16
#: the redirection operators
REDIRS = frozenset({"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "<&", ">&", "&>", "&>>"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI = (r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})"
         r"|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c(.)|(.))")  # compiled when first used


class Incomplete(Exception):
    """Not a command bash would run as it stands (an unclosed quote, a stray ``)``, a
    missing redirection target), or nested past :data:`MAX_DEPTH`."""


class Word:
    """One shell word: its parts (text, kind), and the commands its substitutions run."""

    __slots__ = ("parts", "subs", "unknown")

    def __init__(self, parts: list[tuple[str, int]] | None = None) -> None:
        self.parts: list[tuple[str, int]] = parts if parts is not None else []
        self.subs: list[list[Word | Redir | str]] = []  #: tokens of each ``$(...)``
        self.unknown = False  #: runs a command that cannot be read (``$(( $(x) ))``)

    @property
    def literal(self) -> bool:
        """No expansion: its value is known."""
        return all(kind != EXP for _, kind in self.parts)

    def value(self) -> str | None:
        """The word after quote removal, or None when an expansion makes it unknown."""
        return "".join(t for t, _ in self.parts) if self.literal else None

    def plain(self) -> str | None:
        """The word's text when nothing of it is quoted or expanded (a reserved word,
        an operator-like word), else None."""
        if self.parts and all(kind == LIT for _, kind in self.parts):
            return "".join(t for t, _ in self.parts)
        return None

    def text(self) -> str:
        """The word with each expansion as a NUL: what it names, where that is known."""
        return "".join("\0" if kind == EXP else t for t, kind in self.parts)

    def __repr__(self) -> str:
        return f"Word({self.parts!r})"


class Redir:
    """A redirection: its operator, its descriptor (``2`` of ``2>``), its target word (a
    here-document's delimiter), and for ``<<``, ``<<-`` and ``<<<`` the text it feeds."""

    __slots__ = ("op", "fd", "target", "body")

    def __init__(self, op: str, fd: str | None, target: Word) -> None:
        self.op = op
        self.fd = fd
        self.target = target
        self.body: Word | None = target if op == "<<<" else None

    def __repr__(self) -> str:
        return f"Redir({self.fd or ''}{self.op} {self.target!r})"


def ansi_c(text: str) -> str:
    """The value of ``$'...'`` text (its escapes decoded)."""
    def one(m: re.Match[str]) -> str:
        simple, octal, hx, u4, u8, ctl, other = m.groups()
        if simple:
            return _ESCAPES[simple]
        if ctl:
            return chr(ord(ctl.upper()) ^ 0x40) if ctl != "?" else "\x7f"
        if other is not None:
            return "\\" + other
        code = int(octal, 8) if octal else int(hx or u4 or u8, 16)
        return chr(code) if code < 0x110000 else "\ufffd"

    return re.sub(_ANSI, one, text, flags=re.S)


def is_assignment(word: Word) -> bool:
    """``NAME=value``, ``NAME[i]=value``, ``NAME+=value``: an assignment, where it stands
    before a command's name."""
    return bool(word.parts) and word.parts[0][1] == LIT \
        and _ASSIGNMENT.match(word.parts[0][0]) is not None
