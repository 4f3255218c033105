"""SARIF 2.1.0 for GitHub code scanning: one rule per cause of the catalogue.

- Every rule has a short and a full description and help (text and Markdown) built
  from the catalogue (meaning, fix, and how to turn the cause off).
- Every result has a physical location with a region, at a file that exists: a
  diagnostic about a directory (a round, a step, an unreadable directory) or about a
  file that is not there (a missing config.md) is placed at the first file of that
  directory, else at the first file of the nearest directory above it that holds one
  (name order, hidden files last; never above the source root), else at the first file
  below it (:mod:`qrspi_guard.output.locate`), at line 1, and its
  message names the original place.
- URIs are relative to ``%SRCROOT%``: the git top level of the working directory, or
  the working directory outside git. Never absolute; a name that is not valid UTF-8
  has its raw bytes percent-encoded.
- ``partialFingerprints`` (``qrspiGuard/v1``) are :mod:`qrspi_guard.output.fingerprint`'s:
  the cause, the original place and what was found, never a line number, so a result
  keeps its identity when unrelated lines move (the baseline matches on the same).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qrspi_guard import __version__
from qrspi_guard.contract.causes import CATALOGUE, Cause
from qrspi_guard.contract.codespans import plain
from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.output import ReportOptions, visible
from qrspi_guard.output.fingerprint import FINGERPRINT, fingerprint, source_root
from qrspi_guard.output.locate import Locator
from qrspi_guard.parse import jsondoc
from qrspi_guard.textsafe import one_line

if TYPE_CHECKING:  # the engine is imported by whoever renders a result
    from qrspi_guard.engine import CheckResult

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
#: the package metadata's project URL that SARIF links rules and the tool to
HOME_LABEL = "Homepage"
SRCROOT = "%SRCROOT%"


def _short(meaning: str) -> str:
    """The first sentence of a cause's meaning (SARIF's shortDescription)."""
    for stop in (". ", ": ", "; "):
        i = meaning.find(stop)
        if 0 < i < 200:
            return meaning[:i + (1 if stop == ". " else 0)].rstrip(":;")
    return meaning if len(meaning) <= 200 else meaning[:199] + "…"


def _pascal(name: str) -> str:
    """A rule's readable name (SARIF: different from its opaque id): `NotUtf8`."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _help(c: Cause) -> dict[str, str]:
    off = (f"On by default. Turn it off with `qrspi-guard check --ignore {c.name}`, or "
           f"`ignore = [\"{c.name}\"]` under `[tool.qrspi-guard]` in pyproject.toml.")
    return {
        "text": f"{plain(c.meaning)}\n\nFix: {plain(c.fix)}\n\n{plain(off)}",
        "markdown": f"**{c.name}** ({c.level})\n\n{c.meaning}\n\n**Fix:** {c.fix}\n\n{off}",
    }


def project_home() -> str | None:
    """The project's home page from the installed package's metadata
    (``[project.urls] Homepage`` in pyproject.toml), or None when it names none: SARIF
    then carries no helpUri or informationUri rather than a placeholder."""
    from importlib import metadata

    try:
        urls = metadata.metadata("qrspi-guard").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = str(entry).partition(",")
        if label.strip() == HOME_LABEL and url.strip().startswith("https://"):
            return url.strip()
    return None


def rules(home: str | None = None) -> list[dict[str, Any]]:
    out = []
    for c in CATALOGUE.values():
        rule: dict[str, Any] = {
            "id": c.name,
            "name": _pascal(c.name),
            "shortDescription": {"text": _short(plain(c.meaning))},
            "fullDescription": {"text": plain(c.meaning)},
            "help": _help(c),
        }
        if home:
            rule["helpUri"] = f"{home}#causes"
        rule["defaultConfiguration"] = {"level": _LEVEL[c.level]}
        rule["properties"] = {"tags": ["qrspi", c.level]}
        out.append(rule)
    return out


def result_of(d: Diagnostic, locator: Locator, seen: dict[str, int]) -> dict[str, Any]:
    target, exact = locator.place(d.path)
    message = one_line(d.message)
    if not exact:
        message += f" (at {one_line(locator.relative(d.path))})"
    region = {"startLine": d.line if exact and d.line else 1}
    return {
        "ruleId": d.cause,
        "ruleIndex": _INDEX[d.cause],
        "level": _LEVEL[d.level],
        "message": {"text": message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": locator.uri(target), "uriBaseId": SRCROOT},
            "region": region,
        }}],
        "partialFingerprints": {FINGERPRINT: fingerprint(d, locator.relative(d.path), seen)},
    }


_INDEX = {name: i for i, name in enumerate(CATALOGUE)}


def document(result: CheckResult, options: ReportOptions,
             root: str | None = None) -> dict[str, Any]:
    locator = Locator(root or source_root())
    seen: dict[str, int] = {}
    results = [result_of(d, locator, seen) for d in result.diagnostics if visible(d, options)]
    home = project_home()
    driver: dict[str, Any] = {"name": "qrspi-guard", "version": __version__,
                              "semanticVersion": __version__}
    if home:
        driver["informationUri"] = home
    driver["rules"] = rules(home)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": driver},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render(result: CheckResult, options: ReportOptions) -> str:
    return jsondoc.dumps(document(result, options), indent=2, ensure_ascii=True) + "\n"
