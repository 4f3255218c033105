"""`qrspi-guard split`: materialise a sandboxed reviewer's stdout as finding files."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from qrspi_guard.cli.conventions import reached, say, say_error, say_warning
from qrspi_guard.cli.process import term_as_exit
from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.split import SplitPlan
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import plural


def _diag_line(d: Diagnostic) -> str:
    where = d.file or d.path or ""
    if d.line is not None:
        where += f":{d.line}"
    return f"{where}: {d.level} {d.cause}: {d.message}"


if TYPE_CHECKING:  # click >= 8.2's ParamType is generic; click 8.1's is not subscriptable
    _IntParam = click.ParamType[int]
else:
    _IntParam = click.ParamType


class _RoundNumber(_IntParam):
    """An integer >= 1 of at most 9 digits, refused in one short line otherwise (never
    echoing a 5,000-digit value, never Python's int-digits limit)."""

    name = "N"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        text = str(value).strip()
        if text.isascii() and text.isdigit() and len(text) <= 9 and int(text) >= 1:
            return int(text)
        self.fail(f"{one_line(text, 20)!r} is not a round number (an integer from 1 to "
                  "999999999)", param, ctx)


_ROUND = _RoundNumber()


def _report(plan: SplitPlan) -> None:
    for problem in plan.problems:
        say_error(problem)
    for d in plan.diagnostics:
        say(_diag_line(d))


@click.command(
    epilog="""\b
Example (in place of scripts/codex-finding-splitter.sh):
  $ codex exec ... > /tmp/codex-quality.out
  $ qrspi-guard split /tmp/codex-quality.out \\
        docs/qrspi/run/reviews/design/round-02 quality-codex
  docs/qrspi/run/reviews/design/round-02/quality-codex.finding-F01.md
  docs/qrspi/run/reviews/design/round-02/quality-codex.finding-F02.md

\b
Exit codes: 0 files written and valid, or already there byte for byte (a rerun);
1 malformed, empty or over-16-MiB stdout, a block failing validation (written unless
--reject-invalid), or a different earlier attempt of the tag in the round
(split_would_mix_attempts, unless --replace): the causes are on stderr; 2 wrong
arguments (TAG, ROUND_DIR, --round), STDOUT unreadable, or the files could not be
written (the directory is left as it was, or split_incomplete until the next split)."""
)
@click.argument("stdout_path", metavar="STDOUT")
@click.argument("round_dir", metavar="ROUND_DIR")
@click.argument("tag", metavar="TAG")
@click.option("--replace", is_flag=True,
              help="Swap the tag's earlier findings, sidecars and clean sentinel in the "
                   "round for this attempt, in the same atomic step.")
@click.option("--reject-invalid", is_flag=True,
              help="Write nothing at all when any block fails validation.")
@click.option("--round", "round_no", type=_ROUND, default=None,
              metavar="N",
              help="The round, when ROUND_DIR is not named round-NN (test fixtures, "
                   "mktemp -d); else taken from the findings' finding_id. With a round-NN "
                   "ROUND_DIR it must equal NN.")
def split(stdout_path: str, round_dir: str, tag: str, replace: bool,
          reject_invalid: bool, round_no: int | None) -> None:
    """Turn a read-only reviewer's STDOUT (`-` for standard input) into TAG's finding
    files (or its clean sentinel) in ROUND_DIR, validated, all or nothing.

    The paths of the files written go to stdout, one per line; every failure and
    every cause, by name, goes to stderr.
    """
    from qrspi_guard.split.run import run_split

    with term_as_exit():  # a failure is a GuardError: one line and its exit code (main)
        outcome = run_split(stdout_path, round_dir, tag, replace=replace,
                            reject_invalid=reject_invalid, round_no=round_no, say=say)
    plan = outcome.plan
    _report(plan)
    for warning in outcome.warnings:
        say_warning(warning)
    reached(plan.exit_code)
    for name in plan.files:  # written now, or already there byte for byte
        click.echo(one_line(os.path.join(round_dir, name)))
    errors = plural(len(plan.errors), "validation error")
    if any(d.cause == "split_would_mix_attempts" for d in plan.diagnostics):
        pass  # its own line above says what to do
    elif plan.errors and plan.unchanged:
        say(f"{errors}; the round already held exactly these files")
    elif plan.errors and plan.writes:
        say(f"{errors}; the files were written anyway so the guard names them (pass "
            "--reject-invalid to write nothing)")
    elif plan.errors:
        say(f"{errors}; nothing written (--reject-invalid)")
    sys.exit(plan.exit_code)
