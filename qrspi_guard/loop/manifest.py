"""``.dispatch-manifest.json`` for ``await`` (loop.md): read under the one set of JSON
rules, its entries checked, and merged back with what is on disk just before the drain
writes it.

- :func:`read_manifest`: a JSON array, or a :class:`ManifestError` that leaves the file
  as it was: not JSON, not an array, ``NaN``/``Infinity``, a number no double carries,
  a duplicate key, nesting past the bound (:mod:`qrspi_guard.parse.jsondoc`), and a NUL
  byte in a command (no command line can carry one).
- :func:`entries_of`: each item as an :class:`Entry`, a tag off the grammar refused
  before any name or glob is built from it.
- :func:`merge_back`: the manifest to write. Other processes write the manifest too
  (upstream's ``dispatch-agent.sh`` adds entries without any lock), so the drain re-reads
  it under the round lock just before it writes and keeps every item it did not read
  exactly as it is on disk; only the items it read, still there unchanged, get the
  statuses it settled.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from qrspi_guard.contract.layout import TAG_RE
from qrspi_guard.errors import InputError
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.frontmatter import MAX_BYTES
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

MANIFEST = ".dispatch-manifest.json"
#: an entry's commands, in the order they run
COMMANDS = ("await_cmd", "split_cmd")


class ManifestError(InputError):
    """``.dispatch-manifest.json`` is not a readable JSON array; it is left as it was."""

    exit_code = 1


@record
class Entry:
    """One manifest item: its object (None: not one), its tag if it passed the grammar,
    whether its commands run, and why it failed in this run."""

    index: int
    data: dict[str, Any] | None
    tag: str | None
    run: bool
    failure: str | None = None
    #: the failure is a split_cmd's after a complete capture: the fallback may rescue it
    rescuable: bool = False


@record(frozen=True)
class Manifest:
    """The manifest as read: its items, its bytes, and each item's identity then (the
    items themselves are settled in place; :func:`merge_back` compares identities)."""

    items: list[Any]
    data: bytes
    keys: tuple[str, ...]


def read_manifest(round_dir: Dir) -> Manifest | None:
    """The manifest in the open round; None when there is none. Raises
    :class:`ManifestError` (the file untouched) for anything but a usable JSON array."""
    if not round_dir.exists(MANIFEST):
        return None
    data = read_bytes(MANIFEST, dir_fd=round_dir.fd)  # no link, never a FIFO's wait
    if isinstance(data, ReadFailure):
        raise ManifestError(f"{MANIFEST} {data.message}; left as it was")
    if len(data) > MAX_BYTES:
        raise ManifestError(f"{MANIFEST} is larger than {MAX_BYTES // (1024 * 1024)} MiB, "
                            "which no dispatch manifest is; left as it was")
    try:  # NaN, 1e400, a duplicate key, deep nesting: named, never written back
        value = jsondoc.loads(data)
    except jsondoc.JsonError as exc:
        raise ManifestError(f"{MANIFEST}: {exc}; left as it was") from None
    if not isinstance(value, list):
        kind = {dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
        got = kind.get(type(value), "a number")
        raise ManifestError(f"{MANIFEST} must be a JSON array of entries, not {got}; "
                            "left as it was")
    for index, item in enumerate(value, start=1):
        for kind_ in COMMANDS:
            text = item.get(kind_) if isinstance(item, dict) else None
            if isinstance(text, str) and "\0" in text:
                raise ManifestError(f"{MANIFEST}: entry {index}'s {kind_} holds a NUL byte, "
                                    "which no command line can carry; left as it was")
    return Manifest(value, data, tuple(_key(item) for item in value))


def shown_tag(tag: object) -> str:
    """A tag from the manifest for a message: escaped, short, quoted."""
    return repr(one_line(tag, 40)) if isinstance(tag, str) else f"of type {type(tag).__name__}"


def entries_of(items: list[Any], refused: list[str]) -> list[Entry]:
    """Each manifest item as an :class:`Entry`; a tag off the grammar is refused here,
    before any name or glob is built from it (a line for each in *refused*)."""
    out = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            refused.append(f"entry {index} is not a JSON object; refused")
            out.append(Entry(index, None, None, False, "not a JSON object"))
            continue
        tag = item.get("tag")
        if not (isinstance(tag, str) and TAG_RE.fullmatch(tag)):
            why = "has no tag" if tag is None else \
                f"tag {shown_tag(tag)} does not match the tag grammar ^[a-z0-9][a-z0-9-]*$"
            refused.append(f"entry {index} {why}; refused, marked failed")
            out.append(Entry(index, item, None, False, "tag refused"))
            continue
        run = item.get("mode") == "background" and item.get("status") == "pending"
        out.append(Entry(index, item, tag, run))
    return out


def merge_back(read: Manifest, now: Manifest | None) -> tuple[list[Any], int]:
    """The manifest to write: *now* (on disk just before the write; None: removed
    meanwhile, so the drain's own items) with each item the drain read, still there
    unchanged, replaced by its settled form (``read.items``), in the order of *now*;
    every other item of *now* (added or changed since the read) as it is on disk.
    Returns (the items, how many were kept as on disk)."""
    if now is None:
        return list(read.items), 0
    unsettled: defaultdict[str, deque[int]] = defaultdict(deque)
    for i, key in enumerate(read.keys):
        unsettled[key].append(i)
    out: list[Any] = []
    kept = 0
    for item, key in zip(now.items, now.keys, strict=True):
        mine = unsettled.get(key)
        if mine:
            out.append(read.items[mine.popleft()])
        else:
            out.append(item)
            kept += 1
    return out, kept


def _key(item: Any) -> str:
    """An item's identity: its JSON with keys in order."""
    return jsondoc.dumps(item, sort_keys=True)
