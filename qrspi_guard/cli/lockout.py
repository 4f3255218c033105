"""``qrspi-guard lockout``: the reviewer-rejection lockout ledger, as a thin click shell.

All rules live in :mod:`qrspi_guard.lockout` (the rendering in :mod:`.lockout.render`);
this module parses arguments, calls the core, and prints. Exit codes: 0 allowed/recorded,
1 refused, 3 deadlock (escalate to the user), 2 bad arguments or an unreadable, corrupt or
unwritable ledger.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from qrspi_guard.cli.conventions import Choice, Group, reached, say_error, say_warning
from qrspi_guard.lockout.ledger import (
    DEFAULT_LEDGER,
    ENV_VAR,
    Ledger,
    LedgerError,
    Snapshot,
    TornTail,
    WriteResult,
    resolve_path,
)
from qrspi_guard.lockout.render import (
    artifact_json,
    artifact_text,
    names,
    safe,
    torn_json,
    verdict_line,
)
from qrspi_guard.lockout.state import (
    LockoutError,
    Plan,
    State,
    evaluate,
    normalise_artifact,
    plan_approve,
    plan_assign,
    plan_author,
    plan_reject,
    plan_roster,
    plan_unlock,
)
from qrspi_guard.parse import jsondoc

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_ERROR = 2
EXIT_DEADLOCK = 3

_OUTCOME_EXIT = {"recorded": EXIT_OK, "refused": EXIT_REFUSED, "deadlock": EXIT_DEADLOCK}


def _fail(message: str) -> NoReturn:
    say_error(safe(message))
    sys.exit(EXIT_ERROR)


def _warn_torn(path: Path, torn: TornTail | None, dropped: bool) -> None:
    if torn is None:
        return
    if dropped:
        msg = (f"ledger {path}: dropped torn final line {torn.line} ({torn.size} bytes "
               "without a newline, from an interrupted write) before appending")
    else:
        msg = (f"ledger {path}: ignoring torn final line {torn.line} ({torn.size} bytes "
               "without a newline, from an interrupted write)")
    say_warning(safe(msg))


def _ledger_path(ctx: click.Context, option: str | None) -> Path:
    group = (ctx.obj or {}).get("ledger") if isinstance(ctx.obj, dict) else None
    return resolve_path(option or group)


def ledger_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--ledger", "ledger", default=None, metavar="PATH",
        help=f"Ledger file (default: ${ENV_VAR}, else reviews/lockout.jsonl).",
    )(func)


def format_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format", "fmt", type=Choice(["text", "json"]), default="text",
        show_default=True, help="text for people, json for machines.",
    )(func)


def _write(ctx: click.Context, option: str | None,
           planner: Callable[[State], Plan]) -> WriteResult:
    path = _ledger_path(ctx, option)
    try:
        result = Ledger(path, create_parents=path == DEFAULT_LEDGER).write(planner)
    except (LedgerError, LockoutError) as exc:
        _fail(str(exc))
    _warn_torn(path, result.dropped, dropped=True)
    return result


def _read(ctx: click.Context, option: str | None) -> tuple[Path, State, Snapshot]:
    path = _ledger_path(ctx, option)
    try:
        state, snap = Ledger(path, create_parents=path == DEFAULT_LEDGER).state()
    except LedgerError as exc:
        _fail(str(exc))
    _warn_torn(path, snap.torn, dropped=False)
    return path, state, snap


@click.group("lockout", cls=Group)
@click.option("--ledger", "ledger", default=None, metavar="PATH",
              help=f"Ledger file (default: ${ENV_VAR}, else reviews/lockout.jsonl).")
@click.pass_context
def lockout(ctx: click.Context, ledger: str | None) -> None:
    """Reviewer-rejection lockout: a rejected artifact's author may not revise it.

    Every command replays the append-only ledger; writes happen under an exclusive
    file lock. Exit codes: 0 allowed/recorded, 1 refused, 3 deadlock (escalate to the
    user), 2 bad arguments or an unreadable ledger.
    """
    ctx.obj = {"ledger": ledger}


@lockout.command("author")
@click.argument("artifact")
@click.argument("agent")
@ledger_option
@click.pass_context
def author_cmd(ctx: click.Context, artifact: str, agent: str, ledger: str | None) -> None:
    """Record that AGENT wrote the current version of ARTIFACT (refused if locked out)."""
    result = _write(ctx, ledger, lambda st: plan_author(st, artifact, agent))
    plan, ev = result.plan, result.event
    reached(_OUTCOME_EXIT[plan.outcome])  # a closed pipe ends the run with it
    if plan.outcome == "refused":
        assert plan.verdict is not None
        click.echo(verdict_line(plan.verdict, result.before, "author"))
    else:
        a = result.after.artifact(ev.artifact)
        click.echo(f"recorded: {safe(ev.agent)} authored {safe(ev.artifact)} "
                   f"(cycle {a.cycle}, seq {ev.seq})")
    sys.exit(_OUTCOME_EXIT[plan.outcome])


@lockout.command("reject")
@click.argument("artifact")
@click.option("--reviewer", required=True, help="The rejecting reviewer (gate).")
@click.option("--decision", required=True, type=Choice(["reassign", "escalate"]),
              help="reassign: a different agent revises; escalate: new expertise needed.")
@click.option("--reason", required=True, help="Why the version is rejected.")
@click.option("--evidence", default=None, help="Concrete counter-evidence.")
@click.option("--requirement", default=None, help="The violated requirement.")
@click.option("--scope", default=None, help="The affected scope.")
@click.option("--condition", default=None, help="The minimum condition for approval.")
@click.option("--expertise", default=None, help="Expertise the revision needs (escalate).")
@ledger_option
@click.pass_context
def reject_cmd(ctx: click.Context, artifact: str, reviewer: str, decision: str, reason: str,
               evidence: str | None, requirement: str | None, scope: str | None,
               condition: str | None, expertise: str | None, ledger: str | None) -> None:
    """Reject ARTIFACT: lock its current author (and the reviewer) out for this cycle."""
    result = _write(ctx, ledger, lambda st: plan_reject(
        st, artifact, reviewer, decision, reason, evidence=evidence,
        requirement=requirement, scope=scope, condition=condition, expertise=expertise))
    ev = result.event
    a = result.after.artifact(ev.artifact)
    click.echo(f"recorded: {safe(ev.reviewer)} rejected {safe(ev.artifact)} ({ev.decision}, "
               f"cycle {a.cycle}, seq {ev.seq}); locked out: {names(a.locked)}; "
               f"rejecting gates: {names(a.gates)}")
    sys.exit(EXIT_OK)


@lockout.command("assign")
@click.argument("artifact")
@click.argument("agent")
@ledger_option
@click.pass_context
def assign_cmd(ctx: click.Context, artifact: str, agent: str, ledger: str | None) -> None:
    """Name AGENT the revision author of ARTIFACT (exit 1 refused, 3 deadlock)."""
    result = _write(ctx, ledger, lambda st: plan_assign(st, artifact, agent))
    plan, ev = result.plan, result.event
    reached(_OUTCOME_EXIT[plan.outcome])  # a closed pipe ends the run with it
    if plan.outcome == "recorded":
        a = result.after.artifact(ev.artifact)
        extra = ""
        if ev.joined_roster:
            extra += "; joined the roster"
        if ev.expertise:
            extra += f"; expertise: {safe(ev.expertise)}"
        click.echo(f"recorded: {safe(ev.agent)} assigned to revise {safe(ev.artifact)} "
                   f"(cycle {a.cycle}, seq {ev.seq}){extra}")
    else:
        assert plan.verdict is not None
        click.echo(verdict_line(plan.verdict, result.before, "revise"))
    sys.exit(_OUTCOME_EXIT[plan.outcome])


@lockout.command("approve")
@click.argument("artifact")
@click.option("--reviewer", required=True, help="The approving reviewer.")
@ledger_option
@click.pass_context
def approve_cmd(ctx: click.Context, artifact: str, reviewer: str, ledger: str | None) -> None:
    """Approve ARTIFACT: the cycle ends and its lockouts clear."""
    result = _write(ctx, ledger, lambda st: plan_approve(st, artifact, reviewer))
    ev = result.event
    a = result.before.artifact(ev.artifact)
    click.echo(f"recorded: {safe(ev.reviewer)} approved {safe(ev.artifact)} (cycle {a.cycle} "
               f"closed, seq {ev.seq}); lockouts cleared: {names(a.excluded())}")
    sys.exit(EXIT_OK)


@lockout.command("unlock")
@click.argument("artifact")
@click.argument("agent")
@click.option("--by", "by", required=True, type=Choice(["user"]),
              help="Who overrides the lockout: only 'user'.")
@ledger_option
@click.pass_context
def unlock_cmd(ctx: click.Context, artifact: str, agent: str, by: str,
               ledger: str | None) -> None:
    """The user's explicit override: let AGENT author ARTIFACT again this cycle."""
    result = _write(ctx, ledger, lambda st: plan_unlock(st, artifact, agent, by))
    ev = result.event
    click.echo(f"recorded: user unlocked {safe(ev.agent)} on {safe(ev.artifact)} "
               f"(seq {ev.seq})")
    sys.exit(EXIT_OK)


