"""Every project setting, declared once: its configuration-file key, the attribute of
:class:`~qrspi_guard.settings.Settings` it sets, the value it takes, its default, the
command-line option that overrides it, its help text, how the file's value is read and
how ``--show-settings`` prints it.

What is derived from :data:`DECLARED` (as flake8's ``add_option(parse_from_config=True)``
derives its options and config parsing from one call): the configuration file's known
keys (:data:`KEYS`, whose errors name them), the reading of every key in
:func:`qrspi_guard.settings.resolve`, the command line winning over the file, the keys
``--show-settings`` prints and in which order, and the options' help
(:func:`help_of`). A new setting is one entry here (and the rule that reads it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qrspi_guard.records import record

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.contract.generations import Thresholds
    from qrspi_guard.settings.configfile import ConfigFile
    from qrspi_guard.settings.selection import PerFileIgnore


@record(frozen=True)
class Setting:
    """One setting."""

    key: str  #: the configuration file's key, and the name ``--show-settings`` prints
    attr: str  #: the :class:`Settings` (and :class:`CommandLine`) attribute
    value: str  #: what the file's value must be (named in errors)
    default: Any
    help: str
    #: the command-line option that overrides the file (None: the file only)
    option: str | None = None
    #: the file's value checked and converted (raises ``cfg.error``); None: a selection
    #: layer (select, extend-select, ignore), resolved in order with the command line's
    read: Callable[[ConfigFile], Any] | None = None
    #: the setting's value as ``--show-settings`` prints it (JSON)
    dump: Callable[[Any], Any] | None = None
    #: the :class:`~qrspi_guard.contract.runconfig.Overrides` field it fills for the
    #: rules (a command-line value already there wins)
    override: str | None = None


def _choice(key: str, choices: Callable[[], tuple[str, ...]]) -> Callable[[ConfigFile], Any]:
    def read(cfg: ConfigFile) -> Any:
        allowed = choices()
        if cfg.values[key] not in allowed:
            raise cfg.error(key, f"must be one of {', '.join(allowed)}")
        return cfg.values[key]
    return read


def _formats() -> tuple[str, ...]:
    from qrspi_guard.output import FORMATS

    return tuple(FORMATS)


def _protocols() -> tuple[str, ...]:
    from qrspi_guard.contract.generations import PROTOCOL_CHOICES

    return tuple(PROTOCOL_CHOICES)


def _flag(key: str) -> Callable[[ConfigFile], bool]:
    def read(cfg: ConfigFile) -> bool:
        if not isinstance(cfg.values[key], bool):
            raise cfg.error(key, "must be true or false")
        return bool(cfg.values[key])
    return read


def names(cfg: ConfigFile, key: str) -> tuple[str, ...]:
    """A list of cause names (or ALL) under *key*."""
    from qrspi_guard.settings.selection import UnknownCause, parse_names

    value = cfg.values[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise cfg.error(key, "must be a list of cause names")
    from qrspi_guard.contract.causes import did_you_mean
    from qrspi_guard.settings.selection import EmptySelection

    try:
        return parse_names(value, key, select=key == "select")
    except UnknownCause as exc:
        raise cfg.error(key, f"unknown cause {exc.name!r}{did_you_mean(exc.name)} (see "
                        "`qrspi-guard explain --list`)") from None
    except EmptySelection:
        raise cfg.error(key, "names no cause; every cause would be off (name causes, "
                        "or ALL)") from None


def _per_file(cfg: ConfigFile) -> tuple[PerFileIgnore, ...]:
    from qrspi_guard.settings.selection import PerFileIgnore, UnknownCause, parse_names

    table = cfg.values["per-file-ignores"]
    if not isinstance(table, dict):
        raise cfg.error("per-file-ignores", "must be a table of glob -> list of causes")
    out: list[PerFileIgnore] = []
    for pattern, causes in table.items():
        if not isinstance(causes, list) or not all(isinstance(c, str) for c in causes):
            raise cfg.error("per-file-ignores", "must be a list of cause names", pattern)
        try:
            got = parse_names(causes, pattern)
        except UnknownCause as exc:
            from qrspi_guard.contract.causes import did_you_mean

            raise cfg.error("per-file-ignores", f"unknown cause {exc.name!r}"
                            f"{did_you_mean(exc.name)}", pattern) from None
        out.append(PerFileIgnore.of(pattern, got))
    return tuple(out)


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


def _baseline(cfg: ConfigFile) -> str:
    import os

    value = cfg.values["baseline"]
    if not isinstance(value, str) or not value.strip():
        raise cfg.error("baseline", "must be a file name (relative to this file)")
    return os.path.join(cfg.directory, value)


_CAUSES = "a list of cause names"

DECLARED: tuple[Setting, ...] = (
    Setting("format", "format", "one of the check formats", "text",
            "Output format [default: text; github when GITHUB_ACTIONS=true; the config "
            "file's format wins over both].", "--format", _choice("format", _formats)),
    Setting("strict", "strict", "true or false", False, "Warnings fail too.",
            "--strict/--no-strict", _flag("strict")),
    Setting("protocol", "protocol", "auto, apply-fix or fan-in", "auto",
            "Judge every round as this protocol generation (auto: tell each round's from "
            "its files).", "--protocol", _choice("protocol", _protocols), override="protocol"),
    Setting("require-sidecars", "require_sidecars", "true or false", False,
            "Require a sidecar for every finding even without round-NN-verified.md.",
            "--require-sidecars", _flag("require-sidecars"), override="require_sidecars"),
    Setting("select", "select", _CAUSES, None,
            "Report only these causes (comma-separated, or ALL); replaces the config "
            "file's select.", "--select"),
    Setting("extend-select", "extend_select", _CAUSES, (),
            "Report these causes too, on top of the selection.", "--extend-select"),
    Setting("ignore", "ignore", _CAUSES, (),
            "Never report these causes (comma-separated).", "--ignore"),
    Setting("per-file-ignores", "per_file", "a table of glob -> list of cause names", (),
            "Causes left out for the paths a glob matches (relative to the file's "
            "directory).", None, _per_file,
            lambda v: {p.pattern: sorted(p.causes) for p in v}),
    Setting("extra-expected-tags", "extra_expected",
            "a table of step -> list of reviewer tags", (),
            "Tags expected in a step's rounds beside the matrix row (and routed).", None,
            _extra, lambda v: {k: list(t) for k, t in v}, override="extra_expected"),
    Setting("thresholds", "thresholds",
            "a table with style, clarity and correctness scores (0..100)", None,
            "The verified-totals recount's score thresholds.", None, _thresholds,
            lambda v: v.as_dict() if v else None, override="thresholds"),
    Setting("baseline", "baseline",
            "a baseline file, relative to this file's directory (check only)", None,
            "Leave out the diagnostics recorded in this baseline file (check and the "
            "pre-commit hooks; watch and hook ignore it).", None, _baseline),
)
#: every key the configuration file may hold, and what its value must be
KEYS: dict[str, str] = {s.key: s.value for s in DECLARED}
BY_KEY: dict[str, Setting] = {s.key: s for s in DECLARED}
BY_ATTR: dict[str, Setting] = {s.attr: s for s in DECLARED}
#: the selection layers' keys (read in order, file then command line)
LAYER_KEYS = tuple(s.key for s in DECLARED if s.read is None)


def help_of(key: str) -> str:
    """The help text of setting *key*, for its command-line option."""
    return BY_KEY[key].help
