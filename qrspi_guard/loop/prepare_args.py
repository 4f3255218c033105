"""``prepare``'s command line, read as ``round-prepare.sh`` reads it (loop.md).

``NN OUTPUT_DIR`` first, then ``--task-branch B``, ``--implementer-commit SHA``,
``--worktree P``, ``--base-ref REF``, ``--artifact PATH`` (each takes the next word; the
last one given wins; an empty value is as if the flag were absent) and ``--verify``
(accepted, no effect). Every problem is one :class:`PrepareUsageError` line, exit 1: fewer
than two words, a positional or a flag value beginning with ``-`` (never handed to git),
an unknown flag, a flag with no value, a round that is not an integer from 1 (at most 9
digits, so a huge number is a short refusal).
"""

from __future__ import annotations

from collections.abc import Sequence

from qrspi_guard.errors import GuardError
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

USAGE = ("usage: qrspi-guard prepare <round-NN> <output-dir> [--task-branch <b> "
         "--implementer-commit <SHA>] [--worktree <path>] [--base-ref <ref>] "
         "[--artifact <path>] [--verify]")

#: flags that take the next word, in the order their values are checked
VALUE_FLAGS = ("--base-ref", "--artifact", "--task-branch", "--implementer-commit",
               "--worktree")
MAX_ROUND_DIGITS = 9


class PrepareUsageError(GuardError):
    """Bad arguments: upstream's exit 1, one line naming the argument."""

    exit_code = 1


@record(frozen=True)
class PrepareArgs:
    round_no: int
    output_dir: str
    task_branch: str = ""
    implementer_commit: str = ""
    worktree: str = ""
    base_ref: str = ""
    artifact: str = ""

    @property
    def nn(self) -> str:
        """The round as upstream names its files: two digits at least."""
        return f"{self.round_no:02d}"

    @property
    def per_task(self) -> bool:
        return bool(self.task_branch or self.implementer_commit)


def _shown(word: str) -> str:
    return one_line(word, 80)


def parse_args(words: Sequence[str]) -> PrepareArgs:
    """The run's arguments, or :class:`PrepareUsageError`."""
    if len(words) < 2:
        raise PrepareUsageError(f"expected <round-NN> and <output-dir>; {USAGE}")
    round_word, output_dir = words[0], words[1]
    for name, word in (("<round-NN>", round_word), ("<output-dir>", output_dir)):
        if word.startswith("-"):
            raise PrepareUsageError(f"{name} must not begin with '-' (got: {_shown(word)}); "
                                    "a flag cannot stand in for a positional argument")
    values: dict[str, str] = {}
    rest = list(words[2:])
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--verify":
            i += 1
            continue
        if word not in VALUE_FLAGS:
            raise PrepareUsageError(f"unknown flag: {_shown(word)}; {USAGE}")
        if i + 1 >= len(rest):
            raise PrepareUsageError(f"{word} needs a value")
        values[word] = rest[i + 1]
        i += 2
    for flag in VALUE_FLAGS:
        value = values.get(flag, "")
        if value.startswith("-"):
            raise PrepareUsageError(f"{flag} must not begin with '-' (got: {_shown(value)}); "
                                    "refusing to hand an option-shaped value to git")
    if not output_dir:
        raise PrepareUsageError("<output-dir> is empty")
    return PrepareArgs(
        round_no=_round_number(round_word), output_dir=output_dir,
        task_branch=values.get("--task-branch", ""),
        implementer_commit=values.get("--implementer-commit", ""),
        worktree=values.get("--worktree", ""), base_ref=values.get("--base-ref", ""),
        artifact=values.get("--artifact", ""))


def _round_number(word: str) -> int:
    if not (word.isascii() and word.isdigit()):
        raise PrepareUsageError(f"<round-NN> must be a positive integer, got: {_shown(word)}")
    digits = word.lstrip("0") or "0"
    if len(digits) > MAX_ROUND_DIGITS:
        raise PrepareUsageError(f"<round-NN> {_shown(word)} is too large (at most "
                                f"{MAX_ROUND_DIGITS} digits)")
    number = int(digits)
    if number < 1:
        raise PrepareUsageError(f"<round-NN> must be >= 1, got: {_shown(word)}")
    return number
