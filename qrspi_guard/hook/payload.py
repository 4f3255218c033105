"""What the agent runtime sent: the payload, its runtime, its event and the tool call.

The runtimes (:mod:`qrspi_guard.hook.runtimes`: Claude Code, Gemini CLI) speak one
hook protocol in dialects: a JSON object on stdin with ``hook_event_name``,
``tool_name``, ``tool_input`` and ``cwd``; exit 2 blocks with stderr as the reason.
They differ in the event names (``PreToolUse`` / ``PostToolUse`` against
``BeforeTool`` / ``AfterTool``), the tool names and the JSON answer; each runtime's
module says its own, and this one reads them all from the registry.

The payload is read under the rules of every JSON the guard reads
(:mod:`qrspi_guard.parse.jsondoc`). One those rules refuse (``NaN``, a key twice in one
object, nesting past :data:`PAYLOAD_DEPTH`) is :class:`Refused`: the guard cannot be
sure it reads what the runtime read (which of two ``file_path`` keys, say), so it judges
nothing in it; :func:`refusal` then blocks the call when it names a ``reviews`` tree (it
may be a write into a round: never silently let through) and allows it in silence
otherwise (it writes no round: never blocked). No runtime writes such a payload (they
serialise with ``JSON.stringify``, which writes none of these) except a tool's own
input or output nested deeper than the bound.

This module is on the path of every call, the no-op included, so it imports only
``os``, ``sys``, the runtimes (which import nothing) and the JSON reader (``json`` and
``re``).
"""

from __future__ import annotations

import os
import sys

from qrspi_guard.hook.runtimes import (
    ALL,
    BY_NAME,
    EDIT,
    EVENTS,
    MULTI_EDIT,
    NOTEBOOK,
    REPLACE,
    SHELL,
    WRITE,
)
from qrspi_guard.hook.runtimes import NAMES as RUNTIMES
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.capped import STREAM_CAP, read_stream

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, BinaryIO

#: hook_event_name -> (runtime, event), of every runtime
EVENT_NAMES: dict[str, tuple[str, str]] = {
    rt.events[ev]: (rt.name, ev) for rt in ALL for ev in EVENTS}
#: kinds judged before the call: the whole new file, or an edit applied in memory; and a
#: shell command, whose named rounds' state is recorded (never judged) before it runs
PRE_KINDS = frozenset({WRITE, EDIT, MULTI_EDIT, REPLACE, SHELL})
#: kinds judged after the call: the file as it now is on disk, or the rounds a command names
POST_KINDS = frozenset({WRITE, EDIT, MULTI_EDIT, REPLACE, NOTEBOOK, SHELL})

#: stdin larger than this is the hook's own failure (a finding is at most 1 MiB; JSON
#: escaping can make its payload up to six times larger): the one stream cap
STDIN_CAP = STREAM_CAP


#: the deepest nesting a payload is read to: a tool's own input and output ride in it
#: (an MCP tool's, as deep as its author made it), so the bound is wider than any file
#: the guard reads needs, and still far within the parser's recursion
PAYLOAD_DEPTH = 512


class HookFailure(Exception):
    """The hook itself cannot work (bad payload, unreadable file): never the agent's fault."""


class Refused(HookFailure):
    """The payload is JSON the guard does not read (:mod:`qrspi_guard.parse.jsondoc`'s
    rules): ``str()`` says which rule, :attr:`text` is the payload (for :func:`refusal`)."""

    def __init__(self, why: str, text: str) -> None:
        super().__init__(why)
        self.text = text


def _repr(value: object, limit: int = 60) -> str:
    from qrspi_guard.textsafe import one_line

    return one_line(repr(value), limit)


def json_type(value: object) -> str:
    """A JSON value's type, as a payload's author would say it."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    names: dict[type, str] = {list: "a list", dict: "an object", str: "a string"}
    return names.get(type(value), "null")


def mistyped(where: str, key: str, value: object, wanted: str = "a string") -> str:
    """The one line for a missing or mistyped field."""
    if value is None:
        return f"{where} has no {key}"
    return f"{where} {key} is {json_type(value)}, not {wanted}"


def read_stdin(stream: BinaryIO | None = None) -> bytes:
    """The payload's bytes, at most :data:`STDIN_CAP`, or :class:`HookFailure`."""
    if stream is None:
        if sys.stdin is None:
            raise HookFailure("no stdin")
        stream = sys.stdin.buffer
    try:
        if stream.isatty():  # a person typed `qrspi-guard hook`: never wait on them
            raise HookFailure("stdin is a terminal; the hook reads a tool-use payload "
                              "(JSON) from the agent runtime (see `qrspi-guard hook --help`)")
        data = read_stream(stream, STDIN_CAP)
    except (OSError, ValueError) as exc:
        raise HookFailure(f"cannot read stdin: {exc}") from None
    if data is None:
        raise HookFailure(f"stdin is larger than {STDIN_CAP >> 20} MiB")
    return data


