"""The end of a drain, under the round's lock: each entry settled, then the manifest
(re-read and merged: :func:`qrspi_guard.loop.manifest.merge_back`),
``.round-complete.json``, ``.dispatch/`` and the round's status file, in that order, each
relative to the round's descriptor (a link is never written through).

An entry's status follows what stands in the round for its tag (its finding files, its
clean sentinel), as upstream's script decides it, with two rules of the newest suites:
a tag with no finding files whose raw capture ``.dispatch/<tag>.raw`` exists is split
first (the fallback, ``split``'s own core, passed in as a :data:`Splitter`), and an entry
the manifest already marks ``failed`` stays failed unless that fallback rescues it. In
this run, a refused command and a failed ``await_cmd`` are final (a capture it left may
be partial); a ``split_cmd`` that fails after its ``await_cmd`` succeeded may be rescued
by the fallback, as a ``split_cmd`` that wrote nothing is.

The round is listed once (:class:`Tags`), whatever the number of entries: the cost of a
drain is the entries plus the files, never their product.

Output is bounded (:class:`Notes`): upstream's suites allow 2 KiB of stdout and stderr
together, and nothing read from a capture or a finding is ever in it -- only tags
checked against the grammar, fixed wording, numbers and cause names.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable

from qrspi_guard import voice
from qrspi_guard.contract.layout import CLEAN_KINDS, Kind, classify
from qrspi_guard.errors import GuardError
from qrspi_guard.loop.manifest import MANIFEST, Entry, Manifest, merge_back, read_manifest
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.capped import Refused, read_regular
from qrspi_guard.parse.nofollow import DIR_FLAGS, Dir
from qrspi_guard.records import field, record
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import plural

COMPLETE = ".round-complete.json"
DISPATCH = ".dispatch"
#: the most bytes of the report (summary and problems); upstream's suites pin 2048 for
#: stdout and stderr together, which leaves room for one line saying this run waited
OUTPUT_BUDGET = 1750
#: the most of a raw capture read (split's own input cap)
CAPTURE_CAP = 16 * 1024 * 1024
_NO_MANIFEST = b'{"awaited":0,"with_findings":0,"clean":0,"entries":[]}\n'


@record(frozen=True)
class Fallback:
    """What the fallback split made of a raw capture: files written (or already there
    byte for byte), or the failure; ``causes``: the contract errors of what it wrote."""

    files: tuple[str, ...] = ()
    failure: str | None = None
    causes: tuple[str, ...] = ()


#: (capture bytes, the open round, tag) -> Fallback; called with the round's lock held
Splitter = Callable[[bytes, Dir, str], Fallback]


@record
class Report:
    """The drain's result: stdout's one line, stderr's lines, the exit code."""

    summary: str
    lines: list[str] = field(default_factory=list)
    exit_code: int = 0


class Notes:
    """Lines for stderr within :data:`OUTPUT_BUDGET` (summary included): as many as fit,
    then one saying how many more were left out."""

    LINE = 240

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        self.items.append(voice.line("await", one_line(text, self.LINE)))

    def bounded(self, summary: str) -> list[str]:
        budget = OUTPUT_BUDGET - len(summary.encode()) - 1 - 80  # room for "N more"
        out: list[str] = []
        used = 0
        for i, line in enumerate(self.items):
            size = len(line.encode()) + 1
            if used + size > budget:
                more = plural(len(self.items) - i, "more problem", "more problems")
                out.append(voice.line("await", f"... and {more} not shown"))
                break
            out.append(line)
            used += size
        return out


def _read_capture(dfd: int, name: str) -> bytes | str | None:
    """A raw capture's bytes, why it cannot be read, or None when there is none."""
    try:
        return read_regular(name, CAPTURE_CAP, follow=False, dir_fd=dfd)[0]
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    except Refused as exc:
        if exc.too_large:
            return f"is larger than {CAPTURE_CAP >> 20} MiB"
        return "cannot be read: not a regular file"


class Tags:
    """Which tags have finding files, and which a clean sentinel, in the round: from one
    listing, kept current as the fallback split adds files."""

    def __init__(self, names: Iterable[str]) -> None:
        self.findings: set[str] = set()
        self.clean: set[str] = set()
        self.add(names)

    def add(self, names: Iterable[str]) -> None:
        for name in names:
            fname = classify(os.path.basename(name))
            if fname.tag is None:
                continue
            if fname.kind is Kind.FINDING:
                self.findings.add(fname.tag)
            elif fname.kind in CLEAN_KINDS:
                self.clean.add(fname.tag)


