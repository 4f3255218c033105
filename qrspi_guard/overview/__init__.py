"""The run overview (report.md): the grid, the current rounds, the halts and the
convergence series, drawn from judged rounds for ``status``, the live ``watch``, the
step summary and the HTML ``report``. No rules of its own, no click.
"""
