"""Project settings: the configuration file, the command line and the environment,
resolved into one value with the source of each setting (``check --show-settings``).

- :mod:`.declared`    every setting declared once (key, value, default, option, help,
  reading); the file's keys, its parsing and ``--show-settings`` are derived from it
- :mod:`.configfile`    finding and reading ``.qrspi-guard.toml`` / ``[tool.qrspi-guard]``
  (from each judged path upward to its repository root, or ``--settings FILE``)
- :mod:`.commandline` what the command line says (:class:`CommandLine`)
- :mod:`.resolution`  :func:`resolve`: one :class:`Settings` value, each setting's source
- :mod:`.selection`   ``select`` / ``ignore`` / ``extend-select`` / ``per-file-ignores``:
  the :class:`Selection` the judge applies where diagnostics are made

Names are imported on first use (the hook finds no configuration file without loading
the selection machinery). No click here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.settings.commandline import CommandLine as CommandLine
    from qrspi_guard.settings.configfile import ConfigFile as ConfigFile
    from qrspi_guard.settings.configfile import config_for as config_for
    from qrspi_guard.settings.configfile import find as find
    from qrspi_guard.settings.configfile import load as load
    from qrspi_guard.settings.configfile import load_named as load_named
    from qrspi_guard.settings.resolution import Settings as Settings
    from qrspi_guard.settings.resolution import resolve as resolve
    from qrspi_guard.settings.selection import ALL as ALL
    from qrspi_guard.settings.selection import DEFAULT as DEFAULT
    from qrspi_guard.settings.selection import Layer as Layer
    from qrspi_guard.settings.selection import PerFileIgnore as PerFileIgnore
    from qrspi_guard.settings.selection import Selection as Selection
    from qrspi_guard.settings.selection import UnknownCause as UnknownCause
    from qrspi_guard.settings.selection import apply_selection as apply_selection
    from qrspi_guard.settings.selection import enabled_causes as enabled_causes
    from qrspi_guard.settings.selection import parse_names as parse_names

#: public name -> the submodule defining it
_EXPORTS: dict[str, str] = {
    "CommandLine": "commandline",
    "ConfigFile": "configfile", "config_for": "configfile", "find": "configfile",
    "load": "configfile",
    "load_named": "configfile",
    "Settings": "resolution", "resolve": "resolution",
    "ALL": "selection", "DEFAULT": "selection", "Layer": "selection",
    "PerFileIgnore": "selection", "Selection": "selection", "UnknownCause": "selection",
    "apply_selection": "selection", "enabled_causes": "selection",
    "parse_names": "selection",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
