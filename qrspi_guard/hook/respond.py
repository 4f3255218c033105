"""How a decision is said to the runtime: the exit-2 form, or one JSON object.

- ``text`` (the default, which every runtime understands): exit 0 allows; exit 2 blocks
  and stderr is the reason shown to the agent.
- ``json``: exit 0 always; stdout is one JSON object or nothing. Allowing prints
  nothing at all: an explicit ``allow`` would skip the runtime's own permission prompt.
  A block is the runtime's own object (each runtime module under
  :mod:`qrspi_guard.hook.runtimes` gives it: deny before the call, block after it),
  whose reason is exactly the text the exit-2 form prints on stderr.

The hook's own failures are one line on stderr and exit 0, or, under ``--fail-closed``,
a block: exit 2 in the text form, the deny or block object in the JSON form (and exit
2 when the runtime or the event cannot be told, which every runtime reads as a block).
"""

from __future__ import annotations

from qrspi_guard.hook.run import Answer
from qrspi_guard.hook.runtimes import BY_NAME
from qrspi_guard.parse import jsondoc

PROG = "qrspi-guard hook"


def block_object(reason: str, runtime: str, event: str) -> dict[str, object]:
    """The runtime's JSON form of "do not" for *event* ("pre" or "post")."""
    return BY_NAME[runtime].block(reason, event)


def answer(blocks: bool, message: str, output_format: str, runtime: str | None,
           event: str | None) -> Answer:
    """The answer to a decision: nothing when it allows, else *message* as the reason."""
    if not blocks:
        return Answer()
    if output_format == "json" and runtime is not None and event is not None:
        return Answer(jsondoc.dumps(block_object(message, runtime, event)) + "\n",
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
        return Answer(jsondoc.dumps(block_object(line, runtime, event)) + "\n", line,
                      reason=line)
    return Answer(stderr=line, code=2)
