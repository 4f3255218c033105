"""`qrspi-guard hook`: an agent runtime's tool-use hook, and its installer.

A hook call (``qrspi-guard hook [OPTIONS]`` with a payload on stdin) never reaches
this module: :func:`qrspi_guard.cli.main` sends it to the click-free
:mod:`qrspi_guard.hook.run`. Click serves ``hook --help`` and the two ordinary
commands ``hook install`` and ``hook uninstall`` (exit 0 done, 2 could not run).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from qrspi_guard.cli.conventions import Choice
from qrspi_guard.hook.run import FORMATS
from qrspi_guard.hook.runtimes import ALL, EVENTS
from qrspi_guard.hook.runtimes import NAMES as RUNTIMES


def _either(words: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 2 else words)


def _event_names(event: str) -> str:
    return ", ".join(rt.events[event] for rt in ALL)


def _runtime_help(f: Callable[..., Any]) -> Callable[..., Any]:
    """The hook's help, with every runtime's names and what install writes for the first."""
    first = ALL[0]
    width = max(len(first.events[e]) for e in EVENTS)
    writes = "\n    ".join(f"  {name:<{width}} matcher \"{matcher}\"  command: PROGRAM hook "
                       f"--event {event}" for name, event, matcher in first.install_entries())
    f.__doc__ = (f.__doc__ or "").format(
        displays=_either([rt.display for rt in ALL]), runtimes="|".join(RUNTIMES),
        first=first.display, writes=writes)
    return f


class HookGroup(click.Group):
    """Usage errors in the hook's own options must not exit 2 (which would block every
    write): the same one-line, non-blocking failure as the fast route gives."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        raw = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            from qrspi_guard.hook.respond import failure
            from qrspi_guard.hook.run import emit

            emit(failure(f"bad command line: {exc.format_message()}", "--fail-closed" in raw,
                         "text", None, None))


@click.group(cls=HookGroup, invoke_without_command=True)
@click.option("--event", type=Choice(EVENTS), default=None,
              help="pre: judge a write, or an edit applied in memory, before it lands "
              f"({_event_names('pre')}). post: judge the file on disk, or the files a "
              f"shell command wrote ({_event_names('post')}). Default: from "
              "hook_event_name.")
@click.option("--runtime", type=Choice(RUNTIMES), default=None,
              help="The agent runtime whose payload and answer shapes to use. Default: "
              "from hook_event_name, else from tool_name.")
@click.option("--output-format", type=Choice(FORMATS), default="text",
              help="text: exit 2 blocks, the reason on stderr. json: exit 0, stdout one "
              "deny/block object (nothing when allowed).")
@click.option("--fail-closed", is_flag=True,
              help="The hook's own failures (bad stdin, unreadable file, bad options) "
              "block, instead of allowing.")
@click.option("--settings", "settings_file", metavar="FILE",
              help="Read the project configuration from FILE instead of finding it from "
              "each written file upward (pyproject.toml: its [tool.qrspi-guard] table).")
@click.pass_context
@_runtime_help
def hook(ctx: click.Context, event: str | None, runtime: str | None, output_format: str,
         fail_closed: bool, settings_file: str | None) -> None:
    """Agent tool-use hook: refuse a malformed finding before it lands in a review round.

    Reads the runtime's JSON payload ({displays}: tool_name, tool_input,
    cwd, hook_event_name) on stdin. Exit 0 allows; exit 2 blocks and stderr tells the
    agent what to fix (or, with --output-format json, the runtime's JSON answer).

    \b
    Install it:  qrspi-guard hook install [--runtime {runtimes}] [--scope project|user]
    {first} settings.json (what install writes; PROGRAM is the absolute path of
    this qrspi-guard, or --command):
    {writes}

    After a shell command, only the files it wrote are judged (a command that only
    reads or lists says nothing); for a script, what changed in the rounds it names.
    """
    if ctx.invoked_subcommand is None:
        from qrspi_guard.hook.run import Options, execute

        execute(Options(event, runtime, output_format, fail_closed, settings_file))


def _settings_options(f: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed([
        click.option("--runtime", type=Choice(RUNTIMES), default=RUNTIMES[0],
                     show_default=True, help=_either([f"{rt.display} ({rt.directory}/"
                                                      "settings.json)" for rt in ALL]) + "."),
        click.option("--scope", type=Choice(("project", "user")), default="project",
                     show_default=True, help="project: under the current directory; "
                     "user: under the home directory."),
        click.option("--dry-run", is_flag=True,
                     help="Print the merged settings file; write nothing."),
    ]):
        f = option(f)
    return f


@hook.command()
@_settings_options
@click.option("--command", "program", metavar="COMMAND",
              help="The program the hook runs, as the agent's shell should run it "
              "[default: the absolute path of this qrspi-guard].")
def install(runtime: str, scope: str, dry_run: bool, program: str | None) -> None:
    """Add the pre and post hooks to the runtime's settings file (idempotent).

    The hook command runs this qrspi-guard by its absolute path, so it works from the
    agent's shell whatever its PATH (or give --command). Every other setting and hook
    is kept; the old file is kept beside it as settings.json.qrspi-guard.bak. Exit 0
    done, 2 could not run (a settings file that does not parse, a symbolic link, a
    read-only file).

    \b
    Example:
      qrspi-guard hook install --runtime claude
      qrspi-guard hook install --command '"$CLAUDE_PROJECT_DIR"/.venv/bin/qrspi-guard'
    """
    _change(runtime, scope, dry_run, remove=False, program=program)


@hook.command()
@_settings_options
def uninstall(runtime: str, scope: str, dry_run: bool) -> None:
    """Remove exactly the hooks that install adds. Exit 0 done, 2 could not run."""
    _change(runtime, scope, dry_run, remove=True)


def _change(runtime: str, scope: str, dry_run: bool, remove: bool,
            program: str | None = None) -> None:
    from qrspi_guard.hook.install import change, settings_path, warnings
    from qrspi_guard.hook.runtimes import BY_NAME
    from qrspi_guard.textsafe import one_line

    path = settings_path(runtime, scope)
    events, text, backup = change(path, runtime, remove, dry_run, program)
    shown = one_line(path)
    if dry_run:
        click.echo(text, nl=False)
        return
    if not events:
        state = "not installed in" if remove else "already installed in"
        click.echo(f"qrspi-guard hook: {state} {shown}; nothing changed")
    else:
        verb = "removed from" if remove else "installed in"
        kept = f"; the old file is {one_line(backup)}" if backup else ""
        click.echo(f"qrspi-guard hook: {BY_NAME[runtime].display} hooks {verb} {shown} "
                   f"({', '.join(events)}){kept}")
    if remove:
        return
    sys.stdout.flush()
    for line in warnings(runtime, text, shown, scope, os.getcwd()):
        click.echo(f"qrspi-guard hook: warning: {line}", err=True)
