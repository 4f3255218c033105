"""`qrspi-guard doctor`: what is in place and what is not, as data.

One :class:`Item` per thing looked at: the guard itself; each drop-in script of the
upstream checkout (adopted and running this guard, adopted but running a guard that is
gone, upstream's script, a version adopt does not know, a hand-written wrapper); the
agent hook in each runtime's settings at each scope (read with ``hook install``'s own
reader and recogniser); the Claude Code plugin and the Gemini CLI extension; the
project's pre-commit entry; its baseline. Each has a state: ``ok``, ``no`` (not in
place), ``warn`` (in place, with something to know) or ``bad`` (in place and broken:
it would fail, or fail open, when used).

The report is healthy when nothing is ``bad`` and the *required* items are in place:
the checkout's scripts (when a checkout is examined) and an agent hook somewhere (its
settings, or the plugin or extension). The pre-commit entry and the baseline are
optional and never make it unhealthy unless broken.
"""

from __future__ import annotations

import os
import shlex
import shutil
from typing import Any

from qrspi_guard.adopt.dropins import DROPINS, DropIn, sha256, version_of
from qrspi_guard.adopt.store import Seen, Store, locate, look
from qrspi_guard.adopt.wrapper import by_hand, marked, parse
from qrspi_guard.errors import GuardError
from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.nofollow import Dir
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line

OK, NO, WARN, BAD = "ok", "no", "warn", "bad"


@record(frozen=True)
class Item:
    section: str
    what: str
    state: str
    detail: str
    required: bool = False


@record(frozen=True)
class Report:
    items: list[Item]

    @property
    def healthy(self) -> bool:
        return all(i.state != BAD and (not i.required or i.state != NO) for i in self.items)

    def to_json(self) -> str:
        return jsondoc.dumps({"healthy": self.healthy, "items": [
            {"section": i.section, "what": i.what, "state": i.state, "detail": i.detail,
             "required": i.required} for i in self.items]}, indent=2) + "\n"


def runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _program_state(prog: str, this: str) -> tuple[str, str]:
    """(state, detail) of a program a hook or an entry runs (shell words)."""
    if prog == this:
        return OK, "runs this qrspi-guard"
    try:
        first = shlex.split(prog)[0]
    except (ValueError, IndexError):
        return BAD, f"runs {one_line(prog, 200)}, which a shell cannot read"
    shown = one_line(first, 300)
    if "$" in first:
        return OK, f"runs {shown} (names a variable: not checked)"
    if os.path.isabs(first):
        return (OK, f"runs {shown}") if runnable(first) else (
            BAD, f"runs {shown}, which is gone (install again from the guard to use)")
    if shutil.which(first) is None:
        return BAD, f"runs {shown} from PATH, which has none here"
    return WARN, f"runs {shown} from PATH (works only where that PATH has it)"


def scripts(checkout: str, this: tuple[str, ...], required: bool,
            known: dict[str, dict[str, str]] | None = None) -> list[Item]:
    """The checkout's drop-in scripts."""
    try:
        with Dir.named(checkout) as top, top.subdir("scripts") as d:
            seen = {x.script: look(d, x.name) for x in DROPINS}
    except OSError:
        return [Item("scripts", "upstream checkout", NO, f"no scripts/ in "
                     f"{one_line(checkout)} (qrspi-guard doctor PATH/TO/qrspi-plus)",
                     required)]
    with Store(locate(checkout)) as store:
        store.open(create=False)
        kept = {x.script: store.original(x.script) for x in DROPINS}
    return [_script(x, seen[x.script], kept[x.script], this, known) for x in DROPINS]


