"""``qrspi-guard lockout``: the reviewer-rejection lockout ledger, as a thin click shell.

All rules live in :mod:`qrspi_guard.lockout`; this module parses arguments, calls the
core, and prints. Exit codes: 0 allowed/recorded, 1 refused, 3 deadlock (escalate to
the user), 2 bad arguments or an unreadable, corrupt or unwritable ledger.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

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
from qrspi_guard.lockout.state import (
    ArtifactState,
    LockoutError,
    Plan,
    State,
    Verdict,
    evaluate,
    normalise_artifact,
    plan_approve,
    plan_assign,
    plan_author,
    plan_reject,
    plan_roster,
    plan_unlock,
)
from qrspi_guard.textsafe import one_line, path_at_line_start

EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_ERROR = 2
EXIT_DEADLOCK = 3

_OUTCOME_EXIT = {"recorded": EXIT_OK, "refused": EXIT_REFUSED, "deadlock": EXIT_DEADLOCK}

_WHY = {
    "original_author": "wrote the version first rejected in this cycle",
    "locked_out": "was locked out by a rejection in this cycle",
    "rejecting_gate": "rejected this artifact in this cycle; a rejecting gate may not "
                      "author the revision",
    "not_on_roster": "is not on the roster, and the decision is reassign",
}

PROG = "qrspi-guard lockout"


def _s(text: object) -> str:
    return one_line(text, limit=500)


def _names(names: list[str]) -> str:
    return ", ".join(_s(n) for n in names) if names else "none"


def _fail(message: str) -> NoReturn:
    click.echo(f"{PROG}: error: {_s(message)}", err=True)
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
    click.echo(f"{PROG}: warning: {_s(msg)}", err=True)


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
        "--format", "fmt", type=click.Choice(["text", "json"]), default="text",
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
        state, snap = Ledger(path).state()
    except LedgerError as exc:
        _fail(str(exc))
    _warn_torn(path, snap.torn, dropped=False)
    return path, state, snap


def _eligible_text(v: Verdict, escalate: bool) -> str:
    if v.eligible is None:
        text = (f"eligible: any agent except {_names(v.excluded)} (no roster recorded)"
                if v.excluded else "eligible: any agent (no roster recorded)")
    else:
        text = f"eligible: {_names(v.eligible)}"
    if escalate:
        text += " (or a new agent: the decision is escalate)"
    return text


def _verdict_line(v: Verdict, state: State, verb: str) -> str:
    a = state.artifact(v.artifact)
    escalate = a.cycle_open and a.decision == "escalate"
    if v.deadlock:
        return (f"deadlock: every agent on the roster is locked out of {_s(v.artifact)} "
                f"(locked out: {_names(a.locked)}; rejecting gates: {_names(a.gates)}); "
                "escalate to the user: name a new agent after adding it with "
                "'lockout roster', or 'lockout unlock ... --by user'")
    if not v.allowed:
        assert v.reason is not None
        return (f"refused: {_s(v.agent)} may not {verb} {_s(v.artifact)}: {v.reason} "
                f"({_s(v.agent)} {_WHY[v.reason]}); {_eligible_text(v, escalate)}")
    return f"allowed: {_s(v.agent)} may {verb} {_s(v.artifact)}"


@click.group("lockout")
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
    if plan.outcome == "refused":
        assert plan.verdict is not None
        click.echo(_verdict_line(plan.verdict, result.before, "author"))
    else:
        a = result.after.artifact(ev.artifact)
        click.echo(f"recorded: {_s(ev.agent)} authored {_s(ev.artifact)} "
                   f"(cycle {a.cycle}, seq {ev.seq})")
    sys.exit(_OUTCOME_EXIT[plan.outcome])


@lockout.command("reject")
@click.argument("artifact")
@click.option("--reviewer", required=True, help="The rejecting reviewer (gate).")
@click.option("--decision", required=True, type=click.Choice(["reassign", "escalate"]),
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
    click.echo(f"recorded: {_s(ev.reviewer)} rejected {_s(ev.artifact)} ({ev.decision}, "
               f"cycle {a.cycle}, seq {ev.seq}); locked out: {_names(a.locked)}; "
               f"rejecting gates: {_names(a.gates)}")
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
    if plan.outcome == "recorded":
        a = result.after.artifact(ev.artifact)
        extra = ""
        if ev.joined_roster:
            extra += "; joined the roster"
        if ev.expertise:
            extra += f"; expertise: {_s(ev.expertise)}"
        click.echo(f"recorded: {_s(ev.agent)} assigned to revise {_s(ev.artifact)} "
                   f"(cycle {a.cycle}, seq {ev.seq}){extra}")
    else:
        assert plan.verdict is not None
        click.echo(_verdict_line(plan.verdict, result.before, "revise"))
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
    click.echo(f"recorded: {_s(ev.reviewer)} approved {_s(ev.artifact)} (cycle {a.cycle} "
               f"closed, seq {ev.seq}); lockouts cleared: {_names(a.excluded())}")
    sys.exit(EXIT_OK)


@lockout.command("unlock")
@click.argument("artifact")
@click.argument("agent")
@click.option("--by", "by", required=True, type=click.Choice(["user"]),
              help="Who overrides the lockout: only 'user'.")
@ledger_option
@click.pass_context
def unlock_cmd(ctx: click.Context, artifact: str, agent: str, by: str,
               ledger: str | None) -> None:
    """The user's explicit override: let AGENT author ARTIFACT again this cycle."""
    result = _write(ctx, ledger, lambda st: plan_unlock(st, artifact, agent, by))
    ev = result.event
    click.echo(f"recorded: user unlocked {_s(ev.agent)} on {_s(ev.artifact)} "
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
    click.echo(f"recorded: roster {_names(ev.agents)} (seq {ev.seq})")
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
    code = EXIT_DEADLOCK if v.deadlock else EXIT_OK if v.allowed else EXIT_REFUSED
    if fmt == "json":
        data = v.to_dict()
        data.update(ledger=str(path), exit_code=code, torn_tail=_torn_json(snap.torn))
        click.echo(json.dumps(data, ensure_ascii=True, sort_keys=True))
    else:
        click.echo(_verdict_line(v, state, "write"))
    sys.exit(code)


def _torn_json(torn: TornTail | None) -> dict[str, int] | None:
    return None if torn is None else {"line": torn.line, "bytes": torn.size}


def _artifact_json(a: ArtifactState, state: State) -> dict[str, Any]:
    data = a.to_dict()
    excluded = a.excluded()
    data["excluded"] = excluded
    data["eligible"] = ([r for r in state.roster if r not in excluded]
                        if state.roster is not None else None)
    data["deadlocked"] = bool(a.cycle_open and a.decision == "reassign"
                              and data["eligible"] == [])
    return data


def _artifact_text(d: dict[str, Any]) -> list[str]:
    status = "open" if d["cycle_open"] else ("approved" if d["approved_by"] else "none")
    lines = [path_at_line_start(one_line(d["artifact"], limit=500)),  # never `::` first
             f"  cycle: {d['cycle']} ({status})",
             f"  current author: {_s(d['current_author'] or '-')}"]
    if d["original_author"]:
        lines.append(f"  original author: {_s(d['original_author'])}"
                     + (" (unlocked by user)" if d["original_author_unlocked"] else ""))
    lines.append(f"  locked out: {_names(d['locked'])}")
    lines.append(f"  rejecting gates: {_names(d['gates'])}")
    last = d["last_decision"] or "-"
    if d["last_decision"] in ("reassign", "escalate"):
        last += f" by {_s(d['rejected_by'])}: {_s(d['reason'])}"
        if d["expertise"]:
            last += f" (expertise: {_s(d['expertise'])})"
    elif d["last_decision"] == "approved":
        last += f" by {_s(d['approved_by'])}"
    lines.append(f"  last decision: {last}")
    if d["eligible"] is not None:
        lines.append(f"  eligible: {_names(d['eligible'])}")
    if d["deadlocked"]:
        lines.append("  DEADLOCK: every agent on the roster is locked out; escalate to the user")
    return lines


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
    rows = [_artifact_json(a, state) for a in items]
    if fmt == "json":
        click.echo(json.dumps({"ledger": str(path), "events": state.last_seq,
                               "roster": state.roster, "torn_tail": _torn_json(snap.torn),
                               "artifacts": rows}, ensure_ascii=True, sort_keys=True))
        sys.exit(EXIT_OK)
    click.echo(f"ledger: {_s(str(path))} ({state.last_seq} events)")
    click.echo(f"roster: {_names(state.roster) if state.roster is not None else '(none)'}")
    if not rows:
        click.echo("no artifacts recorded")
    for d in rows:
        for line in _artifact_text(d):
            click.echo(line)
    sys.exit(EXIT_OK)
