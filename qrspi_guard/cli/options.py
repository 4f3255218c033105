"""Options shared by `check`, `watch` and `hook`: the config overrides, the rule
selection and where the project configuration comes from (cli.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from qrspi_guard.cli.conventions import Choice, shown
from qrspi_guard.contract.generations import PROTOCOL_CHOICES
from qrspi_guard.contract.layout import TAG_RE
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.settings.declared import help_of

if TYPE_CHECKING:  # pragma: no cover
    from click.shell_completion import CompletionItem


def override_options(f: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--step", metavar="STEP", help="Judge rounds as this step (overrides "
                     "the directory name)."),
        click.option("--second-reviewer/--no-second-reviewer", default=None,
                     help="Matrix column; overrides config.md."),
        click.option("--verifier/--no-verifier", default=None,
                     help="Whether the verifier ran; overrides config.md verifier_enabled."),
        click.option("--require-sidecars", is_flag=True, help=help_of("require-sidecars")),
        click.option("--expect", metavar="TAGS", help="Comma-separated tags every round must "
                     "hear from (for task rounds, which have no fixed row)."),
        click.option("--config", "config_file", metavar="FILE",
                     type=click.Path(exists=True, dir_okay=False),
                     help="Use FILE as the run's config.md (the project configuration, a "
                     "TOML file, is --settings)."),
        click.option("--protocol", type=Choice(PROTOCOL_CHOICES), default="auto",
                     show_default=True, help=help_of("protocol")),
        click.option("--round", "round_no", type=click.IntRange(min=1, max=999_999_999),
                     metavar="N", help="The round of a directory that holds reviewer output "
                     "but is not named round-NN (default: from its findings' finding_id)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def build_overrides(step: str | None, second_reviewer: bool | None, verifier: bool | None,
                    require_sidecars: bool, expect: str | None,
                    config_file: str | None, protocol: str = "auto",
                    round_no: int | None = None) -> Overrides:
    from qrspi_guard.contract.layout import STEPS, TASK_DIR_RE
    from qrspi_guard.contract.matrix import ROWS, rows_for
    from qrspi_guard.voice import did_you_mean

    if config_file is not None:
        _usable_config(config_file)
    if step is not None and rows_for(step) is None and not TASK_DIR_RE.fullmatch(step):
        # a mistyped step must not silently switch the matrix off
        hint = did_you_mean(step, (*STEPS, *ROWS))
        raise click.BadParameter(f"unknown step {shown(step)}{hint} (steps: "
                                 f"{', '.join(STEPS)}; also integrate, implement-gate, "
                                 "task-NN)", param_hint="--step")
    tags: tuple[str, ...] | None = None
    if expect is not None:
        tags = tuple(t.strip() for t in expect.split(",") if t.strip())
        bad = [t for t in tags if not TAG_RE.fullmatch(t)]
        if bad or not tags:
            raise click.BadParameter(f"not a reviewer tag: {bad[0] if bad else expect!r}",
                                     param_hint="--expect")
    return Overrides(step=step, second_reviewer=second_reviewer, verifier=verifier,
                     require_sidecars=require_sidecars, expect=tags, config_file=config_file,
                     protocol=protocol, round_no=round_no)


def _usable_config(path: str) -> None:
    """``--config FILE`` must be readable, within the one file cap and not TOML: a
    command-line argument that cannot be used is exit 2 (cli.md), never a config.md
    defect (exit 1)."""
    from qrspi_guard.parse.capped import FILE_CAP, Refused, read_regular

    try:
        data, _ = read_regular(path, FILE_CAP)
    except OSError as exc:
        raise click.BadParameter(f"{shown(path)} cannot be read: {exc.strerror or exc}",
                                 param_hint="--config") from None
    except Refused as exc:
        if not exc.too_large:
            # a FIFO or device named by --config is refused, never opened (cli.md)
            raise click.BadParameter(f"{path!r} is not a regular file",
                                     param_hint="--config") from None
        raise click.BadParameter(f"{shown(path)} is larger than {FILE_CAP >> 20} MiB, the "
                                 "cap on a config.md", param_hint="--config") from None
    if is_toml(path, data):
        # a ruff user's `--config pyproject.toml`: never read as a config.md
        raise click.BadParameter(
            f"{shown(path)} is a TOML file, and --config names the run's config.md; give "
            "the project configuration with --settings FILE", param_hint="--config")


def is_toml(path: str, data: bytes) -> bool:
    """Whether a file is TOML rather than a config.md: named ``*.toml``, or text with
    no frontmatter that parses as TOML to at least one key."""
    if path.lower().endswith(".toml"):
        return True
    if data.lstrip().startswith(b"---"):
        return False
    from qrspi_guard.settings.configfile import toml_module

    try:
        return bool(toml_module().loads(data.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):  # TOMLDecodeError is a ValueError
        return False


def complete_causes(ctx: click.Context, param: click.Parameter,
                    incomplete: str) -> list[CompletionItem]:
    """Shell completion of cause names, for the last of a comma-separated list."""
    from click.shell_completion import CompletionItem

    from qrspi_guard.contract.causes import CATALOGUE

    head, _, last = incomplete.rpartition(",")
    prefix = f"{head}," if head else ""
    names = ["ALL", *CATALOGUE] if param.name != "cause" else list(CATALOGUE)
    return [CompletionItem(prefix + n) for n in names if n.startswith(last)]


def selection_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--select``, ``--extend-select`` and ``--ignore`` (ruff's spelling): comma-separated
    cause names, or ALL; each may be given more than once. Resolve them with
    :func:`qrspi_guard.settings.resolve` (an unknown name is exit 2 naming it)."""
    options = [
        click.option("--select", "select", metavar="CAUSES", multiple=True,
                     shell_complete=complete_causes, help=help_of("select")),
        click.option("--extend-select", "extend_select", metavar="CAUSES", multiple=True,
                     shell_complete=complete_causes, help=help_of("extend-select")),
        click.option("--ignore", "ignore", metavar="CAUSES", multiple=True,
                     shell_complete=complete_causes, help=help_of("ignore")),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def given(ctx: click.Context, name: str) -> bool:
    """Whether parameter *name* was given on the command line (or its environment
    variable), not left at its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def settings_file_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--settings FILE``: the project configuration file, instead of the one found
    from each judged path upward (cli.md "Where configuration is found")."""
    return click.option(
        "--settings", "settings_file", metavar="FILE",
        type=click.Path(exists=True, dir_okay=False),
        help="Read the project configuration from FILE instead of finding it from each "
        "path upward (pyproject.toml: its [tool.qrspi-guard] table; any other name: "
        "top-level keys).")(f)
