"""The agent runtimes the hook speaks to: one module each, listed once, here.

A runtime module (:mod:`~qrspi_guard.hook.runtimes.claude`,
:mod:`~qrspi_guard.hook.runtimes.gemini`) holds everything the hook knows about one
agent runtime as one :class:`Runtime` named ``RUNTIME``: its event names, its tools,
its JSON answer, its settings file and what install writes there, and its
:class:`Integration` (the plugin or extension: where it lives in a clone, where the
runtime records it installed and enabled, what the runtime gives its launcher). The
payload, the answers, install, the hook's command line, ``--runtime`` and
:mod:`~qrspi_guard.hook.integrations` (``doctor``) all read them from :data:`ALL`.
Adding a runtime is a module here and its name in :data:`MODULES`;
``tests/test_hook_runtime_registry.py`` checks that every runtime is complete.

On the path of every hook call, the no-op included: this package and its modules
import nothing else (a runtime module imports :class:`Runtime` and the tool kinds from
here, which are defined before the modules are loaded; what a function of theirs needs
off that path, it imports when called), and each module costs a hook call its import,
so they stay plain data and small functions.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Mapping
    from typing import Any

    from qrspi_guard.hook.integrations import Presence

#: the hook's two events: before a tool call, and after it
EVENTS = ("pre", "post")

#: what a tool does to a file, as far as the hook is concerned: writes the whole file;
#: edits it (Claude Code's ``Edit`` / ``MultiEdit``, Gemini CLI's ``replace``, each as
#: :mod:`qrspi_guard.hook.edits` models it); edits a notebook (judged after the call
#: only); runs a shell command (what it wrote, :mod:`qrspi_guard.hook.shell`)
WRITE, EDIT, MULTI_EDIT, REPLACE, NOTEBOOK, SHELL = (
    "write", "edit", "multi_edit", "replace", "notebook", "shell")
KINDS = (WRITE, EDIT, MULTI_EDIT, REPLACE, NOTEBOOK, SHELL)


def no_warnings(doc: dict[str, Any], shown: str) -> list[str]:
    """A runtime whose settings cannot switch our hooks off: nothing to warn about."""
    return []


def no_place_warnings(scope: str, base: str) -> list[str]:
    """A runtime that runs the hooks of any settings file: nothing to warn about."""
    return []


def no_launcher_env(env: Mapping[str, str], home: str, project: str | None,
                    ) -> dict[str, str]:
    """A runtime that gives its plugin's launcher nothing beyond its own environment."""
    return {}


class Integration:
    """A runtime's own package of the guard (the Claude Code plugin, the Gemini CLI
    extension): where it lives in a clone of this repository, and how to read what the
    runtime records of it, never by running the runtime."""

    __slots__ = ("kind", "source", "manifest", "presence", "launcher_env")

    def __init__(self, *, kind: str, source: str, manifest: str,
                 presence: Callable[[Mapping[str, str], str, str | None], Presence],
                 launcher_env: Callable[[Mapping[str, str], str, str | None],
                                        dict[str, str]] = no_launcher_env) -> None:
        self.kind = kind  #: what the runtime calls it: "plugin", "extension"
        #: its directory under the clone's root (``integrations/claude-code``)
        self.source = source
        #: the file under that directory (and the installed copy) naming its version
        self.manifest = manifest
        #: (environment, home, project) -> whether the runtime has it installed and
        #: enabled, read from the runtime's own records
        self.presence = presence
        #: (environment, home, project) -> what the runtime adds to the launcher's
        #: environment (Claude Code: the plugin's options)
        self.launcher_env = launcher_env


class Runtime:
    """Everything the hook knows about one agent runtime."""

    __slots__ = ("name", "display", "directory", "events", "tools", "block", "matchers",
                 "hook_entry", "directory_key", "warnings", "place_warnings", "integration")

    def __init__(self, *, name: str, display: str, directory: str, events: dict[str, str],
                 tools: dict[str, tuple[str, str]],
                 block: Callable[[str, str], dict[str, object]],
                 matchers: dict[str, str],
                 hook_entry: Callable[[str, str], dict[str, Any]],
                 directory_key: str | None = None,
                 warnings: Callable[[dict[str, Any], str], list[str]] = no_warnings,
                 place_warnings: Callable[[str, str], list[str]] = no_place_warnings,
                 integration: Integration | None = None,
                 ) -> None:
        self.name = name  #: ``--runtime NAME``, and the name of its module
        self.display = display  #: what install calls it ("Claude Code")
        self.directory = directory  #: its settings directory, under the project or home
        self.events = events  #: our event ("pre", "post") -> its ``hook_event_name``
        #: tool name -> (kind, the tool_input key that names the file or the command)
        self.tools = tools
        #: (reason, event) -> its JSON answer that refuses the call (``--output-format
        #: json``): deny before the call, block after it
        self.block = block
        #: our event -> the tool-name regex of the group install adds under its event
        self.matchers = matchers
        #: (event, command) -> the hook entry install adds: ``"type": "command"`` and
        #: ``"command"``, and whatever else the runtime takes (a name, a timeout)
        self.hook_entry = hook_entry
        #: the tool_input key naming the directory a call runs in, relative to ``cwd``
        #: (Gemini CLI's ``directory``), when the runtime has one
        self.directory_key = directory_key
        #: (the settings after install, the file's name as shown) -> the lines warning
        #: that the settings keep one of our hooks from running
        self.warnings = warnings
        #: (scope, the directory the settings are under) -> the lines warning that the
        #: runtime will not run hooks installed there (Gemini CLI: an untrusted folder)
        self.place_warnings = place_warnings
        #: its plugin or extension (every runtime has one: the registry test says so)
        self.integration = integration

    def install_entries(self) -> list[tuple[str, str, str]]:
        """What install adds: (its event name, our event, matcher), pre first."""
        return [(self.events[e], e, self.matchers[e]) for e in EVENTS]

    def __repr__(self) -> str:
        return f"Runtime({self.name!r})"


#: the runtime modules, each named as its runtime, in order: the first is ``hook
#: install``'s default, and a payload's tool name is looked up in this order
MODULES = ("claude", "gemini")


def _load(module: str) -> Runtime:
    runtime: Runtime = __import__(f"{__name__}.{module}", fromlist=("RUNTIME",)).RUNTIME
    return runtime


ALL: tuple[Runtime, ...] = tuple(_load(m) for m in MODULES)
#: ``--runtime`` name -> its runtime
BY_NAME: dict[str, Runtime] = {rt.name: rt for rt in ALL}
#: the ``--runtime`` choices
NAMES: tuple[str, ...] = tuple(BY_NAME)