@lockout.command("roster")
@click.argument("agents", nargs=-1, required=True)
@ledger_option
@click.pass_context
def roster_cmd(ctx: click.Context, agents: tuple[str, ...], ledger: str | None) -> None:
    """Record the eligible agents (replaces the roster; used for deadlock detection)."""
    result = _write(ctx, ledger, lambda st: plan_roster(st, list(agents)))
    ev = result.event
    click.echo(f"recorded: roster {names(ev.agents)} (seq {ev.seq})")
    sys.exit(EXIT_OK)


@lockout.command("check")
@click.argument("artifact")
@click.argument("agent")
@format_option
@ledger_option
@click.pass_context
def check_cmd(ctx: click.Context, artifact: str, agent: str, fmt: str,
              ledger: str | None) -> None:
    """Read-only: may AGENT write ARTIFACT now? (exit 0 yes, 1 refused, 3 deadlock)"""
    path, state, snap = _read(ctx, ledger)
    try:
        v = evaluate(state, artifact, agent)
    except LockoutError as exc:
        _fail(str(exc))
    code = reached(EXIT_DEADLOCK if v.deadlock else EXIT_OK if v.allowed else EXIT_REFUSED)
    if fmt == "json":
        data = v.to_dict()
        data.update(ledger=str(path), exit_code=code, torn_tail=torn_json(snap.torn))
        click.echo(jsondoc.dumps(data, ensure_ascii=True, sort_keys=True))
    else:
        click.echo(verdict_line(v, state, "write"))
    sys.exit(code)


