"""The Claude Code plugin and the Gemini CLI extension: where they live, and whether a
runtime has them (issue 31; for ``doctor``-style checks).

Both live in a clone of this repository: the marketplace at ``.claude-plugin/`` of its
root, the plugin in ``integrations/claude-code/``, the extension in
``integrations/gemini-cli/``; each runs ``hooks/qrspi-guard-hook``, a POSIX sh launcher
that finds a qrspi-guard of its own version and runs ``qrspi-guard hook`` (docs/hook.md).
An installed package has no clone: :func:`source` is then None.

Whether a runtime has them is read from the runtime's own records, never by running it:

- Claude Code: ``plugins/installed_plugins.json`` under ``$CLAUDE_CONFIG_DIR`` (else
  ``~/.claude``), an entry ``qrspi-guard@<marketplace>``; enabled unless a settings file
  (the user's, or the project's ``.claude/settings.json`` and ``settings.local.json``)
  sets it to false under ``enabledPlugins``;
- Gemini CLI: ``extensions/qrspi-guard/gemini-extension.json`` under
  ``$GEMINI_CLI_HOME/.gemini`` (else ``~/.gemini``).

Which guard they would run, :func:`guard_found` asks the launcher itself
(``qrspi-guard-hook --which RUNTIME``), with what the runtime would give it: the plugin's
``guard`` option from Claude Code's settings, the environment for ``$QRSPI_GUARD``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

#: the plugin's and the extension's name, and the marketplace's
NAME = "qrspi-guard"
#: runtime -> its directory under the clone
SOURCES = {"claude": os.path.join("integrations", "claude-code"),
           "gemini": os.path.join("integrations", "gemini-cli")}
#: runtime -> the file that names the plugin's or the extension's version
MANIFESTS = {"claude": os.path.join(".claude-plugin", "plugin.json"),
             "gemini": "gemini-extension.json"}
MARKETPLACE = os.path.join(".claude-plugin", "marketplace.json")
#: the launcher, under each one's directory
LAUNCHER = os.path.join("hooks", "qrspi-guard-hook")


@dataclass(frozen=True)
class Presence:
    """Whether *runtime* has the plugin (or extension) installed, and which."""

    runtime: str
    installed: bool
    version: str | None = None  #: the installed version, when the runtime records it
    where: str | None = None  #: where the runtime keeps it
    enabled: bool = False


def clone_root() -> str | None:
    """The clone this package runs from (the directory holding the marketplace), or
    None for an installed package."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return here if os.path.isfile(os.path.join(here, MARKETPLACE)) else None


def source(runtime: str) -> str | None:
    """The plugin's (``claude``) or the extension's (``gemini``) directory in this
    clone, or None."""
    root = clone_root()
    return None if root is None else os.path.join(root, SOURCES[runtime])


def _read(path: str) -> object:
    from qrspi_guard.hook.jsonfile import Unreadable, load

    try:
        return load(path)
    except Unreadable:
        return None


def _claude_home(env: Mapping[str, str], home: str) -> str:
    return env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")


def _enabled_in(path: str, key: str) -> bool | None:
    doc = _read(path)
    plugins = doc.get("enabledPlugins") if isinstance(doc, dict) else None
    value = plugins.get(key) if isinstance(plugins, dict) else None
    return value if isinstance(value, bool) else None


def _claude(env: Mapping[str, str], home: str, project: str | None) -> Presence:
    base = _claude_home(env, home)
    doc = _read(os.path.join(base, "plugins", "installed_plugins.json"))
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    for key, entries in (plugins.items() if isinstance(plugins, dict) else ()):
        if not (isinstance(key, str) and key.split("@", 1)[0] == NAME):
            continue
        entry = entries[0] if isinstance(entries, list) and entries else {}
        entry = entry if isinstance(entry, dict) else {}
        settings = [os.path.join(base, "settings.json")]
        if project is not None:
            settings += [os.path.join(project, ".claude", name)
                         for name in ("settings.json", "settings.local.json")]
        enabled = True
        for path in settings:  # later files win
            said = _enabled_in(path, key)
            enabled = enabled if said is None else said
        version, where = entry.get("version"), entry.get("installPath")
        return Presence("claude", True, version if isinstance(version, str) else None,
                        where if isinstance(where, str) else None, enabled)
    return Presence("claude", False)


def _gemini(env: Mapping[str, str], home: str) -> Presence:
    where = os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini", "extensions", NAME)
    doc = _read(os.path.join(where, MANIFESTS["gemini"]))
    if not isinstance(doc, dict):
        return Presence("gemini", False)
    version = doc.get("version")
    return Presence("gemini", True, version if isinstance(version, str) else None, where, True)


def _claude_option(env: Mapping[str, str], home: str, project: str | None) -> str | None:
    """The plugin's ``guard`` option, as Claude Code would give it to the hook."""
    paths = [os.path.join(_claude_home(env, home), "settings.json")]
    if project is not None:
        paths += [os.path.join(project, ".claude", n) for n in ("settings.json",
                                                                "settings.local.json")]
    found = None
    for path in paths:  # later files win
        doc = _read(path)
        configs = doc.get("pluginConfigs") if isinstance(doc, dict) else None
        for key, value in (configs.items() if isinstance(configs, dict) else ()):
            options = value.get("options") if isinstance(value, dict) else None
            guard = options.get("guard") if isinstance(options, dict) else None
            if key.split("@", 1)[0] == NAME and isinstance(guard, str):
                found = guard
    return found


def guard_found(runtime: str, home: str | None = None, env: Mapping[str, str] | None = None,
                project: str | None = None) -> tuple[str | None, str]:
    """The guard the plugin's (``claude``) or the extension's (``gemini``) launcher would
    run: (its command, "") or (None, why none). The launcher is the runtime's installed
    copy, else this clone's; None and why when there is neither."""
    import subprocess

    env = dict(os.environ if env is None else env)
    home = os.path.expanduser("~") if home is None else home
    env["HOME"] = home
    got = presence(runtime, home, env, project)
    where = [os.path.join(got.where, LAUNCHER)] if got.where else []
    clone = source(runtime)
    where += [os.path.join(clone, LAUNCHER)] if clone else []
    launcher = next((p for p in where if os.path.isfile(p)), None)
    if launcher is None:
        return None, "the launcher is not installed, and this is no clone of qrspi-guard"
    if runtime == "claude":
        option = _claude_option(env, home, project)
        if option:
            env["CLAUDE_PLUGIN_OPTION_GUARD"] = option
    try:
        proc = subprocess.run(["sh", launcher, "--which", runtime], env=env, text=True,
                              capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the launcher could not run: {exc}"
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.strip(), ""
    return None, proc.stderr.strip() or f"the launcher failed (exit {proc.returncode})"


def presence(runtime: str, home: str | None = None, env: Mapping[str, str] | None = None,
             project: str | None = None) -> Presence:
    """Whether *runtime* (``claude`` or ``gemini``) has the plugin or the extension:
    read from its records under *home* (default: the user's), *env* (default: this
    process's) and, for Claude Code's project settings, *project*."""
    env = os.environ if env is None else env
    home = os.path.expanduser("~") if home is None else home
    if runtime == "claude":
        return _claude(env, home, project)
    if runtime == "gemini":
        return _gemini(env, home)
    raise ValueError(f"unknown runtime {runtime!r}")
