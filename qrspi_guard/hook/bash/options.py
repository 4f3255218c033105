"""Reading a program's options as GNU's getopt does, for the hook's table of programs.

An argument is a string, or None where an expansion makes it unknown. Pure.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

Args = list["str | None"]
Options = list[tuple[str, "str | None"]]


class Opaque(Exception):
    """What the command writes cannot be read from its command line."""


def getopt(args: Sequence[str | None], values: str = "", longs: tuple[str, ...] = (),
           optional: tuple[str, ...] = (), attached: str = "",
           flags: tuple[str, ...] = ()) -> tuple[Options, Args]:
    """(options and their values, operands) of GNU-style *args*: short options in
    *values* and long ones in *longs* take a value (attached or the next argument),
    those in *attached* and *optional* only an attached one (``-i.bak``, ``--in-place=
    .bak``); *flags* are the long options that take none. A long option may be
    abbreviated to a unique prefix of all of those; short options cluster (``-rno
    out``); options and operands mix; ``--`` ends the options. An unknown word (None)
    is an operand."""
    opts: Options = []
    operands: Args = []
    known_longs = longs + optional + flags
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a is None or a == "-" or not a.startswith("-"):
            operands.append(a)
        elif a == "--":
            operands.extend(args[i:])
            break
        elif a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            full = long_name(name, known_longs)
            taken: str | None = value if eq else None
            if full in longs and not eq:
                taken, i = (args[i] if i < len(args) else None), i + 1
            opts.append(("--" + (full or name), taken))
        else:
            for j in range(1, len(a)):
                if a[j] in values or a[j] in attached:
                    value_: str | None = a[j + 1:]
                    if not value_ and a[j] in values:
                        value_, i = (args[i] if i < len(args) else None), i + 1
                    opts.append(("-" + a[j], value_))
                    break
                opts.append(("-" + a[j], None))
    return opts, operands


def long_name(name: str, known: tuple[str, ...]) -> str | None:
    """*name*, or the one option of *known* it abbreviates, or None."""
    if name in known:
        return name
    candidates = [k for k in known if k.startswith(name)] if name else []
    return candidates[0] if len(candidates) == 1 else None


def given(opts: Options, *names: str) -> list[str | None]:
    """The values of the options named *names*, in order (None for a flag)."""
    return [v for k, v in opts if k in names]


def known(args: Sequence[str | None]) -> list[str]:
    """*args*, where every one must be known: an unknown word may hide an option that
    writes (``sort $OPTS``), so the command is :class:`Opaque`."""
    if any(a is None for a in args):
        raise Opaque
    return [a for a in args if a is not None]
