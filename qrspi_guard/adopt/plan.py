"""What adopt or undo would do to each script, decided from what is on disk.

Each decision takes what stands at the script's path, the kept copy of its original and
the manifest's entry for it, and returns a :class:`Step`: what to write, or why not. A
step that is *refused* is a conflict the user may override (``--force``); one with an
*error* is never carried out (a link where the script should be, a kept copy that no
longer matches its sha256). The decisions cover every state a kill between two writes
can leave (see :mod:`qrspi_guard.adopt.run` for the order), so running the command
again finishes the job.
"""

from __future__ import annotations

from qrspi_guard.adopt.dropins import DropIn, sha256, version_of
from qrspi_guard.adopt.store import Original, Seen
from qrspi_guard.adopt.wrapper import Wrapper, by_hand, for_dropin, marked, parse, render
from qrspi_guard.records import record

#: adopt's actions: write the wrapper (keeping the original first when *keep* is set),
#: the wrapper as it should be already, nothing there to adopt
WRAP, OK, ABSENT = "wrap", "ok", "absent"
#: undo's actions: put the original back, drop a kept copy the script already equals,
#: forget an entry whose script the user put back, nothing adopted
RESTORE, DROP, FORGET, NONE = "restore", "drop", "forget", "none"


@record(frozen=True)
class Step:
    """One script's part of the plan. *note* is what the user is told about it."""

    dropin: DropIn
    action: str
    note: str
    #: the script's new bytes and mode (wrap, restore)
    data: bytes | None = None
    mode: int | None = None
    #: the original to keep before the wrapper is written (adopt)
    keep: bytes | None = None
    refused: str | None = None
    error: str | None = None
    #: said even when the step goes ahead (a version adopted under --force, say)
    warning: str | None = None

    @property
    def blocked(self) -> bool:
        return self.refused is not None or self.error is not None

    @property
    def writes(self) -> bool:
        return not self.blocked and self.action in (WRAP, RESTORE, DROP, FORGET)


def _intact(kept: Seen, entry: Original | None) -> bool:
    return (kept.kind == "file" and kept.data is not None
            and (entry is None or sha256(kept.data) == entry.sha256))


def _halt_note(dropin: DropIn, wrapper: Wrapper) -> str:
    return (f"qrspi-guard {dropin.command}" +
            (f" --halt-on {wrapper.halt_on or 'all'}" if dropin.command == "fan-in" else ""))


