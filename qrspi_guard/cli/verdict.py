"""`qrspi-guard verdict`: review an analyzer's findings.json and print the verdict block."""

from __future__ import annotations

import sys

import click

from qrspi_guard.cli.conventions import Choice, reached
from qrspi_guard.verdict import render_json, render_text, review_path


def _emit(text: str) -> None:
    """Write to stdout; characters the stream cannot encode are backslash-escaped."""
    stream = sys.stdout
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()


@click.command(
    epilog="""\b
Example:
  $ qrspi-guard verdict runs/42/findings.json
  REVIEWER VERDICT: approved_with_concerns
  COMPLETENESS_SCORE: 1.0
  MISSING_CATEGORIES: naming
  REVIEWER_NOTES: issue 1: error_handling finding with high severity is unusual
  DONE_WITH_CONCERNS

\b
Exit codes: 0 approved, 1 approved_with_concerns, 3 rejected, 4 BLOCKED
(file missing, unreadable, too large, not valid JSON or the wrong shape),
2 bad arguments."""
)
@click.argument("findings_json", metavar="FINDINGS_JSON")
@click.option(
    "--format",
    "output_format",
    type=Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the four-line verdict block and a status line; json: the verdict object.",
)
def verdict(findings_json: str, output_format: str) -> None:
    """Review an analyzer's FINDINGS_JSON and print the verdict block an orchestrator parses.

    Read-only: nothing is written. Everything, BLOCKED messages included, goes to stdout.
    """
    result = review_path(findings_json)
    reached(result.exit_code)  # a closed pipe ends the run with it
    _emit(render_json(result) if output_format == "json" else render_text(result))
    sys.exit(result.exit_code)
