"""`qrspi-guard review-prep`: the artifact step's round diff (loop.md), a drop-in for
upstream's ``scripts/review-prep.sh``.

The arguments are upstream's and are read by
:func:`qrspi_guard.loop.reviewprep.parse_arguments`, not by click: a bad argument is
exit 1 with one line naming it, as upstream's script does (click's usage errors are
exit 2). The options are declared here for ``--help`` only, so the help is laid out as
every other command's. Failures are :class:`~qrspi_guard.loop.reviewprep.ReviewPrepError`
(exit 1), one line whose words start with upstream's diagnostic name
(``qrspi-guard review-prep: error: anchor-file-missing: ...``). Success prints nothing,
like upstream; an unknown step prints nothing either, unless it is a near miss of a
known one.
"""

from __future__ import annotations

from typing import Any

import click

from qrspi_guard.cli.conventions import say_warning
from qrspi_guard.loop import reviewprep as core
from qrspi_guard.loop.reviewprep import STEP_ARTIFACTS, HelpRequested, parse_arguments

_EXIT_CODES = """\b
Exit codes: 0 written, or nothing to do (an unknown step, implement, not a git work
tree, no hunk on round 1); 1 a bad argument, or one named line: sha-format-invalid:,
anchor-file-missing:, narrow-round-empty-diff:, review-prep-corrupt-artifact-dir:,
review-prep-git-failed:, review-prep-write-failed:, or the round lock held too long."""


class _UpstreamArguments(click.Command):
    """Declares its options for ``--help``; the words themselves go to upstream's rules
    (:func:`~qrspi_guard.loop.reviewprep.parse_arguments`), untouched."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["review-prep.words"] = tuple(args)
        return []


@click.command(
    "review-prep", cls=_UpstreamArguments, add_help_option=False, epilog=_EXIT_CODES,
    options_metavar="--step STEP --round NN --artifact-dir DIR [--base-ref REF]",
    short_help="Write an artifact step's round diff (drop-in for review-prep.sh).")
@click.option("--step", metavar="STEP",
              help=f"The artifact step: {', '.join(STEP_ARTIFACTS)} "
              "(implement: nothing to do; an unknown step: exit 0, nothing written).")
@click.option("--round", "round_no", metavar="NN",
              help="The round (1 or more): round 1 diffs against --base-ref, a later one "
              "against the SHA in REVIEWS/round-(NN-1)-commit.txt.")
@click.option("--artifact-dir", metavar="DIR",
              help="The run's artifact directory; REVIEWS is DIR/reviews/STEP.")
@click.option("--base-ref", metavar="REF", help="Round 1's ref (required on round 1).")
@click.option("-h", "--help", "help_", is_flag=True, help="Show this message and exit.")
@click.pass_context
def review_prep(ctx: click.Context, /, **_declared: Any) -> None:
    """Write REVIEWS/round-NN.diff, the working tree's git diff of the step's artifact,
    and for design and plan also REVIEWS/round-NN.absorption-map.tsv for DIR/design.md
    (drop-in for scripts/review-prep.sh).

    \b
    Example:
      qrspi-guard review-prep --step design --round 02 --artifact-dir docs/qrspi/run
    """
    try:
        request = parse_arguments(ctx.meta["review-prep.words"])
    except HelpRequested:
        click.echo(ctx.get_help())
        return
    outcome = core.review_prep(request)
    if outcome.warning is not None:
        say_warning(outcome.warning)
