"""Where a tool call writes: the round a path lands in, the rounds a command names, and
the rounds a shell call can reach (:func:`rounds_reached`).

Paths are resolved (``cwd``, ``..``, symbolic links) before deciding. A path with no
``reviews`` segment is answered without importing the layout grammar, so a write
outside every round costs a few system calls.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from qrspi_guard.hook.payload import Call

REVIEWS = "reviews"
#: at most this many rounds are judged for one shell command
MAX_SHELL_ROUNDS = 16


class Target:
    """Where a tool call writes, resolved, and which round that is."""

    __slots__ = ("shown", "path", "round_dir", "name", "step", "round", "is_task", "nested",
                 "symlink")

    def __init__(self, shown: str, path: str, round_dir: str, name: str, step: str,
                 round: int | None, is_task: bool, nested: bool = False,
                 symlink: bool = False) -> None:
        self.shown = shown  #: the path as the payload gave it (escaped before printing)
        self.path = path  #: the resolved absolute path
        self.round_dir = round_dir  #: the resolved round directory
        self.name = name  #: the entry's name inside the round directory
        self.step = step
        self.round = round  #: None for a `round*` directory that is not `round-NN`
        self.is_task = is_task
        self.nested = nested  #: the write lands below a subdirectory `name` of the round
        self.symlink = symlink  #: the entry itself is a symbolic link inside the round

    @property
    def layout_problem(self) -> bool:
        """The write would break the round's layout whatever its content."""
        return self.round is None or self.nested or self.symlink

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))

    def __repr__(self) -> str:
        return "Target(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


def locate(file_path: str, cwd: str | None = None) -> Target | None:
    """The round a path writes into, after resolving `cwd`, symbolic links and `..`."""
    given = file_path
    if not os.path.isabs(file_path):
        file_path = os.path.join(cwd or os.getcwd(), file_path)
    head, name = os.path.split(file_path)
    if name in ("", ".", ".."):
        return _position(given, os.path.realpath(file_path))
    parent = os.path.realpath(head or os.sep)
    candidate = os.path.join(parent, name)
    if os.path.islink(candidate):
        inside = _position(given, candidate)
        if inside is not None and not inside.nested and not name.startswith("."):
            inside.symlink = True
            return inside
        candidate = os.path.realpath(candidate)
    return _position(given, candidate)


def round_at(parts: list[str]) -> tuple[int, str, bool] | None:
    """(index of the round component, step, is_task) of the first review round in a
    split path, or None. Imports the layout grammar only for a path under `reviews`."""
    if REVIEWS not in parts:
        return None
    from qrspi_guard.contract.layout import SKIPPED_DIRS, STEPS, TASK_DIR_RE, TASKS_DIR

    for i, part in enumerate(parts):
        if part != REVIEWS:
            continue
        below = parts[i + 1:]
        if len(below) >= 2 and below[0] in STEPS and below[1].startswith("round"):
            return i + 2, below[0], False
        if (len(below) >= 3 and below[0] == TASKS_DIR and TASK_DIR_RE.fullmatch(below[1])
                and below[2].startswith("round")):
            return i + 3, below[1], True
        if (len(below) >= 2 and below[0] not in SKIPPED_DIRS and below[0] != TASKS_DIR
                and below[0] and not below[0].startswith(".") and below[1].startswith("round")):
            return i + 2, below[0], False  # a step of unknown name: check judges its rounds
    return None


def _position(given: str, real: str) -> Target | None:
    parts = real.split(os.sep)
    found = round_at(parts)
    if found is None:
        return None
    at, step, is_task = found
    rest = parts[at + 1:]
    if not rest or not rest[0] or rest[0].startswith("."):
        return None  # the round directory itself, or a hidden name check ignores
    from qrspi_guard.contract.layout import round_number

    return Target(given, real, os.sep.join(parts[:at + 1]), rest[0], step,
                  round_number(parts[at]), is_task, nested=len(rest) > 1)


