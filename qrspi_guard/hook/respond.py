"""How a decision is said to the runtime: the exit-2 form, or one JSON object.

- ``text`` (the default, which both runtimes understand): exit 0 allows; exit 2 blocks
  and stderr is the reason shown to the agent.
- ``json``: exit 0 always; stdout is one JSON object or nothing. Allowing prints
  nothing at all: an explicit ``allow`` would skip the runtime's own permission prompt.

  ====================  =====================================================================
  Claude Code, pre      ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
                        "permissionDecision": "deny", "permissionDecisionReason": R}}``
  Claude Code, post     ``{"decision": "block", "reason": R, "hookSpecificOutput":
                        {"hookEventName": "PostToolUse", "additionalContext": R}}``
  Gemini CLI, pre       ``{"decision": "deny", "reason": R}``
  Gemini CLI, post      ``{"decision": "block", "reason": R}``
  ====================  =====================================================================

  R is exactly the text the exit-2 form prints on stderr.

The hook's own failures are one line on stderr and exit 0, or, under ``--fail-closed``,
a block: exit 2 in the text form, the deny or block object in the JSON form (and exit
2 when the runtime or the event cannot be told, which both runtimes read as a block).
"""

from __future__ import annotations

import json

from qrspi_guard.hook.payload import CLAUDE, NAME_OF

PROG = "qrspi-guard hook"
FORMATS = ("text", "json")


class Answer:
    """What the hook prints and how it exits."""

    __slots__ = ("stdout", "stderr", "code", "reason")

    def __init__(self, stdout: str = "", stderr: str = "", code: int = 0,
                 reason: str = "") -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.code = code
        self.reason = reason  #: a JSON block's reason, for when stdout cannot take it

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Answer) and (self.stdout, self.stderr, self.code) == (
            other.stdout, other.stderr, other.code)

    def __repr__(self) -> str:
        return f"Answer({self.stdout!r}, {self.stderr!r}, {self.code})"


def block_object(reason: str, runtime: str, event: str) -> dict[str, object]:
    """The runtime's JSON form of "do not" for *event* ("pre" or "post")."""
    if runtime == CLAUDE:
        name = NAME_OF[(runtime, event)]
        if event == "pre":
            return {"hookSpecificOutput": {"hookEventName": name,
                                           "permissionDecision": "deny",
                                           "permissionDecisionReason": reason}}
        return {"decision": "block", "reason": reason,
                "hookSpecificOutput": {"hookEventName": name, "additionalContext": reason}}
    return {"decision": "deny" if event == "pre" else "block", "reason": reason}


def answer(blocks: bool, message: str, output_format: str, runtime: str | None,
           event: str | None) -> Answer:
    """The answer to a decision: nothing when it allows, else *message* as the reason."""
    if not blocks:
        return Answer()
    if output_format == "json" and runtime is not None and event is not None:
        return Answer(json.dumps(block_object(message, runtime, event)) + "\n",
                      reason=message)
    return Answer(stderr=message, code=2)


def failure(reason: str, fail_closed: bool, output_format: str, runtime: str | None,
            event: str | None) -> Answer:
    """The answer to the hook's own failure: one line, and a block only when closed."""
    from qrspi_guard.textsafe import one_line

    what = "blocking the tool call (--fail-closed)" if fail_closed else "allowing the tool call"
    line = f"{PROG}: {one_line(reason, 300)}; {what}\n"
    if not fail_closed:
        return Answer(stderr=line)
    if output_format == "json" and runtime is not None and event is not None:
        return Answer(json.dumps(block_object(line, runtime, event)) + "\n", line,
                      reason=line)
    return Answer(stderr=line, code=2)