def _script(dropin: DropIn, seen: Seen, kept: Seen, this: tuple[str, ...],
            known: dict[str, dict[str, str]] | None) -> Item:
    what = dropin.script
    if seen.kind == "missing":
        return Item("scripts", what, NO, "not in this checkout")
    if seen.kind != "file" or seen.data is None:
        return Item("scripts", what, BAD, seen.why, True)
    wrapper = parse(dropin, seen.data)
    if wrapper is not None:
        runs = " ".join(["qrspi-guard", dropin.command] + (
            ["--halt-on", wrapper.halt_on or "all"] if dropin.command == "fan-in" else []))
        guard = one_line(" ".join(shlex.quote(w) for w in wrapper.guard), 300)
        if not runnable(wrapper.guard[0]):
            return Item("scripts", what, BAD, f"adopted, but the guard it runs is gone: "
                        f"{guard} (the loop stops there with exit 127; run qrspi-guard "
                        "adopt again)", True)
        other = "" if wrapper.guard == this else f" at {guard} (not this one)"
        if kept.kind != "file":
            return Item("scripts", what, WARN, f"adopted: {runs}{other}; its original is "
                        "not kept, so undo cannot put it back", True)
        return Item("scripts", what, OK, f"adopted: {runs}{other}", True)
    if marked(seen.data):
        return Item("scripts", what, WARN, "a wrapper adopt wrote, edited since "
                    "(qrspi-guard adopt --force writes it anew)", True)
    if by_hand(dropin, seen.data):
        return Item("scripts", what, WARN, "a wrapper written by hand: it runs the "
                    "qrspi-guard on the caller's PATH, exit 127 where there is none "
                    "(qrspi-guard adopt --force replaces it)", True)
    digest = sha256(seen.data)
    label = version_of(dropin.script, digest, known)
    if label is not None:
        return Item("scripts", what, NO, f"upstream's script ({label}), not adopted", True)
    return Item("scripts", what, NO, f"a version adopt does not know (sha256 {digest}), "
                "not adopted", True)


def _our_commands(doc: dict[str, Any], runtime: str) -> dict[str, list[str]]:
    """The commands of our hooks in settings *doc*, by our event, recognised as
    ``hook uninstall`` recognises them (:func:`~qrspi_guard.hook.install.ours`)."""
    from qrspi_guard.hook.install import ours
    from qrspi_guard.hook.runtimes import BY_NAME

    found: dict[str, list[str]] = {}
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for name, event, _ in BY_NAME[runtime].install_entries():
        groups = hooks.get(name)
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                if ours(hook, event):
                    found.setdefault(event, []).append(str(hook.get("command", "")))
    return found


def hooks(project: str, home: str, this_prog: str) -> list[Item]:
    """The hook in every runtime's settings, at both scopes."""
    from qrspi_guard.hook.install import load, settings_path, warnings
    from qrspi_guard.hook.runtimes import ALL, EVENTS

    items = []
    for rt in ALL:
        for scope in ("project", "user"):
            path = settings_path(rt.name, scope, cwd=project, home=home)
            what = f"{rt.display}, {scope} ({one_line(path)})"
            try:
                doc, data, _ = load(path)
            except GuardError as exc:
                items.append(Item("hook", what, BAD, str(exc)))
                continue
            commands = _our_commands(doc, rt.name) if doc is not None else {}
            if not commands:
                items.append(Item("hook", what, NO, "not installed" if doc is not None
                                  else "no settings file"))
                continue
            states = [_program_state(c.rsplit(" hook --event ", 1)[0], this_prog)
                      for cs in commands.values() for c in cs]
            worst = min(states, key=lambda s: (BAD, WARN, OK).index(s[0]))
            detail = f"installed: {worst[1]}"
            state = worst[0]
            missing = [e for e in EVENTS if e not in commands]
            if missing and state == OK:
                state, detail = WARN, f"{detail}; no {missing[0]} hook (install again)"
            said = warnings(rt.name, (data or b"").decode("utf-8", "replace"), one_line(path))
            if said and state == OK:
                state, detail = WARN, f"{detail}; {'; '.join(said)}"
            items.append(Item("hook", what, state, detail))
    return items


def plugins(project: str, home: str) -> list[Item]:
    """The Claude Code plugin and the Gemini CLI extension, as each runtime records them
    (:func:`qrspi_guard.hook.integrations.presence`), and, where one is installed and
    enabled, the guard its launcher would run: none found is broken (the launcher then
    refuses every write into a review round)."""
    from qrspi_guard.hook.integrations import guard_found, integration, presence
    from qrspi_guard.hook.runtimes import ALL

    env = {**os.environ, "HOME": home}
    items = []
    for runtime, display in ((rt.name, rt.display) for rt in ALL):
        what = f"{display} {integration(runtime).kind}"
        got = presence(runtime, home, env, project)
        version = f" {one_line(got.version)}" if got.version else ""
        if got.unreadable is not None:
            items.append(Item("plugin", what, BAD, one_line(got.unreadable, 300)))
        elif not got.installed:
            items.append(Item("plugin", what, NO, "not installed"))
        elif not got.enabled:
            items.append(Item("plugin", what, NO, f"installed{version}, not enabled"))
        else:
            guard, why = guard_found(runtime, home, env, project)
            items.append(Item("plugin", what, OK, f"installed{version}, runs "
                              f"{one_line(guard)}") if guard is not None else
                         Item("plugin", what, BAD, f"installed{version}, but finds no "
                              f"guard: {one_line(why, 300)}"))
    return items


