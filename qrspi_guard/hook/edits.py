"""Edits judged before they land: a tool's edit applied in memory, as the tool applies it.

- Claude Code ``Edit`` (``old_string``, ``new_string``, ``replace_all``) and
  ``MultiEdit`` (``edits[]``, applied in order, all or nothing): ``old_string`` must
  occur exactly once unless ``replace_all``; an empty ``old_string`` creates a file
  that does not exist (or is empty) with ``new_string``; ``old_string`` equal to
  ``new_string`` is refused. The file's line endings are kept: text is matched with
  CR LF read as LF and written back with CR LF.
- Gemini CLI ``replace`` (``old_string``, ``new_string``, ``expected_replacements``,
  default 1): every occurrence is replaced and their number must equal
  ``expected_replacements``; an empty ``old_string`` creates a file that does not
  exist; CR LF is read as LF and the file is written with LF.

When the model here says the edit would not apply (the text is missing, not unique,
the file is not UTF-8), the answer is None and the hook allows the call: the tool
either refuses it itself or applies it in a way only it knows (Claude Code retries
with curly quotes straightened, Gemini CLI may correct the strings), and the post
event judges what landed. Where the model is less strict than a tool (a check the
tool makes and this does not), the hook judges an edit the tool then refuses: harmless.
"""

from __future__ import annotations

from qrspi_guard.hook.payload import Call, HookFailure, mistyped
from qrspi_guard.hook.runtimes import EDIT, MULTI_EDIT, REPLACE

#: characters a file may grow to while edits are applied in memory
WORK_CAP = 8 << 20
#: edits of one MultiEdit call judged at most
MAX_EDITS = 256

Edit = tuple[str, str, "bool | int"]  #: (old, new, replace_all | expected_replacements)


def proposed(call: Call, source: str, shown: str) -> bytes | None:
    """The bytes *source* would hold after the call's edit, or None when the edit would
    not apply. Raises :class:`HookFailure` for a mistyped ``tool_input`` or a file that
    cannot be read (a directory, a FIFO, over :data:`WORK_CAP`)."""
    from qrspi_guard.parse.frontmatter import MAX_BYTES

    edits = edits_of(call)
    current = current_text(source, shown)
    if current is False:
        return None
    if call.kind == REPLACE:
        old, new, expected = edits[0]
        text = gemini_replace(current, old, new, int(expected))  # type: ignore[arg-type]
    else:
        text = claude_edits(current, edits)  # type: ignore[arg-type]
    if text is None:
        return None
    return text.encode("utf-8", "surrogatepass")[:MAX_BYTES + 1]


def edits_of(call: Call) -> list[Edit]:
    """The edits a call carries, checked for type."""
    if call.kind == MULTI_EDIT:
        raw = call.tool_input.get("edits")
        if not isinstance(raw, list) or not raw:
            raise HookFailure(mistyped(f"{call.tool} tool_input", "edits", raw or None,
                                       "a list of edits"))
        if len(raw) > MAX_EDITS:
            raise HookFailure(f"{call.tool} carries {len(raw)} edits; at most {MAX_EDITS} "
                              "are judged")
        out: list[Edit] = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise HookFailure(mistyped(call.tool, f"edit {i + 1}", item, "an object"))
            out.append((_text(item, "old_string", f"{call.tool} edit {i + 1}"),
                        _text(item, "new_string", f"{call.tool} edit {i + 1}"),
                        _flag(item, f"{call.tool} edit {i + 1}")))
        return out
    where = f"{call.tool} tool_input"
    old = _text(call.tool_input, "old_string", where)
    new = _text(call.tool_input, "new_string", where)
    if call.kind == EDIT:
        return [(old, new, _flag(call.tool_input, where))]
    assert call.kind == REPLACE
    expected = call.tool_input.get("expected_replacements")
    if expected is None:
        expected = 1
    elif isinstance(expected, float) and expected.is_integer():
        expected = int(expected)
    if not isinstance(expected, int) or isinstance(expected, bool):
        raise HookFailure(mistyped(where, "expected_replacements", expected, "a whole number"))
    return [(old, new, expected)]


def _text(obj: dict[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise HookFailure(mistyped(where, key, value))
    return value


def _flag(obj: dict[str, object], where: str) -> bool:
    value = obj.get("replace_all")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise HookFailure(mistyped(where, "replace_all", value, "true or false"))
    return value


def current_text(source: str, shown: str) -> str | None | bool:
    """The file's text now: None when it does not exist, False when it is not UTF-8
    (the edit cannot be modelled), else the text."""
    from qrspi_guard.parse.capped import Refused, read_regular
    from qrspi_guard.textsafe import one_line

    try:
        data, _ = read_regular(source, WORK_CAP)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HookFailure(f"cannot read {one_line(shown, 200)}: {exc.strerror or exc}") \
            from None
    except Refused as exc:
        if exc.too_large:
            raise HookFailure(f"{one_line(shown, 200)} is larger than {WORK_CAP >> 20} MiB; "
                              "an edit of it is not applied in memory") from None
        if exc.is_dir:
            raise HookFailure(f"{one_line(shown, 200)} is a directory") from None
        raise HookFailure(f"{one_line(shown, 200)} is not a regular file") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return False


def claude_edits(current: str | None, edits: list[tuple[str, str, bool]]) -> str | None:
    """Claude Code's Edit / MultiEdit on *current* (None: no such file), or None."""
    crlf = current is not None and "\r\n" in current
    text = current.replace("\r\n", "\n") if crlf and current is not None else current
    for i, (old, new, replace_all) in enumerate(edits):
        if text is None or (old == "" and not text.strip()):
            if old != "":
                return None  # editing a file that does not exist
            text = new  # creating the file (or filling an empty one)
            continue
        if old == "" or old == new:
            return None
        count = text.count(old)
        if count == 0 or (count > 1 and not replace_all):
            return None
        text = _replace(text, old, new, count, last=i == len(edits) - 1)
    if crlf and text is not None:
        text = text.replace("\n", "\r\n")
    return text


def gemini_replace(current: str | None, old: str, new: str, expected: int) -> str | None:
    """Gemini CLI's replace on *current* (None: no such file), or None."""
    if current is None:
        return new if old == "" else None
    if old == "" or old == new:
        return None
    text = current.replace("\r\n", "\n")
    count = text.count(old)
    if count == 0 or count != expected:
        return None
    result = _replace(text, old, new, count, last=True)
    return None if result == text else result


def _replace(text: str, old: str, new: str, count: int, last: bool) -> str:
    """*text* with the first *count* occurrences of *old* replaced, built only up to
    what the rules read when it would grow past :data:`WORK_CAP`."""
    if len(text) + count * (len(new) - len(old)) <= WORK_CAP:
        return text.replace(old, new, count)
    if not last:
        raise HookFailure(f"the edits would grow the file past {WORK_CAP >> 20} MiB in "
                          "memory; not judged")
    from qrspi_guard.parse.frontmatter import MAX_BYTES

    cap = MAX_BYTES + 1  # a prefix this long is already `file_too_large`
    out: list[str] = []
    size = pos = done = 0
    while size < cap and done < count:
        j = text.find(old, pos)
        if j < 0:
            break
        out.append(text[pos:j])
        out.append(new[:cap])
        size += j - pos + min(len(new), cap)
        pos = j + len(old)
        done += 1
    out.append(text[pos:pos + cap])
    return "".join(out)[:cap]
