"""The run's settings resolved: the project configuration file under the command line
(and, for ``format`` only, ``GITHUB_ACTIONS=true``), with the source of each setting.

Precedence, highest first: the command line; the configuration file; for ``format``
only, ``github`` when ``GITHUB_ACTIONS=true``; the default. No click here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qrspi_guard.parse import jsondoc
from qrspi_guard.records import field, record, replace
from qrspi_guard.settings.commandline import CommandLine
from qrspi_guard.settings.configfile import ConfigFile, config_for
from qrspi_guard.settings.declared import BY_ATTR, DECLARED, names
from qrspi_guard.settings.selection import (
    DEFAULT,
    Layer,
    PerFileIgnore,
    Selection,
    enabled_causes,
    parse_names,
)

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.generations import Thresholds
    from qrspi_guard.contract.runconfig import Overrides

DEFAULT_SOURCE = "default"
CLI_SOURCE = "command line"
GITHUB_SOURCE = "GITHUB_ACTIONS=true"


@record
class Settings:
    """The resolved settings of one run, and where each came from."""

    config: ConfigFile | None
    format: str = "text"
    strict: bool = False
    protocol: str = "auto"
    selection: Selection = DEFAULT
    extra_expected: tuple[tuple[str, tuple[str, ...]], ...] = ()
    thresholds: Thresholds | None = None
    #: the baseline file (``baseline``, relative to its config file), read by check only
    baseline: str | None = None
    layers: tuple[Layer, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)
    #: the declared settings without an attribute of their own, by attribute name
    values: dict[str, Any] = field(default_factory=dict)

    def get(self, attr: str) -> Any:
        """A declared setting's value (:mod:`.declared`), by its attribute name."""
        if attr in self.values or not hasattr(self, attr):
            return self.values.get(attr, BY_ATTR[attr].default)
        return getattr(self, attr)

    def put(self, attr: str, value: Any) -> None:
        if attr in _OWN:
            setattr(self, attr, value)
        else:
            self.values[attr] = value

    def overrides(self, base: Overrides) -> Overrides:
        """*base* (the command line's config overrides) with every declared setting
        that fills an overrides field (``protocol``, ``require-sidecars``,
        ``thresholds``, ``extra-expected-tags``...) where *base* leaves it at its
        default: a value on the command line wins."""
        from qrspi_guard.contract.runconfig import Overrides

        plain = Overrides()
        changes = {}
        for setting in DECLARED:
            name = setting.override
            if name is None:
                continue
            if name != "protocol" and getattr(base, name) != getattr(plain, name):
                continue  # given on the command line
            changes[name] = self.get(setting.attr)
        return replace(base, **changes)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"config_file": self.config.path if self.config else None}
        for setting in DECLARED:
            if setting.read is None:  # a selection layer: the last value given
                out[setting.key] = _layer_value(self.layers, setting.attr)
            elif setting.attr == "per_file":
                out[setting.key] = setting.dump(self.selection.per_file)  # type: ignore[misc]
            else:
                value = self.get(setting.attr)
                out[setting.key] = setting.dump(value) if setting.dump else value
        out["disabled"] = self.selection.disabled
        out["sources"] = dict(self.sources)
        return out

    def show(self, as_json: bool = False) -> str:
        """The resolved settings and where each came from (``--show-settings``)."""
        data = self.as_dict()
        if as_json:
            return jsondoc.dumps(data, indent=2, ensure_ascii=True) + "\n"
        from qrspi_guard.textsafe import one_line

        lines = [f"config file: {one_line(self.config.shown) if self.config else '(none)'}"]
        for setting in DECLARED:
            key = setting.key
            value = jsondoc.dumps(data[key], ensure_ascii=True)
            source = self.sources.get(key, DEFAULT_SOURCE)
            lines.append(f"{key} = {one_line(value)}  # {one_line(source)}")
        off = self.selection.disabled
        total = len(self.selection.enabled) + len(off)
        lines.append(f"causes on: {total - len(off)} of {total}"
                     + (f" (off: {', '.join(off)})" if off else ""))
        return "\n".join(lines) + "\n"


