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

The extension (``integrations/gemini-cli/``): Gemini CLI keeps an installed one in
``extensions/qrspi-guard/`` under its home (:func:`home_dir`), with its
``gemini-extension.json``; installed is enabled.
"""

from __future__ import annotations

from qrspi_guard.hook.runtimes import EVENTS, REPLACE, SHELL, WRITE, Integration, Runtime

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping
    from typing import Any

    from qrspi_guard.hook.integrations import Presence

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


#: the file naming the extension's version, in its directory
MANIFEST = "gemini-extension.json"


def home_dir(env: Mapping[str, str], home: str) -> str:
    """Gemini CLI's own directory: ``.gemini`` under ``$GEMINI_CLI_HOME``, else *home*."""
    import os

    return os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini")


def extension(env: Mapping[str, str], home: str, project: str | None) -> Presence:
    """The extension as Gemini CLI keeps it (see the module docstring)."""
    import os

    from qrspi_guard.hook.integrations import NAME, Presence, load_record

    where = os.path.join(home_dir(env, home), "extensions", NAME)
    doc, why = load_record(os.path.join(where, MANIFEST))
    if why is not None:
        return Presence("gemini", False, unreadable=why)
    if not isinstance(doc, dict):
        return Presence("gemini", False)
    version = doc.get("version")
    return Presence("gemini", True, version if isinstance(version, str) else None, where, True)


RUNTIME = Runtime(
    name="gemini", display="Gemini CLI", directory=".gemini",
    events={"pre": "BeforeTool", "post": "AfterTool"},
    tools={"write_file": (WRITE, "file_path"), "replace": (REPLACE, "file_path"),
           "run_shell_command": (SHELL, "command")},
    block=block, matchers={"pre": MATCHER, "post": MATCHER}, hook_entry=hook_entry,
    directory_key="directory", warnings=warnings, place_warnings=place_warnings,
    integration=Integration(kind="extension", source="integrations/gemini-cli",
                            manifest=MANIFEST, presence=extension),
)
