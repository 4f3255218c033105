"""`qrspi-guard await --round-dir ROUND_DIR`: the drop-in for upstream's
``scripts/await-round.sh`` (loop.md). The drain is :mod:`qrspi_guard.loop.awaiting`;
this module parses the arguments (a bad one exits 1, upstream's code:
:data:`~qrspi_guard.cli.conventions.BAD_ARGUMENT`), hands
the drain ``split``'s core for the fallback split, and prints the bounded report."""

from __future__ import annotations

import math
import sys
from typing import Any

import click

from qrspi_guard.cli.conventions import reached, say
from qrspi_guard.cli.process import term_as_exit
from qrspi_guard.textsafe import one_line


def _timeout(text: str | None) -> float:
    from qrspi_guard.loop.awaiting import DEFAULT_TIMEOUT, AwaitUsageError

    if text is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 1e9):
        raise AwaitUsageError(f"--timeout {one_line(text, 20)!r} is not a number of seconds "
                              "(greater than 0, at most 1e9)")
    return value


def _fallback(data: bytes, round_dir: Any, tag: str) -> Any:
    """``split``'s core on a raw capture into the open round, under the round's lock the
    drain holds."""
    from qrspi_guard.errors import GuardError
    from qrspi_guard.loop.drain import Fallback
    from qrspi_guard.split.run import split_held

    try:
        outcome = split_held(data, round_dir, tag)
    except GuardError as exc:
        return Fallback(failure=one_line(str(exc), 160))
    plan = outcome.plan
    files = tuple(plan.files)
    mixed = [d for d in plan.diagnostics if d.cause == "split_would_mix_attempts"]
    if plan.problems or mixed or not files:
        why = plan.problems[0] if plan.problems else (
            "split_would_mix_attempts (the tag already has other output in the round)"
            if mixed else "nothing to write")
        return Fallback(failure=why)
    return Fallback(files=files, causes=tuple(sorted({d.cause for d in plan.errors})))


def _toplevel(cwd: str) -> tuple[str, str] | None:
    """The git top level and git directory of the working directory *cwd* (the top
    level's ``scripts/`` is an exec root), if any."""
    from qrspi_guard.errors import GuardError
    from qrspi_guard.loop.git import toplevel

    try:
        return toplevel(cwd)
    except GuardError:  # git itself missing: no repository root to add
        return None


@click.command(
    epilog="""\b
Example (in place of scripts/await-round.sh):
  $ qrspi-guard await --round-dir docs/qrspi/run/reviews/design/round-02
  qrspi-guard await: drained 2 background dispatch(es); 1 with findings, 1 clean.

\b
Exit codes: 0 every entry drained; 1 an entry failed (refused, timed out, a command
failed, a capture that splits to nothing), bad arguments, a manifest that is not a JSON
array (left as it was), or another run holding the round past the wait.""")
@click.option("--round-dir", "round_dir", metavar="ROUND_DIR", default=None,
              help="The round whose .dispatch-manifest.json to drain.")
@click.option("--timeout", "timeout", metavar="SECONDS", default=None,
              help="Seconds each manifest command may run before its process group is "
                   "killed and its entry failed (default 3600).")
def await_round(round_dir: str | None, timeout: str | None) -> None:
    """Drain a round's background reviewers: run each pending entry's await_cmd and
    split_cmd (no shell; argv[0] under an exec root: $QRSPI_AWAIT_EXEC_ROOTS or
    <git top level>/scripts of the working directory's repository, or the bare name
    codex; never a program in the round or its run's reviews/ tree), split .dispatch/<tag>.raw for a
    tag with no finding files, write the statuses back into the manifest, then
    .round-complete.json, then remove .dispatch/ when every entry drained.

    Output stays under 2 KiB and never holds a byte of a capture.
    """
    from qrspi_guard.loop.awaiting import AwaitUsageError
    from qrspi_guard.loop.awaiting import await_round as drain

    if not round_dir:
        raise AwaitUsageError("required flag missing: --round-dir ROUND_DIR")
    seconds = _timeout(timeout)
    with term_as_exit():
        report = drain(round_dir, splitter=_fallback, timeout=seconds, toplevel=_toplevel,
                       say=say)
    for line in report.lines:
        click.echo(line, err=True)
    reached(report.exit_code)
    click.echo(report.summary)
    sys.exit(report.exit_code)
