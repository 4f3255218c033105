"""adopt's pre-commit entry: a ``repo: local`` hook in the project's
``.pre-commit-config.yaml`` that runs this guard's ``check`` over every round on each
commit (the ``qrspi-guard-all`` hook of the repository's ``.pre-commit-hooks.yaml``,
with the guard's absolute path, as the wrappers have it, and the baseline when adopt
wrote one).

The file is the user's, comments and all, so it is never re-serialised: the entry is
appended as text under ``repos:`` with the indentation the list already has, and the
result is parsed again and must equal the old document plus exactly this entry; where
it would not (``repos:`` is not the last key, a flow-style list), adopt refuses and
prints the entry to add by hand. Undo removes exactly the text it appended, checked
the same way.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from qrspi_guard.parse import jsondoc
from qrspi_guard.records import record

FILE = ".pre-commit-config.yaml"
#: the hook's id and settings: those of qrspi-guard-all in .pre-commit-hooks.yaml
HOOK_ID = "qrspi-guard-all"
HOOK_NAME = "qrspi-guard (every review round)"
#: the ids of the guard's hooks (either one in place counts)
IDS = ("qrspi-guard", "qrspi-guard-all")
MARK = "# qrspi-guard adopt: every review round judged on each commit"
_REPOS = re.compile(r"^repos:[ \t]*(?:#.*)?$")
_ITEM = re.compile(r"^([ \t]*)- ")


def entry_command(guard: tuple[str, ...], baseline: str | None) -> str:
    words = [*guard, "check", *(("--baseline", baseline) if baseline else ())]
    return " ".join(shlex.quote(w) for w in words)


def repo_entry(guard: tuple[str, ...], baseline: str | None) -> dict[str, Any]:
    """The ``repos:`` item adopt adds, as YAML loads it."""
    return {"repo": "local", "hooks": [{
        "id": HOOK_ID, "name": HOOK_NAME, "entry": entry_command(guard, baseline),
        "language": "system", "always_run": True, "pass_filenames": False,
        "require_serial": True}]}


def block(guard: tuple[str, ...], baseline: str | None, indent: str = "  ") -> str:
    """The entry's text at list indentation *indent*."""
    i = indent
    return "".join(f"{line}\n" for line in (
        f"{i}{MARK} (qrspi-guard adopt --undo removes it)",
        f"{i}- repo: local",
        f"{i}  hooks:",
        f"{i}    - id: {HOOK_ID}",
        f"{i}      name: {HOOK_NAME}",
        f"{i}      entry: {jsondoc.dumps(entry_command(guard, baseline))}",
        f"{i}      language: system",
        f"{i}      always_run: true",
        f"{i}      pass_filenames: false",
        f"{i}      require_serial: true",
    ))


def load_config(text: str) -> Any:
    """A pre-commit configuration's text as YAML loads it (a safe loader)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 (a safe loader)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except RecursionError:
        return False


def has_guard(doc: Any) -> list[dict[str, Any]]:
    """The hooks of the guard's in a loaded config (by id)."""
    repos = doc.get("repos") if isinstance(doc, dict) else None
    found = []
    for repo in repos if isinstance(repos, list) else ():
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        for hook in hooks if isinstance(hooks, list) else ():
            if isinstance(hook, dict) and hook.get("id") in IDS:
                found.append(hook)
    return found


@record(frozen=True)
class Edit:
    """The config's new text (None: nothing to change), what was added, or why not."""

    text: str | None
    added: str = ""
    refused: str | None = None
    present: bool = False
    #: the entry to add by hand, when adopt cannot
    hint: str = ""


def add(old: str | None, guard: tuple[str, ...], baseline: str | None) -> Edit:
    """The config with adopt's entry appended (see the module docstring)."""
    import yaml

    want = repo_entry(guard, baseline)
    by_hand = "; add the entry below under repos: by hand"
    hint = block(guard, baseline)
    if old is None or not old.strip():
        text = (old or "") + "repos:\n" + block(guard, baseline)
        return Edit(text, block(guard, baseline))
    try:
        doc = load_config(old)
    except (yaml.YAMLError, RecursionError, ValueError):
        return Edit(None, refused=f"{FILE} does not parse as YAML; not changed{by_hand}",
                    hint=hint)
    if has_guard(doc):
        return Edit(None, present=True)
    if isinstance(doc, dict) and "repos" in doc and doc["repos"] is None:
        doc = {**doc, "repos": []}  # `repos:` with no item yet
    if not isinstance(doc, dict) or not isinstance(doc.get("repos"), list):
        return Edit(None, refused=f"{FILE} has no repos: list{by_hand}", hint=hint)
    lines = old.splitlines()
    at = next((n for n, ln in enumerate(lines) if _REPOS.match(ln)), None)
    indent = None
    for ln in lines[at + 1:] if at is not None else ():
        if ln.strip() and not ln.lstrip().startswith("#"):
            m = _ITEM.match(ln)
            indent = m.group(1) if m else None
            break
    if at is not None and indent is None and not doc["repos"]:
        indent = "  "  # `repos:` with no item yet
    if indent is None:
        return Edit(None, refused=f"cannot append to the repos: list of {FILE} safely "
                    f"(not a block list){by_hand}", hint=hint)
    added = block(guard, baseline, indent)
    text = old + ("" if old.endswith("\n") else "\n") + added
    expect = {**doc, "repos": [*doc["repos"], want]}
    try:
        ok = _same(load_config(text), expect)
    except (yaml.YAMLError, RecursionError, ValueError):
        ok = False
    if not ok:
        return Edit(None, refused=f"cannot append to the repos: list of {FILE} safely "
                    f"(repos: is not its last key){by_hand}", hint=hint)
    return Edit(text, added)


def remove(old: str, added: str) -> Edit:
    """The config without the text adopt appended (*added*); ``refused`` when it is not
    there as adopt wrote it, or its removal would change anything else."""
    import yaml

    if added not in old:
        return Edit(None, refused=f"the entry adopt added to {FILE} was changed or "
                    "removed; left as it is")
    text = old.replace(added, "", 1)
    try:
        before, after = load_config(old), load_config(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return Edit(None, refused=f"{FILE} does not parse as YAML; left as it is")
    repos = before.get("repos") if isinstance(before, dict) else None
    mine = [n for n, r in enumerate(repos if isinstance(repos, list) else ())
            if isinstance(r, dict) and r.get("repo") == "local" and has_guard({"repos": [r]})]
    if isinstance(repos, list) and mine:
        rest = [r for n, r in enumerate(repos) if n != mine[-1]]
        if _same(after, {**before, "repos": rest}) or (
                not rest and _same(after, {**before, "repos": None})):
            return Edit(text, added)
    return Edit(None, refused=f"removing the entry adopt added to {FILE} would change "
                "more than it; left as it is")
