"""The agent hook: one tool-use payload in, one decision out (issues 8 and 14).

Modules, each with one reason to change:

- :mod:`~qrspi_guard.hook.runtimes`: the agent runtimes (Claude Code, Gemini CLI), one
  module each: event names, tools, JSON answers, settings; listed once in its registry;
- :mod:`~qrspi_guard.hook.payload`: a payload's runtime, event and tool call, stdin;
- :mod:`~qrspi_guard.hook.where`: the round a path lands in, the rounds a command names;
- :mod:`~qrspi_guard.hook.edits`: an Edit, MultiEdit or replace applied in memory;
- :mod:`~qrspi_guard.hook.judging`: the judgement (:func:`decide`, :func:`judge`);
- :mod:`~qrspi_guard.hook.shell`: a shell call: the state before, what changed after,
  whom it blames; :mod:`~qrspi_guard.hook.shellwrites`: what a command line writes and
  names, read with bash's grammar (:mod:`~qrspi_guard.hook.bash`);
  :mod:`~qrspi_guard.hook.shellstate`: the state of the rounds a call can reach;
  :mod:`~qrspi_guard.hook.callstore`: where a pre call's record waits for its post call;
- :mod:`~qrspi_guard.hook.private`: the hook's private directories (the call records,
  the notices told), found and pruned one way;
- :mod:`~qrspi_guard.hook.message`: what the agent is shown;
- :mod:`~qrspi_guard.hook.respond`: the exit-2 form and the runtimes' JSON forms;
- :mod:`~qrspi_guard.hook.run`: the process (argv, stdin, exit code), click-free;
  :mod:`~qrspi_guard.hook.told`: what the user is told once (an option it cannot use);
- :mod:`~qrspi_guard.hook.install`: ``hook install`` / ``hook uninstall``;
  :mod:`~qrspi_guard.hook.trust`: Gemini CLI's folder trust, for its warning;
- :mod:`~qrspi_guard.hook.integrations`: the plugin and the extension, and whether a
  runtime has them (each runtime's module says where it keeps them);
- :mod:`~qrspi_guard.hook.jsonfile`: the runtimes' own JSON files, read one way.

Names are imported lazily, so importing this package costs nothing: the hook runs on
every matching tool call an agent makes.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

_EXPORTS = {
    "HookFailure": "payload", "load_payload": "payload", "event_of": "payload",
    "runtime_of": "payload", "resolve": "payload", "Call": "payload",
    "Target": "where", "locate": "where", "rounds_named": "where",
    "Decision": "judging", "decide": "judging", "judge": "judging", "judge_round": "judging",
    "layout_diagnostics": "judging", "TAG_CAUSES": "judging",
    "render": "message", "render_rounds": "message",
    "answer": "respond", "failure": "respond", "block_object": "respond",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
