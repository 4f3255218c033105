"""The GitHub step summary (report.md "The GitHub step summary"): the run overview in
Markdown, then the table of every diagnostic, appended to ``$GITHUB_STEP_SUMMARY``
within what is left of GitHub's 1 MiB (the overview gets what the table leaves, at
least half)."""

from __future__ import annotations

from qrspi_guard.contract.generations import Thresholds
from qrspi_guard.engine.results import CheckResult
from qrspi_guard.output import ReportOptions
from qrspi_guard.output.files import append_summary, size_of
from qrspi_guard.output.github import SUMMARY_LIMIT, full_list_place, step_summary
from qrspi_guard.overview.build import overview
from qrspi_guard.overview.markdown import render


def append_step_summary(path: str, result: CheckResult, full_list: str | None,
                        thresholds: Thresholds | None,
                        options: ReportOptions | None = None) -> None:
    """Append the overview and the table of *result* to the step summary at *path*.
    *full_list*: the file ``--output`` wrote, where every diagnostic also is; *options*:
    those the annotations were emitted with. Raises
    :class:`~qrspi_guard.errors.OutputError` when it cannot be appended (the file is cut
    back to its old length)."""
    room = max(SUMMARY_LIMIT - size_of(path), 2048)
    table = len(step_summary(result, room, full_list, options=options).encode())
    sections = render(overview(result, thresholds), room - min(table, room // 2),
                      heading=False, full_list=full_list_place(full_list))
    sections = sections.split("\n", 2)[2] if sections.count("\n") >= 2 else ""
    used = len(sections.encode()) + 64
    append_summary(path, step_summary(result, max(room - used, 2048), full_list, sections,
                                      options))
