"""A wrapper's text, and reading one back.

A wrapper runs the guard by the absolute path of the qrspi-guard that adopted the
checkout (as ``hook install`` writes its hook: the script is run by an orchestrator
whose ``PATH`` need not hold the guard's virtual environment). When that path no longer
runs (the guard moved, its environment was removed), the wrapper does not pass: bash's
``execfail`` lets it go on after the failed ``exec``, say so on stderr, naming itself,
the path and what to do, and exit 127, the shell's "command not found", which none of
the four scripts uses for anything else, so the loop stops there as on any failure.

The await wrapper also names its own directory (resolved when it runs) as an exec root
of the drain (``QRSPI_AWAIT_EXEC_ROOTS``): ``dispatch-agent.sh`` writes manifest commands
under the checkout's ``scripts/``, which is outside the repository the rounds are in when
the checkout is installed as a plugin.

:func:`render` is the one place the text is made; :func:`parse` reads a wrapper back
only when it is exactly what :func:`render` makes of what it names, so a wrapper edited
by hand is never taken for ours.
"""

from __future__ import annotations

import re
import shlex

from qrspi_guard.adopt.dropins import DropIn
from qrspi_guard.records import record

#: the template's version, in its first comment line (a later template still knows
#: the wrappers an earlier one wrote)
VERSION = 1
HALT_ON = ("all", "upstream")
#: a failed exec's exit: the shell's "command not found"
MISSING_EXIT = 127
_MARK = re.compile(r"^# qrspi-guard adopt v(\d+):")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f]")


@record(frozen=True)
class Wrapper:
    """What an adopted script runs: the guard's argv (its absolute path, or a Python
    with ``-m qrspi_guard``) and, for fan-in, ``--halt-on``."""

    guard: tuple[str, ...]
    halt_on: str | None = None


def printable_guard(guard: tuple[str, ...]) -> bool:
    """Whether *guard* can stand in a wrapper: words without control characters."""
    return bool(guard) and not any(_UNSAFE.search(w) for w in guard)


def for_dropin(dropin: DropIn, wrapper: Wrapper) -> Wrapper:
    """*wrapper* as *dropin*'s: ``--halt-on`` only for fan-in (``all`` unless given)."""
    halt_on = (wrapper.halt_on or "all") if dropin.command == "fan-in" else None
    return Wrapper(wrapper.guard, halt_on)


def args_for(dropin: DropIn, halt_on: str | None) -> list[str]:
    """The guard's arguments before the script's own: the command, and fan-in's mode
    (loop.md's default, ``all``, unless *halt_on* says otherwise)."""
    if dropin.command == "fan-in":
        return [dropin.command, "--halt-on", halt_on or "all"]
    return [dropin.command]


def render(dropin: DropIn, wrapper: Wrapper) -> bytes:
    """The wrapper replacing *dropin*'s script. *wrapper.guard* must pass
    :func:`printable_guard`."""
    if not printable_guard(wrapper.guard):
        raise ValueError("the guard's path holds a control character")
    args = args_for(dropin, wrapper.halt_on)
    shown = " ".join(["qrspi-guard", *args])
    words = " ".join(shlex.quote(w) for w in [*wrapper.guard[1:], *args])
    lines = [
        "#!/usr/bin/env bash",
        f"# qrspi-guard adopt v{VERSION}: {dropin.script} runs `{shown}`.",
        "# Upstream's script is kept; `qrspi-guard adopt --undo` puts it back.",
        f"guard={shlex.quote(wrapper.guard[0])}",
    ]
    if dropin.command == "await":
        lines += [
            'here=$(CDPATH= cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd) || '
            f'{{ echo "{dropin.name}: cannot find its own directory; nothing was done." >&2; '
            f"exit {MISSING_EXIT}; }}",
            'export QRSPI_AWAIT_EXEC_ROOTS="${QRSPI_AWAIT_EXEC_ROOTS:+$QRSPI_AWAIT_EXEC_ROOTS:}'
            '$here"',
        ]
    lines += [
        "shopt -s execfail",
        f'exec "$guard" {words} "$@"',
        f'echo "{dropin.name}: cannot run qrspi-guard at $guard (moved or removed since '
        "'qrspi-guard adopt'?); nothing was done. Run 'qrspi-guard adopt' again with the "
        "guard to use, or 'qrspi-guard adopt --undo'.\" >&2",
        f"exit {MISSING_EXIT}",
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def marked(data: bytes) -> bool:
    """Whether *data* says it is a wrapper adopt wrote (exactly so or edited since)."""
    second = data.split(b"\n", 2)[1:2]
    return bool(second) and _MARK.match(second[0].decode("utf-8", "replace")) is not None


def parse(dropin: DropIn, data: bytes) -> Wrapper | None:
    """The wrapper *data* is, when it is exactly one :func:`render` makes for *dropin*;
    None for anything else (an upstream script, a wrapper edited by hand)."""
    if not marked(data) or len(data) > 4096:
        return None
    try:
        lines = data.decode("utf-8").split("\n")
        guard_line = next(ln for ln in lines if ln.startswith("guard="))
        exec_line = next(ln for ln in lines if ln.startswith("exec "))
        guard = shlex.split(guard_line[len("guard="):])
        words = shlex.split(exec_line)
    except (UnicodeDecodeError, StopIteration, ValueError):
        return None
    if len(guard) != 1 or words[:2] != ["exec", "$guard"] or words[-1:] != ["$@"]:
        return None
    words = words[2:-1]
    if dropin.command not in words:
        return None
    at = words.index(dropin.command)
    after = words[at + 1:]
    halt_on = after[1] if after[:1] == ["--halt-on"] and len(after) == 2 else None
    candidate = for_dropin(dropin, Wrapper((guard[0], *words[:at]), halt_on))
    if not printable_guard(candidate.guard) or render(dropin, candidate) != data:
        return None
    return candidate


_HAND = re.compile(r"(?:^|[\s/\"'])(?:qrspi-guard|-m\s+qrspi_guard)['\"]?[ \t]+(?:--\S+[ \t]+)*"
                   r"([a-z-]+)", re.MULTILINE)


def by_hand(dropin: DropIn, data: bytes) -> bool:
    """Whether *data* is a short wrapper written by hand (the README's one line before
    adopt existed) that runs *dropin*'s command: no upstream script to keep."""
    if len(data) > 4096 or marked(data):
        return False
    text = data.decode("utf-8", "replace")
    return any(m.group(1) == dropin.command for m in _HAND.finditer(text))
