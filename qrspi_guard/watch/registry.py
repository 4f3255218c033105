"""The rounds a watch keeps current: each tracked round (its judge, its run, its status
output), the rounds of each step directory, and the files beside a round that bear on
it (round-NN-verified.md, the verifier-disabled marker, the commit anchor, the scope set)."""

from __future__ import annotations

import os

from qrspi_guard.contract.layout import (
    VERIFIED_SUFFIXES,
    RoundRef,
    round_side_file,
    side_file_name,
    verified_file_names,
)
from qrspi_guard.records import record
from qrspi_guard.watch.judge import RoundJudge
from qrspi_guard.watch.publish import RoundOutput

#: files beside a round whose change bears on it (the verified file first)
SIDE_SUFFIXES = (*VERIFIED_SUFFIXES, "-verifier-disabled.md", "-commit.txt", "-scope-set.txt")


@record
class Tracked:
    """One round the loop keeps current."""

    ref: RoundRef
    judge: RoundJudge
    run_key: str | None
    out: RoundOutput

    @property
    def writes(self) -> int:
        return self.out.writes

    @property
    def number(self) -> int:
        """The round's number. A watch tracks only what discover_dir finds, and each
        round it finds is `round-NN` or `round-NN-<suffix>`, never a pseudo-round."""
        n = self.ref.round
        assert n is not None, self.ref.round_dir
        return n

    @property
    def step_key(self) -> str:
        return os.path.normpath(self.ref.step_dir)

    def verified_paths(self) -> list[str]:
        return [os.path.join(self.ref.step_dir, name)
                for name in verified_file_names(self.number)]

    def side_files(self) -> list[str]:
        return [os.path.join(self.ref.step_dir, side_file_name(self.number, suffix))
                for suffix in SIDE_SUFFIXES]


class Registry:
    """Tracked rounds by round directory (absolute), and by step directory."""

    def __init__(self) -> None:
        self.rounds: dict[str, Tracked] = {}  #: round dir (absolute) -> tracked round
        self.step_dirs: dict[str, set[str]] = {}  #: step dir -> round keys in it
        self._highest: dict[str, int] = {}  #: step dir -> its highest round number

    def add(self, key: str, t: Tracked) -> bool:
        """Track *t*; True when its step directory is new to the watch."""
        self.rounds[key] = t
        new_step = t.step_key not in self.step_dirs
        self.step_dirs.setdefault(t.step_key, set()).add(key)
        self._highest[t.step_key] = max(self._highest.get(t.step_key, 0), t.number)
        return new_step

    def drop(self, key: str) -> Tracked:
        t = self.rounds.pop(key)
        keys = self.step_dirs.get(t.step_key, set())
        keys.discard(key)
        if self._highest.get(t.step_key) == t.number:
            self._highest[t.step_key] = max((self.rounds[k].number for k in keys), default=0)
        return t

    def siblings(self, t: Tracked) -> set[str]:
        """The round keys in *t*'s step directory (itself included)."""
        return self.step_dirs.get(t.step_key, set())

    def later_round_exists(self, t: Tracked) -> bool:
        """A round of a higher number in *t*'s step directory (O(1): the step's highest
        number is kept, so judging N rounds costs N, not N squared)."""
        return self._highest.get(t.step_key, 0) > t.number

    def earlier_than(self, new: list[str]) -> list[str]:
        """The rounds of the step directories of the *new* keys whose number is below
        the highest new one there: a later round appeared, so they are complete (one
        pass per step directory, however many rounds are new)."""
        top: dict[str, int] = {}
        for key in new:
            t = self.rounds[key]
            top[t.step_key] = max(top.get(t.step_key, 0), t.number)
        return [k for step, n in top.items() for k in self.step_dirs.get(step, ())
                if self.rounds[k].number < n]

    def side_owner(self, parent: str, name: str) -> str | None:
        """The round a file beside the rounds (round-NN-verified.md, ...) bears on."""
        if not self.step_dirs.get(parent):
            return None
        side = round_side_file(name)
        if side is None or side[1] not in SIDE_SUFFIXES:
            return None
        key = os.path.join(parent, f"round-{side[0]:02d}")
        return key if key in self.rounds else None
