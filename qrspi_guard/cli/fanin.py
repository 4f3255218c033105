"""`qrspi-guard fan-in ROUND_DIR`: the drop-in for upstream's `verifier-fan-in.sh`.

Exit 0 clean, 1 on a halt (stderr names the first cause), 2 for bad arguments (one
line naming the argument) and for a run that could not finish (a write, the lock).
"""

from __future__ import annotations

import os

import click

from qrspi_guard.cli.conventions import Choice, say, say_error
from qrspi_guard.cli.process import fast_exit
from qrspi_guard.errors import UsageError
from qrspi_guard.textsafe import one_line

USAGE = "usage: qrspi-guard fan-in [--halt-on all|upstream] ROUND_DIR"
#: stderr stays bounded however many problems a round has
MAX_LINES = 10


def _round_dir(args: tuple[str, ...]) -> str:
    """The one positional ROUND_DIR, checked as upstream checks it (exit 2)."""
    if not args:
        raise UsageError(f"missing ROUND_DIR ({USAGE})")
    first = args[0]
    if first.startswith("-"):
        raise UsageError(f"positional ROUND_DIR must not begin with '-' (got: "
                         f"{one_line(first, 200)}); {USAGE}")
    if len(args) > 1:
        raise UsageError(f"unexpected argument {one_line(args[1], 200)!s} after ROUND_DIR "
                         f"({USAGE})")
    if not os.path.exists(first):
        raise UsageError(f"round-dir does not exist: {one_line(first, 400)}")
    if not os.path.isdir(first):
        raise UsageError(f"round-dir is not a directory: {one_line(first, 400)}")
    return first


@click.command(context_settings={"ignore_unknown_options": True}, epilog="""\b
Exit codes: 0 clean; 1 a halt (stderr names the first cause); 2 bad arguments, or a
run that could not finish (a write, the round lock).""")
@click.option("--halt-on", "halt_on", type=Choice(["all", "upstream"]), default="all",
              show_default=True,
              help="all: every error `check` reports for the round halts; upstream: only "
                   "verifier-fan-in.sh's seven causes halt (the others are listed).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="ROUND_DIR")
def fan_in(halt_on: str, args: tuple[str, ...]) -> None:
    """Recount ROUND_DIR's verified findings as verifier-fan-in.sh does, judged by the
    guard's rules: writes .verifier-fan-in-audit.json, then kept-findings.txt (none on
    a halt).

    \b
    Examples:
      qrspi-guard fan-in reviews/design/round-04
      qrspi-guard fan-in --halt-on upstream "$ROUND_DIR"
    """
    from qrspi_guard.loop.fanin_write import fan_in as run

    round_dir = _round_dir(args)
    outcome = run(round_dir, "upstream" if halt_on == "upstream" else "all",
                  on_wait=lambda: say(f"waiting for the round lock on {one_line(round_dir)}"))
    plan = outcome.fanin
    for what, name in plan.count.unreadable:
        say(f"cannot read {what} file: "
             f"{one_line(os.path.join(plan.count.round_dir, name), 400)}")
    errors = plan.guard_errors
    for e in errors[:MAX_LINES]:
        say(f"guard error (not halting under --halt-on upstream): "
             f"{one_line(e['finding_id'], 120)}: {e['cause']}: {one_line(e['message'], 300)}")
    if len(errors) > MAX_LINES:
        say(f"... and {len(errors) - MAX_LINES} more guard errors (audit: guard_errors)")
    if plan.halted:
        say(f"halt: {plan.first_cause}")
        for h in plan.halts[:MAX_LINES]:
            say(f"  {one_line(h.finding_id, 120)}: {h.cause}")
        if len(plan.halts) > MAX_LINES:
            say(f"  ... and {len(plan.halts) - MAX_LINES} more halts (audit: halts)")
    if outcome.error is not None:
        say_error(str(outcome.error))
    fast_exit(1 if plan.halted else 2 if outcome.error is not None else 0)


