"""The run overview (report.md): the grid, the current rounds, the halts and the
convergence series, drawn from judged rounds for ``status``, the live ``watch``, the
step summary and the HTML ``report``. No rules of its own, no click.

- :mod:`.model`     the overview as plain data, and the ``status --format json`` document
- :mod:`.build`     judged rounds -> the overview (runs, steps in protocol order, rounds)
- :mod:`.details`   the findings' fields for display, from the judge's facts or the files
- :mod:`.text`      terminal text: box drawing and colour, or ASCII only
- :mod:`.markdown`  GitHub-flavoured Markdown within a byte limit (the step summary)
- :mod:`.html`      the self-contained HTML report from autoescaped Jinja2 templates
- :mod:`.live`      the live view ``watch`` keeps current on a terminal

Jinja2 is imported only by :mod:`.html`, when a report is drawn.
"""
