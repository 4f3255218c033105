"""`qrspi-guard check`: one-shot validation and CI gate (cli.md)."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

from qrspi_guard.cli.options import build_overrides, override_options
from qrspi_guard.report import FORMATS, ReportOptions


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text",
              show_default=True, help="Output format.")
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@override_options
@click.option("--write-status", is_flag=True,
              help="Write round-NN-guard.json beside each round checked.")
@click.option("--fix", is_flag=True, help="Normalise trailing newlines (the only fix).")
@click.option("--output", "output", type=click.Path(dir_okay=False),
              help="Write the chosen machine format to FILE; text still goes to stdout.")
@click.option("--quiet", "-q", is_flag=True, help="Only errors (and the summary).")
@click.option("--no-color", is_flag=True, help="Never colour the text output.")
def check(paths: tuple[str, ...], fmt: str, strict: bool, step: str | None,
          second_reviewer: bool | None, verifier: bool | None, require_sidecars: bool,
          expect: str | None, config_file: str | None, protocol: str, round_no: int | None,
          write_status: bool, fix: bool, output: str | None, quiet: bool,
          no_color: bool) -> None:
    """Validate review rounds under PATH (default: .) and exit 0, 1 (halt) or 2.

    \b
    Examples:
      qrspi-guard check docs/qrspi/2026-05-17-auth-rework
      qrspi-guard check reviews/design/round-03 --format github
      qrspi-guard check . --format sarif --output guard.sarif
    """
    from qrspi_guard.engine import check_paths
    from qrspi_guard.report import renderer
    from qrspi_guard.textsafe import one_line

    overrides = build_overrides(step, second_reviewer, verifier, require_sidecars, expect,
                                config_file, protocol, round_no)
    if fix:
        from qrspi_guard.fix import fix_trailing_newlines

        for fixed in fix_trailing_newlines(paths or ("."), overrides):
            click.echo(f"fixed trailing newline: {one_line(fixed)}", err=True)
    result = check_paths(paths, overrides)
    color = (not no_color and "NO_COLOR" not in os.environ and fmt == "text"
             and output is None and sys.stdout.isatty())
    options = ReportOptions(strict=strict, quiet=quiet, color=color)
    if output is not None:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(renderer(fmt if fmt != "text" else "json")(result, options))
        except OSError as exc:
            click.echo(f"qrspi-guard: error: cannot write {one_line(output)}: {exc.strerror}",
                       err=True)
            sys.exit(2)
        click.echo(renderer("text")(result, options), nl=False)
    else:
        click.echo(renderer(fmt)(result, options), nl=False)
    if fmt == "github" and os.environ.get("GITHUB_STEP_SUMMARY"):
        from qrspi_guard.report.github import step_summary

        try:
            with open(os.environ["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
                fh.write(step_summary(result))
        except OSError as exc:
            click.echo(f"qrspi-guard: warning: cannot write the step summary: {exc.strerror}",
                       err=True)
    if write_status:
        from qrspi_guard.status import write_status as write_one

        for r in result.rounds:
            try:
                write_one(r)
            except OSError as exc:
                click.echo(f"qrspi-guard: error: cannot write status for "
                           f"{one_line(r.ref.round_dir)}: {exc.strerror}", err=True)
                sys.exit(2)
    _exit(1 if result.failed(strict) else 0)


def _exit(code: int) -> NoReturn:
    """Exit with *code*. From the console script, skip the interpreter's teardown once
    the output is flushed: freeing every module and object costs milliseconds that a
    pre-commit user waits for, and `check` has nothing left to clean up (files it
    wrote are closed). Embedded callers (click's runner, tests) exit normally."""
    if (os.path.basename(sys.argv[0]).startswith("qrspi-guard")
            and sys.stdout is sys.__stdout__ and sys.stderr is sys.__stderr__
            and not os.environ.get("QRSPI_GUARD_NO_FAST_EXIT")):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # e.g. a closed pipe: let the normal exit report it
        else:
            os._exit(code)
    sys.exit(code)
