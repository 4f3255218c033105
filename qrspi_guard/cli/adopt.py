"""`qrspi-guard adopt [DIR]` and `adopt --undo [DIR]`: the guard dropped into an upstream
checkout, and taken back out. The work is :mod:`qrspi_guard.adopt`; this module reads
the options, calls it once and prints what it did.

Exit 0 done (or nothing to do), 1 refused (a script of a version adopt does not know, a
wrapper edited by hand, ...: nothing was written; ``--force`` overrides what can be
overridden), 2 could not run (not a checkout, a link where a script should be, a kept
original that no longer matches its sha256, a write that failed).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from qrspi_guard.cli import conventions
from qrspi_guard.cli.conventions import Choice
from qrspi_guard.errors import GuardError
from qrspi_guard.hook.runtimes import NAMES as RUNTIMES
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # pragma: no cover
    from qrspi_guard.adopt.run import Outcome

PREFIX = "qrspi-guard adopt"


class Refused(GuardError):
    """A plan with a refused step: nothing was written."""

    exit_code = 1


def _say(text: str) -> None:
    click.echo(f"{PREFIX}: {text}")


def guard_argv() -> tuple[str, ...]:
    """What the wrappers run: this qrspi-guard, found as ``hook install`` finds it (the
    running console script's absolute path)."""
    from qrspi_guard.hook.install import program

    return tuple(shlex.split(program()))


@click.command()
@click.argument("checkout", metavar="[DIR]", default=".",
                type=click.Path(file_okay=True, dir_okay=True))
@click.option("--undo", is_flag=True,
              help="Put back every script adopt replaced, byte for byte and with its mode.")
@click.option("--halt-on", "halt_on", type=Choice(["all", "upstream"]), default="all",
              show_default=True,
              help="The fan-in wrapper's mode: all: every error `check` reports halts the "
                   "fan-in; upstream: only verifier-fan-in.sh's seven causes halt.")
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--force", is_flag=True,
              help="Adopt a script of a version adopt does not know, a hand-written "
                   "wrapper or a script changed since adoption; undo over a changed "
                   "wrapper.")
@click.option("--known", "known_file", metavar="FILE",
              help="More versions to accept: lines as sha256sum prints them "
                   "(a fork's own scripts).")
@click.option("--hook", "hooks", multiple=True, type=Choice(RUNTIMES),
              help="Also install the agent hook for this runtime (as `hook install` "
                   "does; repeat for both).")
@click.option("--hook-scope", type=Choice(("project", "user")), default="project",
              show_default=True, help="project: the settings under --project; user: "
                                      "under the home directory.")
@click.option("--pre-commit", "pre_commit", is_flag=True,
              help="Also add a pre-commit entry running this guard's check to "
                   "--project's .pre-commit-config.yaml.")
@click.option("--baseline", "baseline", metavar="FILE",
              help="Also record today's diagnostics under --project in FILE (relative "
                   "to --project; kept when it exists), as check --write-baseline does.")
@click.option("--project", metavar="DIR", default=".", show_default=True,
              help="The repository whose review rounds the loop writes (for --hook, "
                   "--pre-commit, --baseline).")
def adopt(checkout: str, undo: bool, halt_on: str, dry_run: bool, force: bool,
          known_file: str | None, hooks: tuple[str, ...], hook_scope: str,
          pre_commit: bool, baseline: str | None, project: str) -> None:
    """Replace an upstream checkout's four loop scripts with wrappers running this guard.

    DIR (default: .) is a checkout of dfrysinger/qrspi-plus. Each of
    scripts/review-prep.sh, round-prepare.sh, await-round.sh and verifier-fan-in.sh
    becomes a wrapper that runs this qrspi-guard by its absolute path; the script it
    replaces is kept (in .git/qrspi-guard-adopt/, or .qrspi-guard-adopt/ without git)
    and --undo puts it back. Running it again changes nothing, or points the wrappers at
    this guard. A script of a version adopt does not know is refused, by name.

    Exit 0 done, 1 refused (nothing written), 2 could not run.

    \b
    Examples:
      qrspi-guard adopt ~/src/qrspi-plus
      qrspi-guard adopt ~/src/qrspi-plus --halt-on upstream --dry-run
      qrspi-guard adopt ~/src/qrspi-plus --hook claude --pre-commit \\
          --baseline qrspi-guard-baseline.json --project ~/work/app
      qrspi-guard adopt --undo ~/src/qrspi-plus
    """
    from qrspi_guard.adopt.extras import Wanted
    from qrspi_guard.adopt.run import adopt as run_adopt
    from qrspi_guard.adopt.run import undo as run_undo
    from qrspi_guard.adopt.wrapper import Wrapper, printable_guard
    from qrspi_guard.errors import UsageError
    from qrspi_guard.hook.install import program

    def waiting() -> None:
        conventions.say(f"waiting for another adopt or undo on {one_line(checkout)}")

    wanted = Wanted(project, tuple(dict.fromkeys(hooks)), hook_scope, pre_commit, baseline)
    guard = guard_argv()
    if undo:
        if known_file is not None or wanted.any():
            raise UsageError("--known, --hook, --pre-commit and --baseline apply to "
                             "adopting; --undo takes out what adopt recorded")
        outcome = run_undo(checkout, force=force, dry_run=dry_run, on_wait=waiting)
    else:
        known = None
        if known_file is not None:
            from qrspi_guard.adopt.dropins import read_known

            known = read_known(known_file)
        if not printable_guard(guard):
            raise UsageError("this qrspi-guard's path holds a control character; install "
                             "it where a wrapper can name it")
        outcome = run_adopt(checkout, Wrapper(guard, halt_on), force=force, dry_run=dry_run,
                            known=known, wanted=wanted if wanted.any() else None,
                            prog=program(), on_wait=waiting)
    _report(outcome, undo, guard)


def _report(outcome: Outcome, undo: bool, guard: tuple[str, ...]) -> None:
    """What was done (stdout), then warnings and refusals (stderr); a refusal ends in
    :class:`Refused` (exit 1), a step that cannot be done in GuardError (exit 2)."""
    where = outcome.where
    dry = " (dry run: nothing written)" if outcome.dry_run else ""
    _say(f"{one_line(where.checkout)}, originals kept in {where.shown()}{dry}")
    problems = [p for p in [s.error or s.refused for s in outcome.steps if s.blocked]
                + [e.refused for e in outcome.extras] if p]
    if not problems:
        width = max(len(s.dropin.script) for s in outcome.steps)
        for step in outcome.steps:
            click.echo(f"  {step.dropin.script:<{width}}  {step.note}")
        for item in outcome.extras:
            click.echo(f"  {item.what}: {item.note}")
    for warning in [s.warning for s in outcome.steps] + [e.warning for e in outcome.extras]:
        if warning is not None and not problems:
            conventions.say_warning(warning)
    for problem in problems:
        conventions.say_error(problem)
    for item in outcome.extras:
        if item.refused and item.hint:
            click.echo(item.hint, nl=False, err=True)
    if problems:
        n = len(problems)
        what = "undone" if undo else "adopted"
        kind = GuardError if outcome.failed else Refused
        raise kind(f"nothing {what}: {n} problem{'s' if n > 1 else ''} (see above)")
    if not undo and not outcome.dry_run:
        shown = " ".join(shlex.quote(w) for w in guard)
        click.echo(f"  the wrappers run {one_line(shown)}; "
                   f"undo: qrspi-guard adopt --undo {shlex.quote(one_line(where.checkout))}")
