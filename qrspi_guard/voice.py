"""How qrspi-guard speaks about itself: one line form, one did-you-mean rule, one way
to count.

- A line a command writes about its own run (not a diagnostic, which has the form
  ``path:line: level cause: message``) is ``qrspi-guard COMMAND: LEVEL: WHAT`` for an
  error or a warning, ``qrspi-guard COMMAND: WHAT`` for a note; a line that belongs to
  no command (an unknown one) is ``qrspi-guard: error: WHAT``.
- A mistyped name (a subcommand, an option, a choice value, a step, a cause) gets
  ``; did you mean 'NAME'?``, naming the known name :mod:`difflib` rates nearest, at
  :data:`CUTOFF` or more; nothing when none is that near.
- Counts in a summary are words: ``1 round``, ``9 rounds``, never ``round(s)``.

Standard library only, and the lowest layer: the core (the watch loop, the loop
commands, the cause catalogue) and the command line share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

PROG = "qrspi-guard"
#: how near a known name must be (difflib's ratio) to be offered
CUTOFF = 0.6


def line(command: str | None, what: str, level: str | None = None) -> str:
    """``qrspi-guard COMMAND: LEVEL: WHAT`` (no ``LEVEL: `` for a note, no `` COMMAND``
    for a line of no command). *what* must already be one safe line."""
    head = f"{PROG} {command}" if command else PROG
    return f"{head}: {level}: {what}" if level else f"{head}: {what}"


def error_line(command: str | None, what: str) -> str:
    return line(command, what, "error")


def warning_line(command: str | None, what: str) -> str:
    return line(command, what, "warning")


def nearest(word: str, names: Iterable[str], n: int = 1) -> list[str]:
    """The known *names* nearest *word* (at most *n*, best first), each rated at
    :data:`CUTOFF` or more."""
    import difflib

    return difflib.get_close_matches(word, list(names), n=n, cutoff=CUTOFF)


def suggestion(names: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` (``'x' or 'y'``, ``'x', 'y' or 'z'``), or ``""``."""
    if not names:
        return ""
    quoted = [f"'{n}'" for n in names]
    joined = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"; did you mean {joined}?"


def did_you_mean(word: str, names: Iterable[str]) -> str:
    """:func:`suggestion` of the one known name nearest *word*."""
    return suggestion(nearest(word, names))


def no_rounds(where: str) -> str:
    """What a run that found no round to judge says (*where*: the PATHs, shown)."""
    return (f"no review rounds found under {where} (looked for reviews/<step>/round-NN/ "
            "and reviews/tasks/task-NN/round-NN/)")


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 round``, ``0 rounds``; *words* for an irregular plural (``entries``)."""
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"
