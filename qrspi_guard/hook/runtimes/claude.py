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

The plugin (``integrations/claude-code/``): Claude Code records it installed in
``plugins/installed_plugins.json`` under ``$CLAUDE_CONFIG_DIR`` (else ``~/.claude``), an
entry ``qrspi-guard@<marketplace>``; enabled unless a settings file (the user's, then
the project's ``.claude/settings.json`` and ``settings.local.json``: later files win)
sets it to false under ``enabledPlugins``. Its ``guard`` option, under
``pluginConfigs``, reaches the hook as ``CLAUDE_PLUGIN_OPTION_GUARD``.
"""

from __future__ import annotations

from qrspi_guard.hook.runtimes import (
    EDIT,
    MULTI_EDIT,
    NOTEBOOK,
    SHELL,
    WRITE,
    Integration,
    Runtime,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator, Mapping
    from typing import Any

    from qrspi_guard.hook.integrations import Presence

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


def _home(env: Mapping[str, str], home: str) -> str:
    import os

    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")


def _ours(env: Mapping[str, str], home: str, project: str | None,
          table: str) -> Iterator[tuple[str, object]]:
    """(key, value) of every entry of *table* naming our plugin (``qrspi-guard@...``) in
    Claude Code's settings files, in the order it reads them (a later one wins)."""
    import os

    from qrspi_guard.hook.integrations import NAME, read_record

    paths = [os.path.join(_home(env, home), "settings.json")]
    if project is not None:
        paths += [os.path.join(project, ".claude", name)
                  for name in ("settings.json", "settings.local.json")]
    for path in paths:
        doc = read_record(path)
        entries = doc.get(table) if isinstance(doc, dict) else None
        for key, value in (entries.items() if isinstance(entries, dict) else ()):
            if key.split("@", 1)[0] == NAME:
                yield key, value


def plugin(env: Mapping[str, str], home: str, project: str | None) -> Presence:
    """The plugin as Claude Code records it (see the module docstring)."""
    import os

    from qrspi_guard.hook.integrations import NAME, Presence, load_record

    doc, why = load_record(os.path.join(_home(env, home), "plugins", "installed_plugins.json"))
    if why is not None:
        return Presence("claude", False, unreadable=why)
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    for key, entries in (plugins.items() if isinstance(plugins, dict) else ()):
        if key.split("@", 1)[0] != NAME:
            continue
        entry = entries[0] if isinstance(entries, list) and entries else {}
        entry = entry if isinstance(entry, dict) else {}
        enabled = True
        for named, value in _ours(env, home, project, "enabledPlugins"):
            if named == key and isinstance(value, bool):
                enabled = value
        version, where = entry.get("version"), entry.get("installPath")
        return Presence("claude", True, version if isinstance(version, str) else None,
                        where if isinstance(where, str) else None, enabled)
    return Presence("claude", False)


def launcher_env(env: Mapping[str, str], home: str, project: str | None) -> dict[str, str]:
    """The plugin's ``guard`` option, as Claude Code gives it to the plugin's hook."""
    found = ""
    for _, value in _ours(env, home, project, "pluginConfigs"):
        options = value.get("options") if isinstance(value, dict) else None
        guard = options.get("guard") if isinstance(options, dict) else None
        found = guard if isinstance(guard, str) else found
    return {"CLAUDE_PLUGIN_OPTION_GUARD": found} if found else {}


RUNTIME = Runtime(
    name="claude", display="Claude Code", directory=".claude", events=EVENT_NAMES,
    tools={"Write": (WRITE, "file_path"), "Edit": (EDIT, "file_path"),
           "MultiEdit": (MULTI_EDIT, "file_path"),
           "NotebookEdit": (NOTEBOOK, "notebook_path"), "Bash": (SHELL, "command")},
    block=block, matchers={"pre": MATCHER, "post": MATCHER}, hook_entry=hook_entry,
    integration=Integration(kind="plugin", source="integrations/claude-code",
                            manifest=".claude-plugin/plugin.json", presence=plugin,
                            launcher_env=launcher_env),
)