def triage(payload: dict[str, Any], event: str | None = None,
           runtime: str | None = None) -> tuple[Call, Target | None, str | None]:
    """The call a payload makes, where it writes, and what it asks of the hook: None
    when it bears on no review round (it is ignored, and nothing more is imported or
    read), ``""`` when it is to be judged, or the one line that blocks it (a place that
    cannot be used, in a ``reviews`` tree). Raises
    :class:`~qrspi_guard.hook.payload.HookFailure` for a payload it cannot use."""
    from qrspi_guard.hook.payload import base_dir, resolve, unusable_place
    from qrspi_guard.hook.runtimes import SHELL

    call = resolve(payload, event, runtime)
    if call.kind is None:
        return call, None, None
    unusable = unusable_place(call)  # a surrogate where a path belongs: never used
    if unusable is not None:
        return call, None, unusable or None
    if call.kind == SHELL:  # only what the command wrote (hook/shell.py)
        reach = may_reach_a_round(call.text("command") or "", base_dir(call))
        return call, None, "" if reach else None
    target = locate(call.file_path(), call.cwd)
    return call, target, "" if target is not None else None


def may_reach_a_round(command: str, base: str) -> bool:
    """Whether a shell call can reach a review round at all: its command mentions
    ``round`` or ``reviews``, or it runs in a ``reviews`` tree or in a run's directory
    (one that holds ``reviews/``). Two substring tests and at most one ``lstat``."""
    return ("round" in command or REVIEWS in command or REVIEWS in base
            or os.path.lexists(os.path.join(base, REVIEWS)))


#: at most this many paths are looked at for the rounds a shell call can reach
MAX_REACH_PATHS = 512


def rounds_reached(paths: list[str]) -> tuple[list[str], list[str]]:
    """The review rounds a shell call can reach through *paths* (absolute: what it
    writes and names, the words of its command line, where it runs), resolved:
    (round directories, existing or not, in the order first reached; the directories
    above rounds whose rounds it can reach: a ``reviews`` tree, a step, ``tasks/``, a
    task, or a run's directory's ``reviews/``)."""
    rounds: dict[str, None] = {}
    scopes: dict[str, None] = {}
    for path in paths[:MAX_REACH_PATHS]:
        if "\x00" in path:
            continue
        real = os.path.realpath(path)
        parts = real.split(os.sep)
        found = round_at(parts)
        if found is not None:
            rounds.setdefault(os.sep.join(parts[:found[0] + 1]))
            continue
        scope = _scope(real, parts)
        if scope is not None:
            scopes.setdefault(scope)
    return list(rounds), list(scopes)


def _scope(real: str, parts: list[str]) -> str | None:
    """The ``reviews`` tree, step, ``tasks/`` or task directory *real* is (its rounds
    are below it), or the ``reviews/`` of the run directory it is; else None."""
    if REVIEWS not in parts:
        candidate = os.path.join(real, REVIEWS)
        return candidate if os.path.isdir(candidate) and not os.path.islink(candidate) \
            else None
    from qrspi_guard.contract.layout import TASK_DIR_RE, TASKS_DIR

    below = parts[len(parts) - parts[::-1].index(REVIEWS):]
    if len(below) <= 1 and not (below and below[0].startswith(".")):
        return real
    if len(below) == 2 and below[0] == TASKS_DIR and TASK_DIR_RE.fullmatch(below[1]):
        return real
    return None


def rounds_named(command: str, base: str) -> list[tuple[str, str, int | None]]:
    """The review rounds a shell command names: (round directory, step, round number or
    None for a misnamed `round*` directory), existing directories only, at most
    :data:`MAX_SHELL_ROUNDS`, in the order first named.

    Every word of the command is read as a path relative to *base* (quotes and shell
    punctuation split words); a command run inside a round names that round. A command
    that does not contain ``round`` and does not run inside a round names none, at the
    cost of one substring test.
    """
    inside = REVIEWS in base and "round" in base
    if "round" not in command and not inside:
        return []
    import re

    words = [w for w in re.split(r"[\s;|&<>()`'\"=]+", command) if w]
    if inside:
        words.append(".")
    seen: dict[str, tuple[str, str, int | None]] = {}
    for word in words:
        if ("round" not in word and not inside) or "\x00" in word:
            continue
        path = os.path.realpath(os.path.join(base, os.path.expanduser(word)))
        parts = path.split(os.sep)
        found = round_at(parts)
        if found is None:
            continue
        at, step, _ = found
        round_dir = os.sep.join(parts[:at + 1])
        if round_dir in seen or not os.path.isdir(round_dir):
            continue
        from qrspi_guard.contract.layout import round_number

        seen[round_dir] = (round_dir, step, round_number(parts[at]))
        if len(seen) >= MAX_SHELL_ROUNDS:
            break
    return list(seen.values())