def load_payload(raw: bytes | str) -> dict[str, Any]:
    """The JSON object on stdin: :class:`HookFailure` when it is not JSON (or not an
    object), :class:`Refused` when it is JSON the guard's rules refuse."""
    try:
        payload = jsondoc.loads(raw, max_depth=PAYLOAD_DEPTH)
    except jsondoc.JsonError as exc:
        from qrspi_guard.textsafe import one_line

        if exc.syntax:
            raise HookFailure(f"stdin is not JSON ({one_line(exc.reason, 120)})") from None
        text = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        raise Refused(one_line(str(exc), 120), text) from None
    if not isinstance(payload, dict):
        raise HookFailure("stdin is JSON but not an object")
    return payload


def _named(payload: dict[str, Any]) -> tuple[str, str] | None:
    named = payload.get("hook_event_name")
    return EVENT_NAMES.get(named) if isinstance(named, str) else None


def event_of(payload: dict[str, Any], event: str | None = None) -> str:
    """`pre` or `post`: the command line's ``--event`` wins over ``hook_event_name``."""
    if event in EVENTS:
        return event
    named = _named(payload)
    if named is not None:
        return named[1]
    raise HookFailure(f"cannot tell a pre-write from a post-edit call (hook_event_name "
                      f"{_repr(payload.get('hook_event_name'))}); pass --event pre or "
                      "--event post")


def runtime_of(payload: dict[str, Any], runtime: str | None = None) -> str | None:
    """The runtime's name (``claude``, ``gemini``): ``--runtime`` wins, then the event's
    name, then the tool's name (the first runtime, in the registry's order, that has a
    tool of that name). None when none of them tells."""
    if runtime in RUNTIMES:
        return runtime
    named = _named(payload)
    if named is not None:
        return named[0]
    tool = payload.get("tool_name")
    if isinstance(tool, str):
        for rt in ALL:
            if tool in rt.tools:
                return rt.name
    return None


class Call:
    """One tool call, resolved: who sent it, when, and what the tool does to a file."""

    __slots__ = ("runtime", "event", "tool", "kind", "key", "tool_input", "cwd", "cwd_given",
                 "session", "use_id")

    def __init__(self, runtime: str, event: str, tool: str, kind: str | None, key: str,
                 tool_input: dict[str, Any], cwd: str | None,
                 cwd_given: object = None, session: str = "",
                 use_id: str | None = None) -> None:
        self.runtime = runtime
        self.event = event
        self.tool = tool
        self.kind = kind  #: None: a tool this hook does not judge at this event
        self.key = key  #: the tool_input key naming the file (or the shell command)
        self.tool_input = tool_input
        self.cwd = cwd
        self.cwd_given = cwd_given  #: the payload's own ``cwd`` value, before checking
        self.session = session  #: the payload's ``session_id`` ("" when it has none)
        self.use_id = use_id  #: the payload's ``tool_use_id`` (Claude Code's), if any

    def pairing(self) -> tuple[str, str]:
        """(the session, the call) that a pre-tool-use call and the post-tool-use call
        of the same tool call share: the runtime's tool-use id where the payload has
        one (Claude Code's ``tool_use_id``), else the call itself (Gemini CLI sends no
        id): its tool, its command and directory, and its ``cwd``."""
        session = f"{self.runtime}\0{self.session}"
        if self.use_id is not None:
            return session, f"id\0{self.use_id}"
        shown = [self.tool, str(self.cwd_given)] + [
            jsondoc.dumps(self.tool_input.get(k)) for k in _place_keys()]
        return session, "call\0" + "\0".join(shown)

    def text(self, key: str, required: bool = True) -> str | None:
        """``tool_input[key]`` as a string; a missing or mistyped one is a failure."""
        value = self.tool_input.get(key)
        if isinstance(value, str):
            return value
        if value is None and not required:
            return None
        from qrspi_guard.textsafe import one_line

        raise HookFailure(mistyped(f"{one_line(self.tool, 40)} tool_input", key, value))

    def file_path(self) -> str:
        path = self.tool_input.get(self.key)
        if not isinstance(path, str) or not path or "\x00" in path:
            from qrspi_guard.textsafe import one_line

            raise HookFailure(f"{one_line(self.tool, 40)} tool_input has no usable "
                              f"{self.key}")
        return path


