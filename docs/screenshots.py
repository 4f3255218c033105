"""Make the README's screenshots of the run overview on the two example runs.

    .venv/bin/python docs/screenshots.py

Writes ``docs/img/report.png`` (``qrspi-guard report`` opened in headless chromium) and
``docs/img/status.png`` (``qrspi-guard status`` as a terminal draws it: the program runs
on a pseudo-terminal, and its colours are drawn in a page). Needs Debian's ``chromium``
(the test suite's browser driver, ``tests/browser.py``, is reused).
"""

from __future__ import annotations

import html
import json
import os
import pty
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.browser import Browser, chromium  # noqa: E402

GUARD = str(Path(sys.executable).parent / "qrspi-guard")
EXAMPLES = ["fixtures/rounds/example-fanin", "fixtures/rounds/example"]
OUT = REPO / "docs" / "img"
_SGR = re.compile(r"\x1b\[([0-9;]*)m")
_COLOURS = {"32": "#3fb950", "33": "#d29922", "31": "#f85149", "1": None, "2": None}


def on_terminal(*args: str) -> str:
    """What the console script writes to a terminal, 120 columns wide."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([GUARD, *args], cwd=REPO, stdout=follower,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait()
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def terminal_page(text: str) -> str:
    """ANSI colour codes as spans in a dark terminal-like page."""
    out, open_spans = [], 0
    pos = 0
    for m in _SGR.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        pos = m.end()
        codes = m.group(1).split(";")
        if codes == ["0"] or codes == [""]:
            out.append("</span>" * open_spans)
            open_spans = 0
            continue
        style = []
        for c in codes:
            if c == "1":
                style.append("font-weight:bold")
            elif c == "2":
                style.append("opacity:.7")
            elif _COLOURS.get(c):
                style.append(f"color:{_COLOURS[c]}")
        out.append(f'<span style="{";".join(style)}">')
        open_spans += 1
    out.append(html.escape(text[pos:]))
    body = "".join(out)
    return ("<!DOCTYPE html><meta charset=utf-8><style>body{margin:0;background:#0d1117}"
            "pre{margin:0;padding:16px;color:#e6edf3;font:13px/1.2 'DejaVu Sans Mono',"
            f"monospace}}</style><pre id=t>{body}</pre>")


def shot(browser: Browser, url: str, target: Path, selector: str, height: int) -> None:
    browser.open(url)
    rect = json.loads(browser.evaluate(
        f"JSON.stringify(document.querySelector({selector!r}).getBoundingClientRect())"))
    browser.screenshot(target, {"x": 0, "y": 0, "width": max(rect["right"] + 16, 900),
                                "height": min(rect["bottom"] + 16, height)})


def main() -> int:
    binary = chromium()
    if binary is None:
        print("chromium is needed (apt-get install chromium)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.html"
        subprocess.run([GUARD, "report", *EXAMPLES, "--output", str(report)], cwd=REPO,
                       check=True)
        status = Path(tmp) / "status.html"
        status.write_text(terminal_page(on_terminal("status", *EXAMPLES)))
        browser = Browser(binary, width=1280, height=2400)
        try:
            shot(browser, report.as_uri(), OUT / "report.png", "main", 1500)
            shot(browser, status.as_uri(), OUT / "status.png", "#t", 2400)
        finally:
            browser.close()
    print(f"wrote {OUT / 'report.png'} and {OUT / 'status.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
