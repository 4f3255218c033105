"""`qrspi-guard split`: materialise a sandboxed reviewer's stdout as finding files."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from qrspi_guard.diagnostics import Diagnostic
from qrspi_guard.discover import round_of_dir
from qrspi_guard.split import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, SplitPlan, plan_split, tag_is_valid
from qrspi_guard.textsafe import one_line

PREFIX = "qrspi-guard split"


def _err(text: str) -> None:
    click.echo(f"{PREFIX}: {one_line(text)}", err=True)


def _fail(text: str, code: int = EXIT_USAGE) -> None:
    _err(text)
    sys.exit(code)


def _diag_line(d: Diagnostic) -> str:
    where = d.file or d.path or ""
    if d.line is not None:
        where += f":{d.line}"
    return f"{where}: {d.level} {d.cause}: {d.message}"


def _read_stdout(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        _fail(f"cannot read STDOUT {path}: {exc.strerror or exc}")
        raise AssertionError("unreachable") from None


@contextmanager
def _term_as_exit() -> Iterator[None]:
    """SIGTERM/SIGHUP become SystemExit, so an interrupted split undoes its writes."""
    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    saved = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None:
            saved[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def _report(plan: SplitPlan) -> None:
    for problem in plan.problems:
        _err(problem)
    for d in plan.diagnostics:
        _err(_diag_line(d))


@click.command(
    epilog="""\b
Example (in place of scripts/codex-finding-splitter.sh):
  $ codex exec ... > /tmp/codex-quality.out
  $ qrspi-guard split /tmp/codex-quality.out \\
        docs/qrspi/run/reviews/design/round-02 quality-codex
  docs/qrspi/run/reviews/design/round-02/quality-codex.finding-F01.md
  docs/qrspi/run/reviews/design/round-02/quality-codex.finding-F02.md

\b
Exit codes: 0 files written and valid; 1 malformed or empty stdout, a block failing
validation (written unless --reject-invalid), or earlier output of the tag in the
round (split_would_mix_attempts, unless --replace): the causes are on stderr;
2 wrong arguments, round directory missing or not round-NN, or the files could not
be written (the directory is left as it was)."""
)
@click.argument("stdout_path", metavar="STDOUT")
@click.argument("round_dir", metavar="ROUND_DIR")
@click.argument("tag", metavar="TAG")
@click.option("--replace", is_flag=True,
              help="Swap the tag's earlier findings, sidecars and clean sentinel in the "
                   "round for this attempt, in the same atomic step.")
@click.option("--reject-invalid", is_flag=True,
              help="Write nothing at all when any block fails validation.")
def split(stdout_path: str, round_dir: str, tag: str, replace: bool,
          reject_invalid: bool) -> None:
    """Turn a read-only reviewer's STDOUT (`-` for standard input) into TAG's finding
    files (or its clean sentinel) in ROUND_DIR, validated, all or nothing.

    The paths of the files written go to stdout, one per line; every failure and
    every cause, by name, goes to stderr.
    """
    from qrspi_guard.splitio import SplitIOError, execute

    if not tag_is_valid(tag):
        _fail(f"TAG {tag!r} does not match the tag grammar ^[a-z0-9][a-z0-9-]*$ "
              "(lower case)")
    if not os.path.isdir(round_dir):
        _fail(f"ROUND_DIR {round_dir} does not exist or is not a directory")
    ref = round_of_dir(round_dir)
    if ref is None:
        _fail(f"ROUND_DIR {round_dir} is not a round directory (round-NN, NN >= 01)")
        return
    try:
        names = os.listdir(round_dir)
    except OSError as exc:
        _fail(f"cannot list ROUND_DIR {round_dir}: {exc.strerror or exc}")
        return
    data = _read_stdout(stdout_path)
    plan = plan_split(data, ref, tag, names, replace=replace, reject_invalid=reject_invalid)
    _report(plan)
    if plan.writes:
        try:
            with _term_as_exit():
                warnings = execute(plan)
        except SplitIOError as exc:
            _fail(str(exc), EXIT_USAGE)
        for warning in warnings:
            _err(f"warning: {warning}")
        for write in plan.writes:
            click.echo(one_line(os.path.join(round_dir, write.name)))
    errors = len(plan.errors)
    if any(d.cause == "split_would_mix_attempts" for d in plan.diagnostics):
        pass  # its own line above says what to do
    elif errors and plan.writes:
        _err(f"{errors} validation error(s); the files were written anyway so the guard "
             "names them (pass --reject-invalid to write nothing)")
    elif errors:
        _err(f"{errors} validation error(s); nothing written (--reject-invalid)")
    sys.exit(plan.exit_code if plan.exit_code in (EXIT_OK, EXIT_REFUSED) else EXIT_USAGE)
