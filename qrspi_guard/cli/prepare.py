"""`qrspi-guard prepare NN OUTPUT_DIR [flags]`: the drop-in for `round-prepare.sh`.

The arguments are read by :func:`qrspi_guard.loop.prepare_args.parse_args`, not by
click, so every bad argument is upstream's exit 1 with one line (click's usage errors
would be exit 2).
"""

from __future__ import annotations

import os

import click

from qrspi_guard.cli.conventions import say


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                 "allow_interspersed_args": False},
               add_help_option=False, options_metavar="")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="NN OUTPUT_DIR [FLAGS]")
@click.pass_context
def prepare(ctx: click.Context, words: tuple[str, ...]) -> None:
    """Prepare a task round as scripts/round-prepare.sh does: check the implementer's
    commit, the prior round's anchor and scope sets, decide whether the round narrows,
    and write OUTPUT_DIR/round-NN.diff, then OUTPUT_DIR/.round-prepare.json (and, per
    task, the commit anchor round-NN-commit.txt beside OUTPUT_DIR).

    \b
    Flags: --task-branch B --implementer-commit SHA (per task, both or neither),
           --worktree P, --base-ref REF, --artifact PATH, --verify (no effect).

    \b
    Exit codes: 0 prepared; 1 bad arguments, a prior-round anchor or scope set
    missing or malformed, or a git failure (named); 2 not a git work tree;
    10 per-task flags incomplete; 11 the commit is not the work tree's HEAD;
    12 the commit is the prior round's anchor or the task base.
    Every git command runs in --worktree's repository when given, else here.
    """
    words = tuple(words) + tuple(ctx.args)
    if words[:1] in (("--help",), ("-h",)):  # before the core is imported
        click.echo(ctx.get_help())
        return
    from qrspi_guard.loop.prepare import prepare as run
    from qrspi_guard.loop.prepare_args import parse_args

    args = parse_args(words)
    run(args, say=say, scope_tagger=os.environ.get("QRSPI_SCOPE_TAGGER_ENABLED") == "true")
