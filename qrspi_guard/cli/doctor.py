"""`qrspi-guard doctor [DIR]`: one screen of what is in place and what is not. The
looking is :mod:`qrspi_guard.adopt.doctor`; this module prints it.

Exit 0 healthy (nothing broken, the required parts in place), 1 not, 2 could not run.
"""

from __future__ import annotations

import click

from qrspi_guard.cli.conventions import Choice

#: how each state is marked in the text form
MARKS = {"ok": "ok", "no": "--", "warn": "!", "bad": "!!"}


@click.command()
@click.argument("checkout", metavar="[DIR]", required=False)
@click.option("--project", metavar="DIR", default=".", show_default=True,
              help="The repository whose review rounds the loop writes (its hook "
                   "settings, pre-commit entry and baseline).")
@click.option("--known", "known_file", metavar="FILE",
              help="More script versions to recognise, as adopt --known takes them.")
@click.option("--format", "fmt", type=Choice(["text", "json"]), default="text",
              show_default=True)
def doctor(checkout: str | None, project: str, known_file: str | None, fmt: str) -> None:
    """Say what is in place: this guard, the upstream checkout's wrappers, the agent
    hook (each runtime, project and user), the plugin and extension, the pre-commit
    entry and the baseline.

    DIR is the upstream checkout (default: --project, when it is one). Marks: ok; --
    not in place; ! in place, with something to know; !! broken (it would fail, or
    fail open, when used).

    Exit 0 when nothing is broken and the checkout's scripts (when there is a
    checkout) and an agent hook somewhere are in place; 1 otherwise; 2 could not run.

    \b
    Examples:
      qrspi-guard doctor ~/src/qrspi-plus
      qrspi-guard doctor --project ~/work/app --format json
    """
    import os

    from qrspi_guard import __version__
    from qrspi_guard.adopt.doctor import examine
    from qrspi_guard.cli.adopt import guard_argv
    from qrspi_guard.cli.process import fast_exit
    from qrspi_guard.hook.install import program

    known = None
    if known_file is not None:
        from qrspi_guard.adopt.dropins import read_known

        known = read_known(known_file)
    report = examine(checkout, project, os.path.expanduser("~"), guard_argv(), program(),
                     __version__, known)
    if fmt == "json":
        click.echo(report.to_json(), nl=False)
    else:
        width = max(len(i.what) for i in report.items)
        for item in report.items:
            click.echo(f"{MARKS[item.state]:<2}  {item.section:<10}  {item.what:<{width}}  "
                       f"{item.detail}")
        missing = [i for i in report.items if i.state == "bad" or
                   (i.required and i.state == "no")]
        if missing:
            click.echo(f"{len(missing)} to see to (marked !! or required --)")
        else:
            click.echo("in place")
    fast_exit(0 if report.healthy else 1)
