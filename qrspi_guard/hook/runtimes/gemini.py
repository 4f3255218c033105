"""Gemini CLI: ``.gemini/settings.json``, ``BeforeTool`` / ``AfterTool``.

Tools: ``write_file`` (``file_path``, ``content``), ``replace`` (``file_path``,
``old_string``, ``new_string``, ``expected_replacements``) and ``run_shell_command``
(``command``, and ``directory``, relative to the project, where it runs).

Its JSON answers (R is exactly the text the exit-2 form prints on stderr): pre
``{"decision": "deny", "reason": R}``, post ``{"decision": "block", "reason": R}`` (the
reason replaces the tool's result).

A hook entry also carries a ``name`` and a ``timeout`` in milliseconds (default
60000); a name listed in ``hooks.disabled`` is not run, so install warns of it. A
project's settings are read only in a folder Gemini CLI trusts, so a project-scope
install warns in one it does not (:mod:`~qrspi_guard.hook.trust`).
"""

from __future__ import annotations

from qrspi_guard.hook.runtimes import EVENTS, REPLACE, SHELL, WRITE, Runtime

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

#: a hook's timeout, milliseconds
TIMEOUT_MS = 10000
MATCHER = "write_file|replace|run_shell_command"


def block(reason: str, event: str) -> dict[str, object]:
    return {"decision": "deny" if event == "pre" else "block", "reason": reason}


def hook_entry(event: str, command: str) -> dict[str, Any]:
    return {"name": f"qrspi-guard-{event}", "type": "command", "command": command,
            "timeout": TIMEOUT_MS, "description": "qrspi-guard: refuse a malformed QRSPI finding"}


def warnings(doc: dict[str, Any], shown: str) -> list[str]:
    """Our hooks that ``hooks.disabled`` switches off."""
    hooks = doc.get("hooks")
    disabled = hooks.get("disabled") if isinstance(hooks, dict) else None
    if not isinstance(disabled, list):
        return []
    ours = {hook_entry(e, "")["name"] for e in EVENTS}
    return [f"{name} is listed in hooks.disabled of {shown}, so Gemini CLI will not run it"
            for name in sorted(n for n in disabled if isinstance(n, str) and n in ours)]


def place_warnings(scope: str, base: str) -> list[str]:
    """A project-scope install in a folder Gemini CLI does not trust: not run."""
    from qrspi_guard.hook.trust import untrusted_warnings

    return untrusted_warnings(scope, base)


RUNTIME = Runtime(
    name="gemini", display="Gemini CLI", directory=".gemini",
    events={"pre": "BeforeTool", "post": "AfterTool"},
    tools={"write_file": (WRITE, "file_path"), "replace": (REPLACE, "file_path"),
           "run_shell_command": (SHELL, "command")},
    block=block, matchers={"pre": MATCHER, "post": MATCHER}, hook_entry=hook_entry,
    directory_key="directory", warnings=warnings, place_warnings=place_warnings,
)
