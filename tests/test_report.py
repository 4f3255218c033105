"""`qrspi-guard report` (report.md): one self-contained, deterministic HTML file, opened
in a real headless browser (Debian's chromium, over the DevTools pipe)."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.browser import Browser, chromium, png_pixels
from tests.support import FIXTURES, Run, run_main

EXAMPLES = [str(FIXTURES / "example"), str(FIXTURES / "example-fanin")]
SCRIPT_VALUE = "<script>window.pwned=1</script>"


def report(tmp_path: Path, *args: str, name: str = "report.html") -> Path:
    out = tmp_path / name
    proc = run_main("report", *args, "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        a = dict(attrs)
        if "href" in a:
            self.hrefs.append(a["href"])
        if "id" in a:
            self.ids.add(a["id"])


def test_the_same_rounds_give_the_same_bytes_and_timestamp_is_opt_in(tmp_path: Path) -> None:
    one = report(tmp_path, *EXAMPLES, name="a.html").read_bytes()
    two = report(tmp_path, *EXAMPLES, name="b.html").read_bytes()
    assert one == two
    stamped = report(tmp_path, "--timestamp", *EXAMPLES, name="c.html").read_text()
    assert re.search(r"written \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", stamped)
    assert "written" not in one.decode()


def test_the_report_is_self_contained_and_links_the_grid_and_the_files(tmp_path: Path) -> None:
    out = report(tmp_path, *EXAMPLES)
    html = out.read_text()
    page = Links()
    page.feed(html)
    assert not {"script", "link", "img", "iframe", "object", "embed"} & page.tags
    assert "default-src 'none'" in html and "prefers-color-scheme: dark" in html
    assert "@media print" in html and html.count("<svg") == 6
    inside = [h for h in page.hrefs if h.startswith("#")]
    assert inside and all(h[1:] in page.ids for h in inside)  # grid cells -> round sections
    files = [h for h in page.hrefs if not h.startswith("#")]
    assert files and all(not re.match(r"[a-z]+:", h) for h in files)  # relative
    for h in files:
        assert (out.parent / unquote(h)).exists(), h
    assert "quality-codex.finding-F01.md" in html and "kept" in html and "dropped" in html


def test_report_to_standard_output_and_exit_codes(tmp_path: Path) -> None:
    proc = run_main("report", EXAMPLES[0], "--output", "-")
    assert proc.returncode == 0 and proc.stdout.startswith(b"<!DOCTYPE html>")
    assert run_main("report", "no/such/path", "-o", str(tmp_path / "x.html")).returncode == 2
    assert run_main("report", EXAMPLES[0]).returncode == 2  # --output is required
    assert not (tmp_path / "x.html").exists()


def hostile_run(run: Run, big: int = 0) -> None:
    run.config()
    run.finding("goals", 1, "quality-claude", change_type=json.dumps(SCRIPT_VALUE),
                severity=json.dumps('"><img src=x onerror="window.pwned=2">'))
    for n in range(2, big + 2):
        run.finding("design", 1, "quality-claude", n=n)


def test_finding_text_is_escaped_never_markup(run: Run, tmp_path: Path) -> None:
    hostile_run(run)
    html = report(tmp_path, str(run.root)).read_text()
    assert "<script>window" not in html and "&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert "<img src=x" not in html


@pytest.fixture(scope="module")
def browser_binary() -> str:
    found = chromium()
    if found is None:
        pytest.skip("chromium is not installed and cannot be installed here")
    return found


@pytest.mark.slow
def test_the_report_renders_in_chromium_without_errors_network_or_script(
        run: Run, tmp_path: Path, browser_binary: str) -> None:
    hostile_run(run, big=3000)
    out = report(tmp_path, str(run.root), *EXAMPLES)
    url = out.as_uri()
    browser = Browser(browser_binary)
    try:
        browser.open(url)
        assert browser.console_errors() == []
        assert [u for u in browser.requests() if u != url] == []
        assert browser.evaluate("typeof window.pwned") == "undefined"
        text = browser.evaluate("document.body.innerText")
        assert SCRIPT_VALUE in text  # shown as text
        assert browser.evaluate("document.querySelectorAll('table.findings tr').length") > 3000
        rect = json.loads(browser.evaluate(
            "JSON.stringify(document.querySelectorAll('table.grid')[1].getBoundingClientRect())"))
        assert rect["width"] > 100 and rect["height"] > 60
        shot = browser.screenshot(tmp_path / "grid.png", {
            "x": rect["x"], "y": rect["y"], "width": rect["width"], "height": rect["height"]})
        width, height, pixels = png_pixels(shot)
        assert width >= 100 and height >= 60
        greenish = sum(1 for r, g, b in pixels if g > 100 and r < 80 and b < 100)
        reddish = sum(1 for r, g, b in pixels if r > 170 and g < 80 and b < 80)
        assert greenish > 20 and reddish > 20  # the grid's ok and halt cells are drawn
        whole = browser.screenshot(tmp_path / "page.png")
        assert png_pixels(whole)[0] > 0
        # a grid cell takes the reader to its round's section
        browser.evaluate("document.querySelector('table.grid td.cell a').click()")
        assert browser.evaluate("location.hash").startswith("#round-")
    finally:
        browser.close()
    assert os.path.getsize(tmp_path / "page.png") > 10_000
