"""`qrspi-guard hook`: an agent runtime's tool-use hook (issue 8).

Exit 0 allows the tool call, exit 2 blocks it and the runtime shows stderr to the
agent. The hook's own failures (bad stdin, an unreadable file, even a bad option on
its own command line) must never block a run: they print one line on stderr and exit
0, or exit 2 under ``--fail-closed``. Only light modules are imported here; the rules
load once a path is known to be inside a review round.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

PROG = "qrspi-guard hook"


def own_failure(reason: str, fail_closed: bool) -> NoReturn:
    """One line on stderr; exit 0 (the guard is broken, the run goes on) or 2 (--fail-closed)."""
    from qrspi_guard.textsafe import one_line

    what = "blocking the tool call (--fail-closed)" if fail_closed else "allowing the tool call"
    _emit(f"{PROG}: {one_line(reason, 300)}; {what}\n")
    sys.exit(2 if fail_closed else 0)


def _emit(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class HookCommand(click.Command):
    """A click command whose usage errors do not exit 2 (which would block every write)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        raw = list(args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            own_failure(f"bad command line: {exc.format_message()}", "--fail-closed" in raw)


@click.command(cls=HookCommand)
@click.option("--event", type=click.Choice(["pre", "post"]), default=None,
              help="pre: judge a Write's content before it lands (PreToolUse). post: judge "
              "the edited file on disk (PostToolUse). Default: from hook_event_name.")
@click.option("--fail-closed", is_flag=True,
              help="The hook's own failures (bad stdin, unreadable file, bad options) "
              "exit 2 and block, instead of exit 0.")
def hook(event: str | None, fail_closed: bool) -> None:
    """Agent tool-use hook: refuse a malformed finding before it lands in a review round.

    Reads the runtime's JSON payload (tool_name, tool_input, cwd, hook_event_name) on
    stdin. Exit 0 allows; exit 2 blocks and stderr tells the agent what to fix.

    \b
    Claude Code settings.json:
      PreToolUse  matcher "Write"           command: qrspi-guard hook --event pre
      PostToolUse matcher "Edit|MultiEdit"  command: qrspi-guard hook --event post
    """
    from qrspi_guard.hook import HookFailure, decide, load_payload

    decision: Any = None
    try:
        payload = load_payload(sys.stdin.buffer.read())
        decision = decide(payload, event)
    except HookFailure as exc:
        own_failure(str(exc), fail_closed)
    except Exception as exc:  # a broken guard must not stop a run
        own_failure(f"internal error: {type(exc).__name__}: {exc}", fail_closed)
    if decision.blocks:
        _emit(decision.message)
        sys.exit(2)
    sys.exit(0)
