"""The overview as one self-contained HTML file (``qrspi-guard report``).

Rendered from the Jinja2 templates in ``templates/`` with autoescaping on, never by
string concatenation: everything from a finding is text, never markup. No network at
view time (CSS and SVG inline, no scripts, fonts or images; a Content-Security-Policy
forbids any load), light and dark schemes, printable. The same overview gives the same
bytes: no timestamp unless asked for. Jinja2 is imported only here, when a report is
drawn.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

from qrspi_guard.contract.codespans import spans
from qrspi_guard.output.text import counts
from qrspi_guard.overview.model import Overview, RoundView, StepView
from qrspi_guard.textsafe import one_line
from qrspi_guard.voice import plural

#: chart colours per change_type (and the verifier's kept / dropped)
COLOURS = {"style": "#8e7cc3", "clarity": "#3d85c6", "correctness": "#e69138",
           "scope": "#6aa84f", "intent": "#c27ba0", "other": "#999999",
           "kept": "#38761d", "dropped": "#b7b7b7"}
BAR, GAP, HEIGHT = 18, 14, 120


def _link(path: str, base: str) -> str:
    """*path* relative to the report's directory, as a URL path."""
    rel = os.path.relpath(os.path.abspath(path), base)
    return quote(os.fsencode(rel.replace(os.sep, "/")), safe="/-_.~")


def chart(step: StepView) -> dict[str, Any]:
    """Geometry of a step's inline SVG: per round a bar stacked by change_type and,
    where the verifier ran, a bar of kept against dropped."""
    top = max([len(r.findings) for r in step.rounds] + [1])
    scale = HEIGHT / top
    bars = []
    x = 30
    for r in step.rounds:
        stacks = []
        y = HEIGHT + 18.0
        for ct, n in r.by_change_type().items():
            h = n * scale
            y -= h
            stacks.append({"x": x, "y": round(y, 2), "h": round(h, 2), "w": BAR,
                           "fill": COLOURS.get(ct, COLOURS["other"]),
                           "title": f"round {r.round:02d}: {n} {ct}"})
        width = BAR
        if r.verified:
            y = HEIGHT + 18.0
            for what, n in (("kept", r.kept), ("dropped", r.dropped)):
                h = n * scale
                y -= h
                stacks.append({"x": x + BAR + 2, "y": round(y, 2), "h": round(h, 2),
                               "w": BAR // 2, "fill": COLOURS[what],
                               "title": f"round {r.round:02d}: {n} {what}"})
            width += 2 + BAR // 2
        bars.append({"x": x, "mid": x + width / 2, "label": f"{r.round:02d}",
                     "title": f"round {r.round:02d}: {len(r.findings)} finding(s)"
                              + (f", kept {r.kept}, dropped {r.dropped}" if r.verified else ""),
                     "total": len(r.findings), "stacks": stacks,
                     "ty": round(HEIGHT + 18.0 - len(r.findings) * scale - 3, 2)})
        x += width + GAP
    return {"width": max(x + 10, 110), "height": HEIGHT + 56, "bars": bars, "top": top,
            "base": HEIGHT + 18, "labels": HEIGHT + 34, "axis": HEIGHT + 52,
            "caption": ", ".join(f"round {r.round:02d}: {len(r.findings)}"
                                 for r in step.rounds)}


def code_spans(text: str) -> Any:
    """The catalogue's Markdown text (a fix, a meaning) as HTML: each code span a
    ``<code>`` element, everything escaped (never Markdown source, never raw markup)."""
    import markupsafe

    return markupsafe.Markup("").join(
        markupsafe.Markup("<code>{}</code>").format(piece) if is_code
        else markupsafe.escape(piece) for piece, is_code in spans(text))


_ENV: Any = None


def _env() -> Any:
    global _ENV
    if _ENV is None:
        import jinja2

        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
        _ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(here), autoescape=True,
                                  trim_blocks=True, lstrip_blocks=True,
                                  undefined=jinja2.StrictUndefined)
        _ENV.filters["line"] = one_line  # a path or name from disk: one escaped line
        _ENV.filters["counted"] = plural  # `3 errors`, as every summary line says it
        _ENV.globals["counts"] = counts
        _ENV.filters["code"] = code_spans  # the catalogue's text: its code spans as code
    return _ENV


def render(ov: Overview, output_dir: str, timestamp: str | None = None) -> str:
    """The report for a file written in *output_dir* (links are relative to it). The
    rounds' sections are rendered by forked workers on a large tree (the same bytes
    whatever their number)."""
    import markupsafe

    from qrspi_guard.engine.parallel import ordered_map

    base = os.path.abspath(output_dir)
    rounds = ov.rounds()
    ids = {id(r): f"round-{i + 1}" for i, r in enumerate(rounds)}

    def anchor(r: RoundView) -> str:
        return ids[id(r)]

    def link(path: str) -> str:
        return _link(path, base)

    def files(r: RoundView) -> list[tuple[Any, str]]:
        """Each finding with its link (the round's relative path worked out once)."""
        prefix = link(r.path) + "/"
        return [(f, prefix + quote(os.fsencode(f.name), safe="-_.~")) for f in r.findings]

    env = _env()
    section = env.get_template("round.html.j2")
    page = env.get_template("report.html.j2")

    def one(i: int) -> str:
        r = rounds[i]
        return str(section.render(r=r, anchor=anchor, link=link, files=files))

    sections = [markupsafe.Markup(html) for html in  # rendered autoescaped above
                ordered_map(one, len(rounds), lambda html: html, lambda i, html: html)]
    used = sorted({ct for r in rounds for ct in r.by_change_type()})
    return str(page.render(
        ov=ov, rounds=rounds, halts=ov.halts(), anchor=anchor, link=link, chart=chart,
        colours=COLOURS, legend=used, timestamp=timestamp, sections=sections))
