"""Project settings: the configuration file, the command line and the environment,
resolved into one value with the source of each setting (``check --show-settings``).

- :mod:`.files`     finding and reading ``.qrspi-guard.toml`` / ``[tool.qrspi-guard]``
- :mod:`.selection` ``select`` / ``ignore`` / ``extend-select`` / ``per-file-ignores``
  and :func:`apply_selection`, the one function check, watch and hook call

Precedence, highest first: the command line; the configuration file; for ``format``
only, ``github`` when ``GITHUB_ACTIONS=true``; the default. No click here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from qrspi_guard.records import field, record, replace
from qrspi_guard.settings.files import ConfigFile, find, load, load_named
from qrspi_guard.settings.selection import (
    ALL,
    DEFAULT,
    Layer,
    PerFileIgnore,
    Selection,
    UnknownCause,
    apply_selection,
    enabled_causes,
    parse_names,
    statistics,
)

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.generations import Thresholds
    from qrspi_guard.contract.runconfig import Overrides

__all__ = [
    "ALL", "DEFAULT", "CommandLine", "ConfigFile", "Layer", "PerFileIgnore", "Selection",
    "Settings", "UnknownCause", "apply_selection", "config_for", "enabled_causes", "find",
    "load", "load_named", "parse_names", "resolve", "selection_for", "statistics",
]

DEFAULT_SOURCE = "default"
CLI_SOURCE = "command line"
GITHUB_SOURCE = "GITHUB_ACTIONS=true"


@record(frozen=True)
class CommandLine:
    """What the command line says; None (or empty) where it says nothing."""

    format: str | None = None
    strict: bool | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    protocol: str | None = None
    #: ``--isolated``: no configuration file is read
    isolated: bool = False
    #: ``--settings FILE``: this file, instead of the one found from the judged path
    settings_file: str | None = None
    #: what that file's relative ``per-file-ignores`` globs are relative to (None: the
    #: working directory, as ruff resolves its ``--config``; the hook: the payload's cwd)
    workdir: str | None = None


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
    layers: tuple[Layer, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)

    def overrides(self, base: Overrides) -> Overrides:
        """*base* (the command line's config overrides) with the project file's
        ``protocol``, ``thresholds`` and ``extra-expected-tags``."""
        return replace(base, protocol=self.protocol, thresholds=self.thresholds,
                       extra_expected=self.extra_expected)

    def as_dict(self) -> dict[str, Any]:
        return {
            "config_file": self.config.path if self.config else None,
            "format": self.format,
            "strict": self.strict,
            "protocol": self.protocol,
            "select": _layer_value(self.layers, "select"),
            "extend-select": _layer_value(self.layers, "extend_select"),
            "ignore": _layer_value(self.layers, "ignore"),
            "per-file-ignores": {p.pattern: sorted(p.causes) for p in self.selection.per_file},
            "extra-expected-tags": {k: list(v) for k, v in self.extra_expected},
            "thresholds": self.thresholds.as_dict() if self.thresholds else None,
            "disabled": self.selection.disabled,
            "sources": dict(self.sources),
        }

    def show(self, as_json: bool = False) -> str:
        """The resolved settings and where each came from (``--show-settings``)."""
        data = self.as_dict()
        if as_json:
            return json.dumps(data, indent=2, ensure_ascii=True) + "\n"
        from qrspi_guard.textsafe import one_line

        lines = [f"config file: {one_line(self.config.shown) if self.config else '(none)'}"]
        for key in ("format", "strict", "protocol", "select", "extend-select", "ignore",
                    "per-file-ignores", "extra-expected-tags", "thresholds"):
            value = json.dumps(data[key], ensure_ascii=True)
            source = self.sources.get(key, DEFAULT_SOURCE)
            lines.append(f"{key} = {one_line(value)}  # {one_line(source)}")
        off = self.selection.disabled
        total = len(self.selection.enabled) + len(off)
        lines.append(f"causes on: {total - len(off)} of {total}"
                     + (f" (off: {', '.join(off)})" if off else ""))
        return "\n".join(lines) + "\n"


def _layer_value(layers: tuple[Layer, ...], attr: str) -> list[str] | None:
    """The last layer's value of *attr* that was given (None: never given)."""
    got: list[str] | None = None
    for layer in layers:
        v = getattr(layer, attr)
        if v is not None and (attr == "select" or v):
            got = list(v)
    return got


def _names(cfg: ConfigFile, key: str) -> tuple[str, ...]:
    value = cfg.values[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise cfg.error(key, "must be a list of cause names")
    try:
        return parse_names(value, key)
    except UnknownCause as exc:
        raise cfg.error(key, f"unknown cause {exc.name!r} (see `qrspi-guard explain "
                        "--list`)") from None


def _file_layer(cfg: ConfigFile) -> tuple[Layer, tuple[PerFileIgnore, ...]]:
    v = cfg.values
    layer = Layer(select=_names(cfg, "select") if "select" in v else None,
                  extend_select=_names(cfg, "extend-select") if "extend-select" in v else (),
                  ignore=_names(cfg, "ignore") if "ignore" in v else ())
    pfi: list[PerFileIgnore] = []
    table = v.get("per-file-ignores")
    if table is not None:
        if not isinstance(table, dict):
            raise cfg.error("per-file-ignores", "must be a table of glob -> list of causes")
        for pattern, causes in table.items():
            if not isinstance(causes, list) or not all(isinstance(c, str) for c in causes):
                raise cfg.error("per-file-ignores", "must be a list of cause names", pattern)
            try:
                names = parse_names(causes, pattern)
            except UnknownCause as exc:
                raise cfg.error("per-file-ignores", f"unknown cause {exc.name!r}",
                                pattern) from None
            pfi.append(PerFileIgnore.of(pattern, names))
    return layer, tuple(pfi)


def _extra(cfg: ConfigFile) -> tuple[tuple[str, tuple[str, ...]], ...]:
    from qrspi_guard.contract.layout import STEPS, TAG_RE, TASK_DIR_RE
    from qrspi_guard.contract.matrix import rows_for

    table = cfg.values["extra-expected-tags"]
    if not isinstance(table, dict):
        raise cfg.error("extra-expected-tags", "must be a table of step -> list of tags")
    out = []
    for step, tags in table.items():
        if rows_for(step) is None and not TASK_DIR_RE.fullmatch(step):
            raise cfg.error("extra-expected-tags", f"unknown step (steps: {', '.join(STEPS)};"
                            " also integrate, implement-gate, task-NN)", step)
        if not isinstance(tags, list) or not all(
                isinstance(t, str) and TAG_RE.fullmatch(t) for t in tags):
            raise cfg.error("extra-expected-tags", "must be a list of reviewer tags "
                            "(lower-case letters, digits and hyphens)", step)
        out.append((step, tuple(dict.fromkeys(tags))))
    return tuple(out)


def _thresholds(cfg: ConfigFile) -> Thresholds:
    from qrspi_guard.contract.generations import Thresholds

    table = cfg.values["thresholds"]
    if not isinstance(table, dict):
        raise cfg.error("thresholds", "must be a table of style, clarity, correctness")
    known = Thresholds().as_dict()
    for name, value in table.items():
        if name not in known:
            raise cfg.error("thresholds", f"unknown key (known: {', '.join(known)})", name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
            raise cfg.error("thresholds", "must be an integer from 0 to 100", name)
    return Thresholds(**{**known, **table})


def config_for(cli: CommandLine | None = None, start: str | None = None
               ) -> ConfigFile | None:
    """The project configuration file a run reads: ``--settings FILE``, else none with
    ``--isolated``, else the one found from *start* upward to its repository root."""
    cli = cli or CommandLine()
    if cli.settings_file is not None:
        if cli.isolated:
            from qrspi_guard.errors import UsageError

            raise UsageError("--settings and --isolated cannot be used together")
        return load_named(cli.settings_file)
    return None if cli.isolated else find(start)


def resolve(cli: CommandLine | None = None, env: Mapping[str, str] | None = None,
            start: str | None = None, config: ConfigFile | None | bool = True) -> Settings:
    """The run's settings: the project configuration file (:func:`config_for` from
    *start*, or *config* when one was found already; True: look it up) under the
    command line. Raises :class:`~qrspi_guard.errors.ConfigFileError` for a
    configuration file that is wrong, :class:`UnknownCause` for a command line that
    names an unknown cause."""
    from qrspi_guard.contract.generations import PROTOCOL_CHOICES
    from qrspi_guard.output import FORMATS

    cli = cli or CommandLine()
    env = os.environ if env is None else env
    cfg = config_for(cli, start) if config is True else config or None
    s = Settings(config=cfg)
    src = s.sources
    layers: list[Layer] = []
    per_file: tuple[PerFileIgnore, ...] = ()
    if cfg is not None:
        where = cfg.shown
        v = cfg.values
        if "format" in v:
            if v["format"] not in FORMATS:
                raise cfg.error("format", f"must be one of {', '.join(FORMATS)}")
            s.format, src["format"] = v["format"], where
        if "strict" in v:
            if not isinstance(v["strict"], bool):
                raise cfg.error("strict", "must be true or false")
            s.strict, src["strict"] = v["strict"], where
        if "protocol" in v:
            if v["protocol"] not in PROTOCOL_CHOICES:
                raise cfg.error("protocol", f"must be one of {', '.join(PROTOCOL_CHOICES)}")
            s.protocol, src["protocol"] = v["protocol"], where
        if "extra-expected-tags" in v:
            s.extra_expected, src["extra-expected-tags"] = _extra(cfg), where
        if "thresholds" in v:
            s.thresholds, src["thresholds"] = _thresholds(cfg), where
        layer, per_file = _file_layer(cfg)
        layers.append(layer)
        for key in ("select", "extend-select", "ignore", "per-file-ignores"):
            if key in v:
                src[key] = where
    if cli.format is not None:
        s.format, src["format"] = cli.format, CLI_SOURCE
    elif "format" not in src and env.get("GITHUB_ACTIONS") == "true":
        s.format, src["format"] = "github", GITHUB_SOURCE
    if cli.strict is not None:
        s.strict, src["strict"] = cli.strict, CLI_SOURCE
    if cli.protocol is not None:
        s.protocol, src["protocol"] = cli.protocol, CLI_SOURCE
    cli_layer = Layer(
        select=parse_names(cli.select, "--select") if cli.select is not None else None,
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


def selection_for(start: str | None = None) -> Selection:
    """The selection of the project configuration that applies at *start* (the hook's
    and watch's entry: no command line). Raises ConfigFileError like :func:`resolve`."""
    cfg = find(start)
    if cfg is None:
        return DEFAULT
    layer, per_file = _file_layer(cfg)
    return Selection(enabled_causes([layer]), per_file, cfg.directory)