def _fallback(entry: Entry, round_dir: Dir, tags: Tags, dfd: int | None,
              splitter: Splitter, notes: Notes, label: str) -> bool | None:
    """The stdout fallback for a tag with no finding files: True when its capture was
    split, None when there is none to split, False when it failed (said)."""
    assert entry.tag is not None
    if entry.tag in tags.findings or dfd is None:
        return None
    raw = f"{entry.tag}.raw"
    data = _read_capture(dfd, raw)
    if data is None:
        return None
    if isinstance(data, str):
        notes.add(f"{label}: {DISPATCH}/{raw} {data}; marked failed")
        return False
    made = splitter(data, round_dir, entry.tag)
    tags.add(made.files)
    if made.failure is not None:
        notes.add(f"{label}: the fallback split of {DISPATCH}/{raw} failed: {made.failure}; "
                  "marked failed")
        return False
    if made.causes:
        notes.add(f"{label}: split {DISPATCH}/{raw} into {len(made.files)} file(s), kept as "
                  f"written though not contract-valid: {', '.join(made.causes[:6])} (the "
                  "round's status names them)")
    return True


def _settle(entry: Entry, round_dir: Dir, tags: Tags, dfd: int | None, splitter: Splitter,
            notes: Notes) -> str:
    """The entry's status after this drain (see the module docstring)."""
    assert entry.data is not None and entry.tag is not None
    label = f"entry {entry.index} ({entry.tag})"
    if entry.failure is not None and not entry.rescuable:
        notes.add(f"{label}: {entry.failure}; marked failed")
        return "failed"
    split = _fallback(entry, round_dir, tags, dfd, splitter, notes, label)
    if split is False:
        return "failed"
    if entry.failure is not None:  # split_cmd failed after a complete capture
        if not split:
            notes.add(f"{label}: {entry.failure}; marked failed")
            return "failed"
        notes.add(f"{label}: {entry.failure}; the fallback split of its capture rescued it")
    elif entry.data.get("status") == "failed" and not split:
        notes.add(f"{label}: marked failed in the manifest and no raw capture rescues it")
        return "failed"
    if entry.tag in tags.findings:
        return "complete-with-findings"
    if entry.tag in tags.clean:
        return "complete-clean"
    if entry.run or entry.data.get("mode") != "background":
        notes.add(f"{label}: no finding files, no clean sentinel and no raw capture; "
                  "counted clean as upstream does")
    return "complete"


