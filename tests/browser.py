"""A real headless browser for the report tests: Debian's ``chromium`` driven over the
DevTools protocol on a pipe (``--remote-debugging-pipe``: NUL-separated JSON on file
descriptors 3 and 4), so the tests need no driver package and no network.

:func:`chromium` finds the browser, installing Debian's package where it is missing and
the suite runs as root with apt-get (as the suite installs its npm validators); None
when neither works (the tests then skip).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Any


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return None
    try:
        subprocess.run([apt, "install", "-y", "-q", "chromium"], capture_output=True,
                       timeout=900, check=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    except (subprocess.SubprocessError, OSError):
        return None
    return shutil.which("chromium")


class Browser:
    """One headless chromium with one page, driven over the DevTools pipe."""

    def __init__(self, binary: str, width: int = 1280, height: int = 1000) -> None:
        self.profile = tempfile.mkdtemp(prefix="qrspi-guard-chromium-")
        to_r, self._to = os.pipe()
        self._from, from_w = os.pipe()
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            pass_fds=(to_r, from_w, 3, 4), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=lambda: (os.dup2(to_r, 3), os.dup2(from_w, 4)))
        os.close(to_r)
        os.close(from_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)  # type: ignore[no-any-return]

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to, json.dumps(msg).encode() + b"\0")
        while True:
            got = self._read()
            if got.get("id") == self._id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})  # type: ignore[no-any-return]
            self.events.append(got)

    def wait_for(self, method: str, since: int = 0) -> dict[str, Any]:
        """The first *method* event after the first *since* events (waiting for it)."""
        for e in self.events[since:]:
            if e.get("method") == method:
                return e
        while True:
            got = self._read()
            self.events.append(got)
            if got.get("method") == method:
                return got

    def open(self, url: str) -> None:
        mark = len(self.events)
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired", since=mark)

    def evaluate(self, expression: str) -> Any:
        got = self.call("Runtime.evaluate", session=True, expression=expression,
                        returnByValue=True)
        return got["result"].get("value")

    def screenshot(self, path: Path, clip: dict[str, float] | None = None) -> bytes:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if clip is not None:
            params["clip"] = {**clip, "scale": 1}
        data = base64.b64decode(self.call("Page.captureScreenshot", session=True,
                                          **params)["data"])
        path.write_bytes(data)
        return data

    def console_errors(self) -> list[dict[str, Any]]:
        bad = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                bad.append(p)
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                bad.append(p)
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                bad.append(p["entry"])
        return bad

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events
                if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to)
        os.close(self._from)
        shutil.rmtree(self.profile, ignore_errors=True)


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """(width, height, RGB pixels) of an 8-bit RGB or RGBA PNG (what chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    pixels = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels += [(line[i], line[i + 1], line[i + 2]) for i in range(0, stride, bpp)]
        prev = line
    return width, height, pixels