def pre_commit(project: str, this_prog: str) -> tuple[Item, list[str]]:
    """The project's pre-commit entry, and the baselines its entries name."""
    import yaml

    from qrspi_guard.adopt.precommit import FILE, has_guard, load_config

    what = one_line(os.path.join(project, FILE))
    try:
        with Dir.named(project) as d:
            seen = look(d, FILE)
    except OSError:
        seen = Seen("missing")
    if seen.kind == "missing":
        return Item("pre-commit", what, NO, "no pre-commit configuration"), []
    if seen.data is None:
        return Item("pre-commit", what, WARN, seen.why), []
    try:
        found = has_guard(load_config(seen.data.decode("utf-8", "replace")))
    except (yaml.YAMLError, RecursionError, ValueError):
        return Item("pre-commit", what, WARN, "does not parse as YAML"), []
    if not found:
        return Item("pre-commit", what, NO, "no qrspi-guard hook"), []
    named: list[str] = []
    for hook in found:
        entry = hook.get("entry")
        if hook.get("language") != "system" or not isinstance(entry, str):
            continue  # a hook from the guard's repository: pre-commit installs it
        try:
            words = shlex.split(entry)
        except ValueError:
            words = []
        if "check" not in words:
            return Item("pre-commit", what, BAD, f"{hook.get('id')}: its entry does not "
                        f"run check: {one_line(entry, 200)}"), named
        at = words.index("check")
        rest = words[at + 1:]
        if "--baseline" in rest[:-1]:
            named.append(rest[rest.index("--baseline") + 1])
        state, detail = _program_state(" ".join(shlex.quote(w) for w in words[:at]),
                                       this_prog)
        if state != OK:
            return Item("pre-commit", what, state, f"{hook.get('id')}: {detail}"), named
    return Item("pre-commit", what, OK, ", ".join(
        str(h.get("id")) for h in found) + " hook in place"), named


def baselines(project: str, named: list[str]) -> Item:
    """The baseline the project's configuration or pre-commit entry names."""
    from qrspi_guard.output.baseline import load as load_baseline
    from qrspi_guard.settings import resolve

    try:
        setting = resolve(start=project).baseline
    except GuardError:
        setting = None
    files = list(dict.fromkeys(
        ([setting] if setting else []) + [os.path.join(project, n) for n in named]))
    if not files:
        return Item("baseline", "baseline", NO, "none named (needed only where old "
                    "rounds have problems)")
    details = []
    for path in files:
        try:
            n = len(load_baseline(path).entries)
        except GuardError as exc:
            return Item("baseline", one_line(path), BAD, str(exc))
        details.append(f"{one_line(path)}: {n} entr{'y' if n == 1 else 'ies'}")
    return Item("baseline", "baseline", OK, "; ".join(details))


def examine(checkout: str | None, project: str, home: str, this: tuple[str, ...],
            this_prog: str, version: str,
            known: dict[str, dict[str, str]] | None = None) -> Report:
    """Everything :mod:`doctor <qrspi_guard.adopt.doctor>` looks at. *checkout* None:
    the project directory, required only when it is a checkout."""
    shown = one_line(" ".join(shlex.quote(w) for w in this), 300)
    items = [Item("guard", f"qrspi-guard {version}", OK, f"at {shown}")]
    where = checkout if checkout is not None else project
    items += scripts(where, this, checkout is not None, known)
    hook_items = hooks(project, home, this_prog) + plugins(project, home)
    items += hook_items
    if not any(i.state in (OK, WARN) for i in hook_items):
        items.append(Item("hook", "agent hook", NO, "installed nowhere: qrspi-guard hook "
                          "install (or adopt --hook RUNTIME)", True))
    entry, named = pre_commit(project, this_prog)
    items += [entry, baselines(project, named)]
    return Report(items)
