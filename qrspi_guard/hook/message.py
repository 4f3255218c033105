"""The message the agent is shown when the hook blocks: words it can act on.

Every error with its cause, line and field, what was found, and the catalogue's
allowed values, fix and corrected example line, the example's placeholders filled in
here from the file's path and the value found (:data:`PLACEHOLDERS`). Every string
taken from the payload or the file is passed through
:func:`qrspi_guard.textsafe.one_line`, so it can neither add a line nor send an escape.
The enum values come from :mod:`qrspi_guard.contract.schema`, so they follow the contract.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qrspi_guard.contract.codespans import plain
from qrspi_guard.contract.schema import CHANGE_TYPES, SEVERITIES
from qrspi_guard.hook.where import Target
from qrspi_guard.textsafe import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.causes import Cause
    from qrspi_guard.contract.diagnostics import Diagnostic

EXPLAIN = "Explain a cause with: qrspi-guard explain <cause>"


class _Context:
    """What the example lines are filled in from."""

    __slots__ = ("step", "round", "tag", "fnum", "clean")

    def __init__(self, step: str, round: int | None, name: str) -> None:
        from qrspi_guard.contract.layout import classify

        fname = classify(name)
        self.step = step
        self.round = round
        self.tag = fname.tag
        self.fnum = fname.fnum
        self.clean = name.endswith(".clean.md")  #: the target is a clean sentinel


def render(target: Target, diags: list[Diagnostic] | tuple[Diagnostic, ...], event: str,
           edit: bool = False) -> str:
    """The text the agent is shown for one file: *edit* for an edit judged before it
    lands, else a whole-file write (pre) or a change already made (post)."""
    ctx = _Context(target.step, target.round, target.name)
    errors = [d for d in diags if d.level == "error"]
    shown = one_line(target.shown, 300)
    where = f"review round {one_line(target.step)}/{os.path.basename(target.round_dir)}"
    if event == "pre":
        what = "edit" if edit else "write"
        head = (f"qrspi-guard refused this {what}: {shown} would halt {where} with "
                f"{len(errors)} error(s).")
        tail = ("Fix every error above, then make the edit again (or write the whole file)."
                if edit else "Fix every error above, then write the whole file again.")
    else:
        head = (f"qrspi-guard: your edit was applied, but {shown} now halts {where} with "
                f"{len(errors)} error(s).")
        tail = "Fix every error above in the file now (edit it again or rewrite it)."
    lines = [head, ""]
    lines.extend(_errors_and_warnings(diags, ctx))
    lines.extend((tail, EXPLAIN))
    return "\n".join(one_line(line) for line in lines) + "\n"


def render_rounds(groups: list[tuple[str, str, list[Diagnostic]]]) -> str:
    """The text for a shell command that left rounds halting: each round's errors,
    grouped by file. *groups*: (round directory, step, diagnostics)."""
    halting = [(r, s, ds) for r, s, ds in groups if any(d.level == "error" for d in ds)]
    total = sum(1 for _, _, ds in halting for d in ds if d.level == "error")
    names = ", ".join(f"{one_line(s)}/{one_line(os.path.basename(r), 60)}"
                      for r, s, _ in halting)
    lines = [f"qrspi-guard: after your command, review round(s) {names} halt with "
             f"{total} error(s).", ""]
    for round_dir, step, diags in halting:
        number = _number(round_dir)
        files = sorted({d.file for d in diags if d.file}, key=str)
        for name in [*files, None]:
            mine = [d for d in diags if d.file == name]
            if not any(d.level == "error" for d in mine):
                continue
            place = f"{one_line(step)}/{one_line(os.path.basename(round_dir), 60)}"
            lines.append(f"In {place}/{one_line(name, 200)}:" if name else f"In {place}:")
            lines.extend(_errors_and_warnings(mine, _Context(step, number, name or "")))
    lines.extend(("Fix every error above in the files now (edit them or rewrite them).",
                  EXPLAIN))
    return "\n".join(one_line(line) for line in lines) + "\n"


def _number(round_dir: str) -> int | None:
    from qrspi_guard.contract.layout import round_number

    return round_number(os.path.basename(round_dir))


def _errors_and_warnings(diags: list[Diagnostic] | tuple[Diagnostic, ...],
                         ctx: _Context) -> list[str]:
    from qrspi_guard.contract.causes import cause as catalogue

    lines: list[str] = []
    for d in diags:
        if d.level == "error":
            lines.extend(_render_one(d, ctx, catalogue(d.cause)))
            lines.append("")
    warnings = [d for d in diags if d.level == "warning"]
    if warnings:
        lines.append("Also worth fixing (warnings, not blocking): " + "; ".join(
            f"{d.cause}: {one_line(d.message, 200)}" for d in warnings))
        lines.append("")
    return lines


def _render_one(d: Diagnostic, ctx: _Context, entry: Cause) -> list[str]:
    at = []
    if d.line is not None:
        at.append(f"line {d.line}")
    if d.field:
        at.append(f"field {one_line(d.field, 60)}")
    out = [f"- {d.cause}" + (f" ({', '.join(at)})" if at else "") + f": "
           f"{one_line(d.message, 300)}"]
    found = d.value if d.value is not None else (
        "nothing: the field is absent" if d.cause.startswith("missing_") and d.field else None)
    if found is not None:
        out.append(f"    found:   {one_line(found, 200)}")
    if entry.allowed:
        out.append(f"    allowed: {entry.allowed}")
    out.append(f"    fix:     {plain(entry.fix)}")
    example = entry.example.format_map(_Values(ctx, d)) if entry.example else ""
    if example:
        out.append(f"    example: {one_line(example, 200)}")
    return out


class _Values(dict[str, str]):
    """The placeholder values of an example template, each computed on first use."""

    def __init__(self, ctx: _Context, d: Diagnostic) -> None:
        super().__init__()
        self.ctx, self.d = ctx, d

    def __missing__(self, key: str) -> str:
        value = self[key] = PLACEHOLDERS[key](self.ctx, self.d)
        return value


def _closest(value: str | None, allowed: tuple[str, ...], default: str) -> str:
    """The allowed value nearest *value* under the guard's one did-you-mean rule, else
    *default*."""
    if value:
        from qrspi_guard.voice import nearest

        match = nearest(value.strip().lower(), allowed)
        if match:
            return match[0]
    return default


def _fid(ctx: _Context) -> str:
    return f"R{ctx.round or 1}-F{ctx.fnum or 1:02d}"


def _tag(ctx: _Context) -> str:
    return ctx.tag or "quality-claude"


def _artifact(ctx: _Context) -> str:
    return "integration" if ctx.step in ("integrate", "implement-gate") else ctx.step


def _coexist(ctx: _Context) -> str:
    tag = _tag(ctx)
    if ctx.clean:
        return (f"no {tag}.clean.md while {tag} has finding files; delete the finding files "
                "first only if they are stale output of an earlier attempt")
    return f"delete the stale {tag}.clean.md first, then write this finding"


_SEVERITY = "medium" if "medium" in SEVERITIES else SEVERITIES[0]
_CHANGE = "correctness" if "correctness" in CHANGE_TYPES else CHANGE_TYPES[0]

#: placeholder -> its value for the written file (*ctx*) and the diagnostic: what the
#: catalogue's example templates may name
PLACEHOLDERS: dict[str, Callable[[_Context, Diagnostic], str]] = {
    "finding_id": lambda c, d: _fid(c),
    "tag": lambda c, d: _tag(c),
    "round": lambda c, d: str(c.round or 1),
    "step": lambda c, d: c.step,
    "artifact": lambda c, d: _artifact(c),
    "severity": lambda c, d: _SEVERITY,
    "change_type": lambda c, d: _CHANGE,
    "closest_severity": lambda c, d: _closest(d.value, SEVERITIES, _SEVERITY),
    "closest_change_type": lambda c, d: _closest(d.value, CHANGE_TYPES, _CHANGE),
    "next_finding": lambda c, d: f"{_tag(c)}.finding-F{(c.fnum or 1) + 1:02d}.md",
    "coexist": lambda c, d: _coexist(c),
}
