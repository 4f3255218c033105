"""The plugin and the extension (issue 31; for ``doctor``): where they live, whether a
runtime has them, and which guard their launcher would run. Generic: what differs per
runtime is its :class:`~qrspi_guard.hook.runtimes.Integration`, in its module.

Both live in a clone of this repository: the marketplace at ``.claude-plugin/`` of its
root, each runtime's package in the directory its integration names
(``integrations/claude-code/``, ``integrations/gemini-cli/``); each runs
``hooks/qrspi-guard-hook``, a POSIX sh launcher that finds a qrspi-guard of its own
version and runs ``qrspi-guard hook`` (docs/hook.md). An installed package has no
clone: :func:`source` is then None.

Whether a runtime has one is read from the runtime's own records
(:func:`presence`), never by running it. Which guard it would run, :func:`guard_found`
asks the launcher itself (``qrspi-guard-hook --which RUNTIME``), with what the runtime
would give it (its integration's ``launcher_env``: Claude Code's plugin options) and the
environment for ``$QRSPI_GUARD``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from qrspi_guard.hook.runtimes import BY_NAME, Integration

#: the plugin's and the extension's name, and the marketplace's
NAME = "qrspi-guard"
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
    #: why the record saying whether it is installed cannot be read (installed is then
    #: unknown, and False)
    unreadable: str | None = None


def clone_root() -> str | None:
    """The clone this package runs from (the directory holding the marketplace), or
    None for an installed package."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return here if os.path.isfile(os.path.join(here, MARKETPLACE)) else None


def integration(runtime: str) -> Integration:
    """*runtime*'s plugin or extension, from the registry. Raises ValueError for a
    runtime the registry does not have, or one without an integration."""
    rt = BY_NAME.get(runtime)
    if rt is None or rt.integration is None:
        raise ValueError(f"unknown runtime {runtime!r}")
    return rt.integration


def source(runtime: str) -> str | None:
    """*runtime*'s plugin or extension directory in this clone, or None."""
    root = clone_root()
    return None if root is None else os.path.join(root, integration(runtime).source)


def read_record(path: str) -> object:
    """A runtime's JSON record at *path* (settings, an installed-plugin list, a
    manifest), or None when it is absent or cannot be used (a FIFO, too large, JSON the
    guard does not read)."""
    return load_record(path)[0]


def load_record(path: str) -> tuple[object, str | None]:
    """A runtime's JSON record at *path* and None, or None and why it is there but
    cannot be used (one line naming *path*). An absent record is (None, None)."""
    from qrspi_guard.hook.jsonfile import Unreadable, load

    try:
        return load(path), None
    except Unreadable as exc:
        return None, f"cannot read {path}: {exc}"


def guard_found(runtime: str, home: str | None = None, env: Mapping[str, str] | None = None,
                project: str | None = None) -> tuple[str | None, str]:
    """The guard *runtime*'s plugin or extension launcher would run: (its command, "")
    or (None, why none). The launcher is the runtime's installed copy, else this
    clone's; None and why when there is neither."""
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
    env.update(integration(runtime).launcher_env(env, home, project))
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
    """Whether *runtime* has the plugin or the extension: read from its records under
    *home* (default: the user's), *env* (default: this process's) and, for a runtime
    with project settings, *project*. Raises ValueError for an unknown runtime."""
    env = os.environ if env is None else env
    home = os.path.expanduser("~") if home is None else home
    return integration(runtime).presence(env, home, project)