def resolve(payload: dict[str, Any], event: str | None = None,
            runtime: str | None = None) -> Call:
    """The call a payload describes, or :class:`HookFailure` when its tool, event or
    runtime cannot be told. ``kind`` is None for a tool this hook does not judge."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str):
        raise HookFailure("payload has no tool_name")
    ev = event_of(payload, event)
    rt = runtime_of(payload, runtime)
    if rt is None:
        raise HookFailure(f"cannot tell the agent runtime (hook_event_name "
                          f"{_repr(payload.get('hook_event_name'))}, tool_name "
                          f"{_repr(tool)}); pass "
                          + " or ".join(f"--runtime {name}" for name in RUNTIMES))
    given = payload.get("cwd")
    cwd = given if isinstance(given, str) and given and "\x00" not in given else None
    kind, key = BY_NAME[rt].tools.get(tool, (None, ""))
    if kind is not None and kind not in (PRE_KINDS if ev == "pre" else POST_KINDS):
        kind = None
    tool_input = payload.get("tool_input")
    if kind is not None and not isinstance(tool_input, dict):
        from qrspi_guard.textsafe import one_line

        raise HookFailure(f"{one_line(tool, 40)} payload has no tool_input object")
    return Call(rt, ev, tool, kind, key, tool_input if isinstance(tool_input, dict) else {},
                cwd, given, _short(payload.get("session_id")) or "",
                _short(payload.get("tool_use_id")))


#: an id longer than this is not an id (the payload's own keys pair the hook's calls)
MAX_ID = 1024


def _short(value: object) -> str | None:
    """A payload's id: a non-empty string of at most :data:`MAX_ID` characters."""
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID else None


def _place_keys() -> tuple[str, ...]:
    """The tool_input fields the hook uses as a place on disk or a command line: every
    runtime's file and command keys, then its directory key."""
    keys = [key for rt in ALL for _, key in rt.tools.values()]
    keys += [rt.directory_key for rt in ALL if rt.directory_key]
    return tuple(dict.fromkeys(keys))


def _surrogate(text: str) -> bool:
    """*text* holds a UTF-16 surrogate: JSON's ``\\ud800`` escapes decode to one, and it
    can name no file (it cannot be encoded as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _names_reviews(text: str) -> bool:
    """*text* names a ``reviews`` directory as a path segment: the word, with no
    letter, digit, ``_``, ``-`` or ``.`` either side (cheap, generous: the plugin's
    launcher's test too)."""
    from qrspi_guard.hook.where import REVIEWS

    at = text.find(REVIEWS)
    while at != -1:
        before = text[at - 1] if at else "/"
        after = text[at + len(REVIEWS):at + len(REVIEWS) + 1] or "/"
        if not any(c.isalnum() or c in "_-." for c in (before, after)):
            return True
        at = text.find(REVIEWS, at + 1)
    return False


def unusable_place(call: Call) -> str | None:
    """Whether a judged tool call's place can be used at all. A field naming where it
    writes (``cwd``, the file, the command, a runtime's directory key) that holds a
    surrogate cannot be resolved, opened or judged: the one line that blocks the call
    when it names a ``reviews`` tree, or ``""`` (allow, say nothing: not the guard's
    business) when it does not. None when every such field is usable."""
    fields = [("cwd", call.cwd_given)] + [(f"tool_input.{k}", call.tool_input.get(k))
                                          for k in _place_keys()]
    texts = [(name, v) for name, v in fields if isinstance(v, str)]
    bad = next((name for name, v in texts if _surrogate(v)), None)
    if bad is None:
        return None
    if not any(_names_reviews(v) for _, v in texts):
        return ""
    return (f"qrspi-guard refused this tool call: {bad} holds a character that cannot be "
            "encoded (a lone UTF-16 surrogate), so the guard cannot tell which review round "
            "file it touches; name the file in valid UTF-8 text\n")


#: a JSON escape in a payload's text: ``\\uXXXX``, or one character
_ESCAPE = r"\\(?:u([0-9a-fA-F]{4})|(.))"


def refusal(refused: Refused) -> str:
    """The answer to a payload the JSON rules refuse (:class:`Refused`): the one line
    that blocks the call when its text, JSON escapes read, names a ``reviews`` tree
    anywhere (the guard cannot tell which round file it touches, if any), else ``""``:
    allow, and say nothing (it names no round; ``check`` and ``watch`` still judge a
    round written through a link named otherwise, as they judge every file)."""
    import re

    text = re.sub(_ESCAPE, lambda m: chr(int(m.group(1), 16)) if m.group(1) else (
        "/" if m.group(2) == "/" else " "), refused.text, flags=re.S)
    if not _names_reviews(text):
        return ""
    return (f"qrspi-guard refused this tool call: its payload is not JSON the guard reads "
            f"({refused}), and it names a reviews directory, so the guard cannot tell which "
            "review round file it touches; the agent runtime sent a malformed payload\n")


def base_dir(call: Call) -> str:
    """Where a shell command's relative paths start: the runtime's directory key (Gemini
    CLI's ``directory``, itself relative to ``cwd``) when given, else the payload's
    ``cwd``, else ours."""
    base = call.cwd or os.getcwd()
    key = BY_NAME[call.runtime].directory_key
    directory = call.tool_input.get(key) if key else None
    if isinstance(directory, str) and directory and "\x00" not in directory:
        base = os.path.join(base, directory)
    return base
