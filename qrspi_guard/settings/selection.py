"""Rule selection in ruff's spelling, applied to results in one place.

``select``, ``extend-select`` and ``ignore`` name causes of the catalogue (or ``ALL``);
``per-file-ignores`` maps globs, relative to the configuration file's directory, to
causes left out for the paths they match. Layers are applied in order (the project
configuration file, then the command line): a layer's ``select`` starts over, its
``extend-select`` adds, its ``ignore`` removes. Every cause is on by default.

A :class:`Selection` is what the one judge (:class:`qrspi_guard.judge.Judge`) hands the
engine as its ``keep``: the engine leaves out the diagnostics of causes that are off
where it makes them, and decides each round's status once, after, so an ignored cause
is never reported in any format or status file. :func:`apply_selection` does the same
to a result already made (embedders). Pure: no I/O beyond ``os.path.abspath``, no
click.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, overload

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.errors import UsageError
from qrspi_guard.records import record, replace
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.diagnostics import Diagnostic
    from qrspi_guard.contract.runconfig import RunConfig
    from qrspi_guard.engine.results import CheckResult, RoundResult

ALL = "ALL"


class UnknownCause(UsageError):
    """A selection names a cause that is not in the catalogue."""

    def __init__(self, name: str, where: str) -> None:
        super().__init__(name, where)
        self.name = name
        self.where = where

    def __str__(self) -> str:
        from qrspi_guard.contract.causes import did_you_mean

        return (f"{self.where}: unknown cause {one_line(self.name)!r}"
                f"{one_line(did_you_mean(self.name))} (see `qrspi-guard explain --list`)")


class EmptySelection(UsageError):
    """``--select ""`` (or ``select = []``): a selection that turns every cause off."""

    def __init__(self, where: str) -> None:
        super().__init__(f"{where}: names no cause; every cause would be off and every "
                         "error hidden (name causes, or ALL)")


def parse_names(values: Iterable[str], where: str, select: bool = False) -> tuple[str, ...]:
    """Cause names from comma-separated *values* (``ALL`` allowed), checked against the
    catalogue; raises :class:`UnknownCause` naming the first unknown one, and for a
    *select* that names nothing :class:`EmptySelection`."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip()
            if not name:
                continue
            if name != ALL and name not in CATALOGUE:
                raise UnknownCause(name, where)
            if name not in out:
                out.append(name)
    if select and not out:
        raise EmptySelection(where)
    return tuple(out)


@record(frozen=True)
class Layer:
    """One source's selection: None where that source says nothing."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def _expand(names: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for n in names:
        if n == ALL:
            out.update(CATALOGUE)
        else:
            out.add(n)
    return out


def enabled_causes(layers: Sequence[Layer]) -> frozenset[str]:
    """The causes on after applying *layers* in order to the default (all on)."""
    on = set(CATALOGUE)
    for layer in layers:
        if layer.select is not None:
            on = _expand(layer.select)
        on |= _expand(layer.extend_select)
        on -= _expand(layer.ignore)
    return frozenset(on)


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over `/`-separated relative paths: ``**`` crosses directories,
    ``*`` and ``?`` do not, ``[...]`` is a character class."""
    i, out = 0, []
    p = pattern.replace(os.sep, "/").lstrip("/")
    if p.startswith("./"):
        p = p[2:]
    while i < len(p):
        c = p[i]
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if p.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = p.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = p[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


@record(frozen=True)
class PerFileIgnore:
    pattern: str
    causes: frozenset[str]

    @classmethod
    def of(cls, pattern: str, causes: Iterable[str]) -> PerFileIgnore:
        return cls(pattern, frozenset(_expand(causes)))

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return glob_to_regex(self.pattern)

    def matches(self, rel: str) -> bool:
        """Whether the path *rel* (relative to the config's directory), or a directory
        above it, matches; a pattern without `/` also matches a bare name."""
        if rel.startswith("../") or rel == "..":
            return False
        parts = rel.split("/")
        candidates = ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]
        if "/" not in self.pattern.strip("/"):
            candidates += parts
        return any(self.regex.match(c) for c in candidates)


@record(frozen=True)
class Selection:
    """Which causes are reported, and where."""

    enabled: frozenset[str] = frozenset(CATALOGUE)
    per_file: tuple[PerFileIgnore, ...] = ()
    #: the directory `per-file-ignores` globs are relative to
    base: str | None = None

    @property
    def everything(self) -> bool:
        """Every cause on everywhere: applying the selection changes nothing."""
        return not self.per_file and self.enabled >= frozenset(CATALOGUE)

    @property
    def disabled(self) -> list[str]:
        return [name for name in CATALOGUE if name not in self.enabled]

    def _rel(self, path: str) -> str:
        base = self.base or os.getcwd()
        rel = os.path.relpath(os.path.abspath(path or "."), base)
        return rel.replace(os.sep, "/")

    def allows(self, d: Diagnostic) -> bool:
        return self.allows_at(d.cause, d.path)

    def allows_at(self, cause: str, path: str) -> bool:
        """Whether *cause* is reported at *path* (``--fix`` asks before fixing)."""
        if cause not in self.enabled:
            return False
        if self.per_file:
            rel = self._rel(path)
            for pfi in self.per_file:
                if cause in pfi.causes and pfi.matches(rel):
                    return False
        return True

    def filter(self, diags: Iterable[Diagnostic]) -> list[Diagnostic]:
        return [d for d in diags if self.allows(d)]


DEFAULT = Selection()


def _round(rr: RoundResult, selection: Selection,
           runs: dict[int, RunConfig]) -> RoundResult:
    run = runs.get(id(rr.run))
    if run is None:
        run = runs[id(rr.run)] = replace(rr.run, diagnostics=selection.filter(rr.run.diagnostics))
    diags = selection.filter(rr.diagnostics)
    kept = replace(rr, diagnostics=diags, run=run)
    kept.status = kept.decided()
    return kept


@overload
def apply_selection(result: CheckResult, selection: Selection) -> CheckResult: ...
@overload
def apply_selection(result: RoundResult, selection: Selection) -> RoundResult: ...
@overload
def apply_selection(result: Sequence[Diagnostic], selection: Selection) -> list[Diagnostic]: ...


def apply_selection(result: CheckResult | RoundResult | Sequence[Diagnostic],
                    selection: Selection) -> CheckResult | RoundResult | list[Diagnostic]:
    """*result* without the diagnostics *selection* turns off, round statuses
    recomputed (`halt` only while an error is left, else `pending` for an incomplete
    round, else `ok`). Accepts a :class:`CheckResult` (``check``), a
    :class:`RoundResult` (``watch``) or a sequence of diagnostics (``hook``); returns a
    new value of the same kind and never changes its argument. With the default
    selection the argument itself is returned (a list copy for a sequence)."""
    from qrspi_guard.engine.results import CheckResult, RoundResult

    if isinstance(result, CheckResult):
        if selection.everything:
            return result
        runs: dict[int, RunConfig] = {}
        return replace(result, rounds=[_round(r, selection, runs) for r in result.rounds],
                       outside={i: selection.filter(diags)
                                for i, diags in result.outside.items()})
    if isinstance(result, RoundResult):
        return result if selection.everything else _round(result, selection, {})
    return list(result) if selection.everything else selection.filter(result)

