"""What the hook tells the user once: an option it could not use (issue 30).

The hook is never silently off. An option or setting it cannot use (``--evnt pre``, a
``--settings`` file that does not parse) is left out and the call judged with the
defaults; the hook says so once per agent session through the runtime's user-visible
channel, and every refusal it makes meanwhile names the option.

The user-visible channel: both runtimes show a hook's ``systemMessage`` to the user
and not to the model (Claude Code as a notice line, Gemini CLI as "Hook system
message: ..."), and neither shows a successful hook's stderr. So an allowed call says
it in ``{"systemMessage": ...}`` on stdout, a JSON block carries it as its
``systemMessage``, and every refusal's reason starts with it.

Once: a marker file per (runtime, session, notice) in the hook's private directory
for them (:mod:`qrspi_guard.hook.private`: ``$XDG_RUNTIME_DIR/qrspi-guard-told/``, else
``qrspi-guard-told-<uid>/`` in the temporary directory; markers over a day old are
removed). Where no marker can be made, the hook tells every time: better repeated
than silent.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from qrspi_guard.hook.run import Answer

#: a marker older than this is removed (a session that long is told again)
STALE_SECONDS = 86400
#: at most this many markers are looked at for removal per call
PRUNE_BATCH = 64


def notice(problem: str) -> str:
    """The one line that says what the hook could not use, and what it does instead."""
    from qrspi_guard.textsafe import one_line

    return (f"qrspi-guard hook: cannot use {one_line(problem, 300)}; guarding with the "
            "defaults until the hook's command in the runtime's settings is fixed")


def first_time(payload: dict[str, Any] | None, runtime: str | None, what: str) -> bool:
    """True the first time *what* is told in the payload's session (and whenever that
    cannot be recorded)."""
    import hashlib

    session = ""
    if isinstance(payload, dict):
        for key in ("session_id", "transcript_path"):
            if isinstance(payload.get(key), str):
                session = payload[key]
                break
    key = "\0".join((runtime or "", session, what))
    name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    from qrspi_guard.hook.private import open_root, remove_older

    directory = open_root("told", create=True)
    if directory is None:
        return True
    try:
        remove_older(directory, STALE_SECONDS, PRUNE_BATCH)
        os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_NOFOLLOW", 0), 0o600, dir_fd=directory))
    except FileExistsError:
        return False
    except OSError:
        return True
    finally:
        os.close(directory)
    return True


def told(result: Answer, problem: str, tell: bool) -> Answer:
    """*result* saying, when *tell*, the notice for *problem* in the user-visible
    ``systemMessage``: on stdout for an allowed call, in the JSON block for a refused
    one. (The exit-2 form has no such field: its reason already starts with the
    notice, :func:`headed`.)"""
    from qrspi_guard.hook.run import Answer
    from qrspi_guard.parse import jsondoc

    if not tell or result.code == 2:
        return result
    obj: dict[str, Any] = jsondoc.loads(result.stdout) if result.stdout else {}
    obj["systemMessage"] = notice(problem)
    return Answer(jsondoc.dumps(obj) + "\n", result.stderr, result.code, result.reason)


def headed(message: str, problem: str | None) -> str:
    """A refusal's *message*, headed by the notice while there is a *problem*."""
    return message if problem is None else f"{notice(problem)}\n\n{message}"
