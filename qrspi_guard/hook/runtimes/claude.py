"""Claude Code: ``.claude/settings.json``, ``PreToolUse`` / ``PostToolUse``.

Tools: ``Write`` (``file_path``, ``content``), ``Edit`` (``old_string``,
``new_string``, ``replace_all``), ``MultiEdit`` (``edits[]``), ``NotebookEdit``
(``notebook_path``) and ``Bash`` (``command``).

Its JSON answers (R is exactly the text the exit-2 form prints on stderr):

- pre: ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
  "permissionDecision": "deny", "permissionDecisionReason": R}}``
- post: ``{"decision": "block", "reason": R}``. Claude Code hands the agent both
  ``reason`` and ``hookSpecificOutput.additionalContext``, one after the other, so the
  verdict is said in ``reason`` alone (issue 31: it reached the agent twice).
"""

from __future__ import annotations

from qrspi_guard.hook.runtimes import EDIT, MULTI_EDIT, NOTEBOOK, SHELL, WRITE, Runtime

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

EVENT_NAMES = {"pre": "PreToolUse", "post": "PostToolUse"}
#: the tools install hooks (NotebookEdit is judged too, after the call, when a matcher
#: of the user's own sends it)
MATCHER = "Write|Edit|MultiEdit|Bash"


def block(reason: str, event: str) -> dict[str, object]:
    name = EVENT_NAMES[event]
    if event == "pre":
        return {"hookSpecificOutput": {"hookEventName": name,
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}
    return {"decision": "block", "reason": reason}


def hook_entry(event: str, command: str) -> dict[str, Any]:
    return {"type": "command", "command": command}


RUNTIME = Runtime(
    name="claude", display="Claude Code", directory=".claude", events=EVENT_NAMES,
    tools={"Write": (WRITE, "file_path"), "Edit": (EDIT, "file_path"),
           "MultiEdit": (MULTI_EDIT, "file_path"),
           "NotebookEdit": (NOTEBOOK, "notebook_path"), "Bash": (SHELL, "command")},
    block=block, matchers={"pre": MATCHER, "post": MATCHER}, hook_entry=hook_entry,
)
