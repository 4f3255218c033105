"""Folder trust: Gemini CLI runs a project's own hooks only in a folder it trusts.

Read only by ``hook install --runtime gemini`` at project scope (never on a hook call),
which warns when the folder is not trusted: Gemini CLI then ignores
``.gemini/settings.json`` without a word, and ``--skip-trust`` lets a headless run go
on without it (issue 31). The rules are Gemini CLI 0.61's (``checkPathTrust``):

- ``GEMINI_RESTRICTED_MODE=true`` or ``GEMINI_CLI_TRUST_WORKSPACE=false``: not trusted;
  ``GEMINI_CLI_TRUST_WORKSPACE=true``: trusted;
- ``security.folderTrust.enabled: false`` in the user's settings: every folder trusted;
- else the rules of ``trustedFolders.json`` (``$GEMINI_CLI_TRUSTED_FOLDERS_PATH``, else
  ``~/.gemini/trustedFolders.json``, ``~`` being ``$GEMINI_CLI_HOME`` when set): a path
  mapped to ``TRUST_FOLDER`` (that folder and below), ``TRUST_PARENT`` (its parent and
  below) or ``DO_NOT_TRUST``; the longest rule that contains the folder decides, and no
  rule means not trusted. Paths are compared after resolving links.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from qrspi_guard.hook.jsonfile import Unreadable, load
from qrspi_guard.hook.runtimes.gemini import home_dir
from qrspi_guard.textsafe import one_line

TRUSTED = ("TRUST_FOLDER", "TRUST_PARENT")


def trust_file(env: Mapping[str, str], home: str) -> str:
    return env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or os.path.join(
        home_dir(env, home), "trustedFolders.json")


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


def _within(parent: str, child: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def trusted(folder: str, env: Mapping[str, str], home: str) -> bool | str:
    """True when Gemini CLI trusts *folder*, False when not, or a line saying why it
    cannot be told (a settings or trust file that does not parse)."""
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or \
            env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return False
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    settings = os.path.join(home_dir(env, home), "settings.json")
    try:
        doc = load(settings, comments=True)
    except Unreadable:
        doc = None  # Gemini CLI reports its own settings; folder trust stays on
    security = doc.get("security") if isinstance(doc, dict) else None
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return True
    path = trust_file(env, home)
    try:
        rules = load(path, comments=True)
    except Unreadable as exc:
        return f"{one_line(path)} cannot be read ({one_line(str(exc), 120)})"
    if rules is None:
        return False
    if not isinstance(rules, dict):
        return f"{one_line(path)} is not a JSON object"
    where = _real(folder)
    best, level = -1, None
    for rule, value in rules.items():
        if not isinstance(value, str):
            continue
        base = os.path.dirname(rule) if value == "TRUST_PARENT" else rule
        if _within(_real(base), where) and len(rule) > best:
            best, level = len(rule), value
    return level in TRUSTED


def untrusted_warnings(scope: str, base: str, env: Mapping[str, str] | None = None,
                       home: str | None = None) -> list[str]:
    """The warning for a project-scope install in a folder Gemini CLI does not trust."""
    if scope != "project":
        return []
    env = os.environ if env is None else env
    home = home if home is not None else os.path.expanduser("~")
    verdict = trusted(base, env, home)
    if verdict is True:
        return []
    shown, rules = one_line(os.path.abspath(base)), one_line(trust_file(env, home))
    why = ("is not trusted" if verdict is False
           else f"may not be trusted: {verdict}")
    return [f"Gemini CLI runs a project's hooks only in a trusted folder, and {shown} {why}, "
            "so it will not run these hooks (a run with --skip-trust does not trust it "
            "either). Trust it: start gemini there and accept the trust prompt (or run "
            f"/permissions trust), or add \"{shown}\": \"TRUST_FOLDER\" to {rules}"]