def plan_adopt(dropin: DropIn, current: Seen, kept: Seen, entry: Original | None,
               want: Wrapper, force: bool,
               known: dict[str, dict[str, str]] | None = None) -> Step:
    """*dropin*'s step when adopting with the wrapper *want*."""
    script = dropin.script
    want = for_dropin(dropin, want)
    if current.kind == "odd":
        return Step(dropin, WRAP, "", error=f"{script} {current.why}; not changed")
    if kept.kind == "odd":
        return Step(dropin, WRAP, "", error=f"the kept original of {script} {kept.why}")
    if kept.kind == "file" and not _intact(kept, entry):
        return Step(dropin, WRAP, "", error=f"the kept original of {script} no longer "
                    "matches the sha256 adopt recorded; nothing changed (put upstream's "
                    f"script back with git checkout -- {script}, and remove the kept copy)")
    wrapper = render(dropin, want)
    runs = _halt_note(dropin, want)
    mode = current.mode if current.mode is not None else (entry.mode if entry else 0o755)
    if current.kind == "missing":
        if kept.kind == "file":
            return Step(dropin, WRAP, f"wrapper written again (runs {runs}; the original "
                        "is still kept)", wrapper, mode)
        return Step(dropin, ABSENT, "not in this checkout; left alone")
    data = current.data
    assert data is not None
    ours = parse(dropin, data)
    if ours is not None:
        lost = (None if kept.kind == "file" else f"{script}'s original is not kept, so undo "
                f"cannot put it back (git checkout -- {script} can)")
        if ours == want:
            return Step(dropin, OK, f"already adopted (runs {runs})", warning=lost)
        return Step(dropin, WRAP, f"wrapper rewritten (runs {runs})", wrapper, mode,
                    warning=lost)
    if marked(data):
        step = Step(dropin, WRAP, f"edited wrapper replaced (runs {runs})", wrapper, mode)
        return step if force else _refuse(step, f"{script} is a wrapper adopt wrote, "
                                          "edited since; --force writes it anew")
    digest = sha256(data)
    label = version_of(script, digest, known)
    if kept.kind == "file":
        assert kept.data is not None
        if kept.data == data:
            return Step(dropin, WRAP, f"wrapped (runs {runs}; the original was kept "
                        "already)", wrapper, mode, keep=data)
        step = Step(dropin, WRAP, f"wrapped (runs {runs}); the script now in place is "
                    "kept as its original, replacing the older copy", wrapper, mode,
                    keep=data)
        return step if force else _refuse(step, f"{script} changed since it was adopted "
                                          "(it is neither the guard's wrapper nor the kept "
                                          "original); --force keeps it as the original")
    if by_hand(dropin, data):
        step = Step(dropin, WRAP, f"wrapped (runs {runs}); the hand-written wrapper is kept "
                    "as its original", wrapper, mode, keep=data)
        return step if force else _refuse(step, f"{script} is already a wrapper written by "
                                          "hand, not upstream's script: put upstream's back "
                                          f"first (git checkout -- {script}), or --force "
                                          "keeps the hand-written one as the original")
    if label is not None:
        return Step(dropin, WRAP, f"wrapped (runs {runs}); original kept ({label})",
                    wrapper, mode, keep=data)
    unknown = (f"{script} is a version adopt does not know (sha256 {digest}): not one "
               "upstream's suites measure the drop-in against, or changed locally")
    step = Step(dropin, WRAP, f"wrapped (runs {runs}); original kept", wrapper, mode,
                keep=data, warning=f"{unknown}; adopted anyway (--force)")
    return step if force else _refuse(step, f"{unknown}; --force adopts it anyway")


def _refuse(step: Step, why: str) -> Step:
    return Step(step.dropin, step.action, step.note, step.data, step.mode, step.keep,
                refused=why)


def plan_undo(dropin: DropIn, current: Seen, kept: Seen, entry: Original | None,
              force: bool) -> Step:
    """*dropin*'s step when undoing."""
    script = dropin.script
    if current.kind == "odd":
        return Step(dropin, RESTORE, "", error=f"{script} {current.why}; not changed")
    if kept.kind == "odd":
        return Step(dropin, RESTORE, "", error=f"the kept original of {script} {kept.why}")
    data = current.data
    wrapper = data is not None and (parse(dropin, data) is not None or marked(data))
    if kept.kind == "file":
        assert kept.data is not None
        if entry is None or sha256(kept.data) != entry.sha256:
            if data == kept.data:  # adopt was stopped before it wrote the wrapper
                return Step(dropin, DROP, "already the original; the kept copy removed")
            return Step(dropin, RESTORE, "", error=f"the kept original of {script} no "
                        "longer matches the sha256 adopt recorded; not restored (git "
                        f"checkout -- {script} puts upstream's back)")
        restore = Step(dropin, RESTORE, "original restored", kept.data, entry.mode)
        if data is None or (data is not None and parse(dropin, data) is not None):
            return restore
        if data == kept.data:
            if current.mode == entry.mode:
                return Step(dropin, DROP, "already the original; the kept copy removed")
            return restore
        why = (f"{script} changed since it was adopted (it is "
               f"{'an edited wrapper' if wrapper else 'neither the wrapper nor the original'}"
               "); --force puts the original back over it")
        return restore if force else _refuse(restore, why)
    if wrapper:
        return Step(dropin, RESTORE, "", error=f"{script} is the guard's wrapper but its "
                    "original is not kept (removed from the state directory?); it stays "
                    f"as it is. Put upstream's back with git checkout -- {script}")
    if entry is not None:
        return Step(dropin, FORGET, "not the guard's wrapper any more (put back by hand); "
                    "left as it is")
    return Step(dropin, NONE, "not adopted" if data is not None else
                "not in this checkout")