#: the settings with an attribute of their own on :class:`Settings`
_OWN = frozenset({"format", "strict", "protocol", "extra_expected", "thresholds",
                  "baseline"})


def _layer_value(layers: tuple[Layer, ...], attr: str) -> list[str] | None:
    """The last layer's value of *attr* that was given (None: never given)."""
    got: list[str] | None = None
    for layer in layers:
        v = getattr(layer, attr)
        if v is not None and (attr == "select" or v):
            got = list(v)
    return got


def _file_layer(cfg: ConfigFile) -> Layer:
    v = cfg.values
    return Layer(select=names(cfg, "select") if "select" in v else None,
                 extend_select=names(cfg, "extend-select") if "extend-select" in v else (),
                 ignore=names(cfg, "ignore") if "ignore" in v else ())


def resolve(cli: CommandLine | None = None, env: Mapping[str, str] | None = None,
            start: str | None = None, config: ConfigFile | None | bool = True) -> Settings:
    """The run's settings: the project configuration file (:func:`config_for` from
    *start*, or *config* when one was found already; True: look it up) under the
    command line. Raises :class:`~qrspi_guard.errors.ConfigFileError` for a
    configuration file that is wrong, :class:`UnknownCause` for a command line that
    names an unknown cause."""
    cli = cli or CommandLine()
    env = os.environ if env is None else env
    cfg = config_for(cli, start) if config is True else config or None
    s = Settings(config=cfg)
    src = s.sources
    layers: list[Layer] = []
    per_file: tuple[PerFileIgnore, ...] = ()
    if cfg is not None:  # every declared key the file holds, read and checked
        where = cfg.shown
        for setting in DECLARED:
            if setting.key not in cfg.values:
                continue
            src[setting.key] = where
            if setting.read is None:
                continue
            value = setting.read(cfg)
            if setting.attr == "per_file":
                per_file = value
            else:
                s.put(setting.attr, value)
        layers.append(_file_layer(cfg))
    for setting in DECLARED:  # the command line wins over the file
        if setting.read is not None and setting.option is not None:
            given = getattr(cli, setting.attr, None)
            if given is not None:
                s.put(setting.attr, given)
                src[setting.key] = CLI_SOURCE
    if "format" not in src and env.get("GITHUB_ACTIONS") == "true":
        s.format, src["format"] = "github", GITHUB_SOURCE
    cli_layer = Layer(
        select=(parse_names(cli.select, "--select", select=True)
                if cli.select is not None else None),
        extend_select=parse_names(cli.extend_select, "--extend-select"),
        ignore=parse_names(cli.ignore, "--ignore"))
    layers.append(cli_layer)
    for key, given in (("select", cli_layer.select is not None),
                       ("extend-select", bool(cli_layer.extend_select)),
                       ("ignore", bool(cli_layer.ignore))):
        if given:
            src[key] = CLI_SOURCE if key not in src else f"{src[key]}, then {CLI_SOURCE}"
    s.layers = tuple(layers)
    # per-file-ignores globs are relative to the file's directory, or, for a file named
    # by --settings, to the working directory (as ruff resolves its --config's paths)
    s.selection = Selection(enabled_causes(layers), per_file,
                            cfg.directory if cfg is not None and cli.settings_file is None
                            else cli.workdir)
    return s


def show_groups(groups: Sequence[tuple[Settings, Sequence[str]]], as_json: bool) -> str:
    """``check --show-settings``: the settings each group of PATHs is judged under,
    naming the file actually read (one block per configuration when PATHs fall under
    several: headed by its PATHs, or in JSON a list, each with its ``paths``)."""
    if len(groups) == 1:
        return groups[0][0].show(as_json=as_json)
    if as_json:
        return jsondoc.dumps([{"paths": list(paths), **settings.as_dict()}
                              for settings, paths in groups], indent=2,
                             ensure_ascii=True) + "\n"
    from qrspi_guard.textsafe import one_line

    return "\n".join(f"# {', '.join(one_line(p) for p in paths)}\n{settings.show()}"
                     for settings, paths in groups)
