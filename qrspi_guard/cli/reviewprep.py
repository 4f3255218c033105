"""`qrspi-guard review-prep`: the artifact step's round diff (loop.md), a drop-in for
upstream's ``scripts/review-prep.sh``.

The arguments are upstream's and are parsed by
:func:`qrspi_guard.loop.reviewprep.parse_arguments`, not by click: a bad argument is
exit 1 with one line naming it, as upstream's script does (click's usage errors are
exit 2). Failures are :class:`~qrspi_guard.loop.reviewprep.ReviewPrepError` (exit 1),
printed as upstream prints them: one line that starts with the diagnostic's name
(``review-prep-git-failed: ...``), so a consumer anchored on ``^name:`` still matches.
Success prints nothing, like upstream.
"""

from __future__ import annotations

import click

from qrspi_guard.loop import reviewprep as core
from qrspi_guard.loop.reviewprep import USAGE, HelpRequested, parse_arguments

_HELP = f"""{USAGE}

Write REVIEWS/round-NN.diff (REVIEWS = ARTIFACT_DIR/reviews/STEP): the working tree's git
diff of the step's artifact against --base-ref (round 1) or the SHA in
REVIEWS/round-(NN-1)-commit.txt (later rounds); for design and plan also
REVIEWS/round-NN.absorption-map.tsv for ARTIFACT_DIR/design.md.

Exit 0: written, or nothing to do (an unknown step, implement, not a git work tree, no
hunk on round 1). Exit 1: a bad argument, or one named line: sha-format-invalid:,
anchor-file-missing:, narrow-round-empty-diff:, review-prep-corrupt-artifact-dir:,
review-prep-git-failed:, review-prep-write-failed:, or the round lock held too long.
"""


@click.command(
    "review-prep", add_help_option=False, help=_HELP,
    short_help="Write an artifact step's round diff (drop-in for review-prep.sh).",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                      "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def review_prep(args: tuple[str, ...]) -> None:
    """The command (its help text is :data:`_HELP`)."""
    try:
        request = parse_arguments(args)
    except HelpRequested:
        click.echo(_HELP.rstrip("\n"))
        return
    try:
        core.review_prep(request)
    except core.ReviewPrepError as exc:
        import sys

        from qrspi_guard.textsafe import one_line

        click.echo(one_line(str(exc)), err=True)
        sys.exit(exc.exit_code)