def _open_dispatch(round_dir: Dir, notes: Notes) -> int | None:
    try:
        return os.open(DISPATCH, DIR_FLAGS, dir_fd=round_dir.fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        notes.add(f"{DISPATCH}/ cannot be used ({exc.strerror or exc}); no raw capture read")
        return None


def _render(value: object) -> bytes:
    return (jsondoc.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def finish(round_dir: Dir, read: Manifest, entries: list[Entry], splitter: Splitter,
           notes: Notes) -> Report:
    """Settle every entry, then write: the manifest (re-read and merged), then
    ``.round-complete.json``, the removal of ``.dispatch/`` (only when every entry
    drained and no other entry came meanwhile), the status file."""
    awaited = sum(1 for e in entries if e.data is not None and e.data.get("mode") ==
                  "background" and e.data.get("status") == "pending")
    tags = Tags(round_dir.listdir())  # once, whatever the number of entries
    dfd = _open_dispatch(round_dir, notes)
    try:
        for entry in entries:
            if entry.data is not None and entry.tag is not None:
                entry.data["status"] = _settle(entry, round_dir, tags, dfd, splitter, notes)
            elif entry.data is not None:
                entry.data["status"] = "failed"
    finally:
        if dfd is not None:
            os.close(dfd)
    objects = [e.data for e in entries if e.data is not None]
    statuses = [str(d.get("status")) for d in objects]
    with_findings = statuses.count("complete-with-findings")
    clean = statuses.count("complete-clean") + statuses.count("complete")
    failed = len(entries) - with_findings - clean
    now = read_manifest(round_dir)  # just before the write, under the lock
    merged, kept = merge_back(read, now)
    if kept:
        notes.add(f"{_entries(kept)} of {MANIFEST} came or changed while this drain ran: "
                  "kept as written, not drained; run await again")
    _write(round_dir, MANIFEST, _render(merged), skip_if=now.data if now else None)
    summary = {"awaited": awaited, "with_findings": with_findings, "clean": clean,
               "entries": [{"tag": d.get("tag"), "status": d.get("status")} for d in objects]}
    _write(round_dir, COMPLETE, _render(summary))
    if failed == 0 and not kept:
        _remove_dispatch(round_dir, notes)
    elif failed and round_dir.exists(DISPATCH):
        notes.add(f"{DISPATCH}/ kept: {_entries(failed)} did not drain; its raw captures "
                  "stay for a rescue")
    status_ok = write_round_status(round_dir.path, notes)
    # upstream's summary line (await-round.sh), under the guard's prefix
    line = voice.line("await", f"drained {awaited} background dispatch(es); "
                      f"{with_findings} with findings, {clean} clean"
                      + (f", {failed} failed" if failed else "") + ".")
    return Report(line, notes.bounded(line), 0 if failed == 0 and not kept and status_ok
                  else 1)


def no_manifest(round_dir: Dir, notes: Notes) -> Report:
    """No manifest: no dispatches were registered. The empty summary, and ``.dispatch/``
    removed unless it holds a raw capture (then kept, and said)."""
    _write(round_dir, COMPLETE, _NO_MANIFEST)
    try:
        with round_dir.subdir(DISPATCH) as d:
            kept = [n for n in d.listdir() if n.endswith(".raw")]
    except OSError:
        kept = []
    if kept:
        notes.add(f"{DISPATCH}/ kept: it holds {len(kept)} raw capture(s) but there is no "
                  f"{MANIFEST} naming them")
    else:
        _remove_dispatch(round_dir, notes)
    write_round_status(round_dir.path, notes)
    line = "qrspi-guard await: no manifest; round complete (0 dispatches)."
    return Report(line, notes.bounded(line), 0)


def _write(round_dir: Dir, name: str, data: bytes, skip_if: bytes | None = None) -> None:
    """*data* into the round's *name*, old-or-new, relative to its descriptor; nothing
    is written when the file already holds it (*skip_if*, else read here): a rerun
    changes nothing."""
    from qrspi_guard.output.files import write_in
    from qrspi_guard.parse.reader import read_bytes

    if skip_if is None:
        current = read_bytes(name, dir_fd=round_dir.fd)
        skip_if = current if isinstance(current, bytes) else None
    if data == skip_if:
        return
    try:
        write_in(round_dir, name, data)
    except OSError as exc:
        raise DrainWriteError(f"cannot write {name} in {one_line(round_dir.path, 200)}: "
                              f"{exc.strerror or exc}; it is left as it was") from None


class DrainWriteError(GuardError):
    """A drain's output file cannot be written (the old one stands)."""

    exit_code = 1


def _remove_dispatch(round_dir: Dir, notes: Notes) -> None:
    try:
        st = round_dir.lstat(DISPATCH)
    except FileNotFoundError:
        return
    except OSError as exc:
        notes.add(f"{DISPATCH}/ could not be removed: {exc.strerror or exc}")
        return
    if not stat.S_ISDIR(st.st_mode):
        notes.add(f"{DISPATCH} is not a directory; left alone")
        return
    try:
        round_dir.remove_tree(DISPATCH)
    except OSError as exc:
        notes.add(f"{DISPATCH}/ could not be removed: {exc.strerror or exc}")


def write_round_status(round_dir: str, notes: Notes) -> bool:
    """Rewrite the round's status file as ``check --write-status`` does, for a round of a
    run's layout (``reviews/<step>/round-NN/``); any other directory gets none. False
    when it could not be written (said in *notes*)."""
    from qrspi_guard.engine.discover import round_of_dir

    ref = round_of_dir(round_dir)
    if ref is None or ref.artifact_dir is None or not ref.has_status_file:
        return True
    try:
        from qrspi_guard.judge import Judge
        from qrspi_guard.output.status import write_status

        result = Judge.for_path(round_dir).round(round_dir)
        if result is not None:
            write_status(result)
    except (GuardError, OSError) as exc:
        notes.add(f"the round's status file could not be written: {one_line(str(exc), 160)}")
        return False
    return True