@lockout.command("status")
@click.argument("artifact", required=False)
@format_option
@ledger_option
@click.pass_context
def status_cmd(ctx: click.Context, artifact: str | None, fmt: str, ledger: str | None) -> None:
    """Per artifact: current author, cycle, locked-out agents, last decision."""
    path, state, snap = _read(ctx, ledger)
    if artifact is not None:
        try:
            key = normalise_artifact(artifact)
        except LockoutError as exc:
            _fail(str(exc))
        items = [state.artifact(key)]
    else:
        items = [state.artifacts[k] for k in sorted(state.artifacts)]
    rows = [artifact_json(a, state) for a in items]
    if fmt == "json":
        click.echo(jsondoc.dumps({"ledger": str(path), "events": state.last_seq,
                               "roster": state.roster, "torn_tail": torn_json(snap.torn),
                               "artifacts": rows}, ensure_ascii=True, sort_keys=True))
        sys.exit(EXIT_OK)
    click.echo(f"ledger: {safe(str(path))} ({state.last_seq} events)")
    click.echo(f"roster: {names(state.roster) if state.roster is not None else '(none)'}")
    if not rows:
        click.echo("no artifacts recorded")
    for d in rows:
        for line in artifact_text(d):
            click.echo(line)
    sys.exit(EXIT_OK)
