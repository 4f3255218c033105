"""Every hook runtime in the registry is complete, and the rest of the hook reads it.

A runtime is one module under ``qrspi_guard/hook/runtimes/`` and its name in the
registry's ``MODULES``. :func:`problems` is the definition of "complete": both events
named, a tool table that writes and runs commands, a JSON answer for both events that
round-trips, install entries whose matchers name its own tools and whose hook entry
install recognises as ours, and its plugin or extension (where it lives in this
repository, with its manifest, its hooks.json and the launcher; where the runtime
records it; what the runtime gives the launcher). Each registered runtime must have
none; a half-written one is shown to have some, so the check bites.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import qrspi_guard.hook.runtimes as registry
from qrspi_guard.hook.install import merge, our_hook, settings_path, unmerge
from qrspi_guard.hook.integrations import LAUNCHER, Presence, integration, presence
from qrspi_guard.hook.payload import EVENT_NAMES, resolve, runtime_of
from qrspi_guard.hook.respond import answer, block_object
from qrspi_guard.hook.run import OPTIONS
from qrspi_guard.hook.runtimes import (
    ALL,
    BY_NAME,
    EVENTS,
    KINDS,
    MODULES,
    SHELL,
    WRITE,
    Integration,
    Runtime,
)
from tests.support import REPO, run_main

REASON = 'qrspi-guard refused this write: "x"\n- a line\n'


def _strings(value: object) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def problems(rt: Runtime) -> list[str]:
    """What is missing or wrong in *rt* (empty: complete)."""
    out: list[str] = []
    for text in ("name", "display", "directory"):
        value = getattr(rt, text, None)
        if not (isinstance(value, str) and value.strip()):
            out.append(f"no {text}")
    if isinstance(rt.directory, str) and ("/" in rt.directory or rt.directory in (".", "..")):
        out.append(f"directory {rt.directory!r} is not one directory name")
    if not isinstance(rt.events, dict) or set(rt.events) != set(EVENTS) or not all(
            isinstance(n, str) and n for n in rt.events.values()):
        out.append(f"events {rt.events!r} does not name both {EVENTS}")
    tools = rt.tools if isinstance(rt.tools, dict) else {}
    for tool, entry in tools.items():
        if not (isinstance(entry, tuple) and len(entry) == 2 and entry[0] in KINDS
                and isinstance(entry[1], str) and entry[1]):
            out.append(f"tool {tool!r}: {entry!r} is not (a kind, a tool_input key)")
    kinds = {entry[0] for entry in tools.values() if isinstance(entry, tuple) and entry}
    for kind in (WRITE, SHELL):
        if kind not in kinds:
            out.append(f"no tool of kind {kind!r}")
    for event in EVENTS:
        try:
            obj = rt.block(REASON, event)
        except Exception as exc:  # a half-written answer: reported, not raised
            out.append(f"block for {event}: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(obj, dict) or json.loads(json.dumps(obj)) != obj:
            out.append(f"block for {event} is not a JSON object: {obj!r}")
        elif REASON not in _strings(obj):
            out.append(f"block for {event} does not carry the reason")
    matchers = rt.matchers if isinstance(rt.matchers, dict) else {}
    if set(matchers) != set(EVENTS):
        out.append(f"matchers {rt.matchers!r} do not cover both {EVENTS}")
    for event, matcher in matchers.items():
        named = matcher.split("|") if isinstance(matcher, str) and matcher else []
        stray = [n for n in named if n not in tools]
        if not named or stray:
            out.append(f"{event} matcher {matcher!r} names no tool or one not in the tool "
                       f"table: {stray}")
        elif not all(re.fullmatch(matcher, n) for n in named):
            out.append(f"{event} matcher {matcher!r} does not match its own tools")
        elif not any(tools[n][0] == WRITE for n in named) or not any(
                tools[n][0] == SHELL for n in named):
            out.append(f"{event} matcher {matcher!r} misses the write or the shell tool")
    for event in EVENTS:
        try:
            entry = rt.hook_entry(event, f"/bin/qrspi-guard hook --event {event}")
        except Exception as exc:
            out.append(f"hook_entry for {event}: {type(exc).__name__}: {exc}")
            continue
        if not (isinstance(entry, dict) and entry.get("type") == "command"
                and entry.get("command") == f"/bin/qrspi-guard hook --event {event}"):
            out.append(f"hook_entry for {event} is not a command hook running the command")
        elif json.loads(json.dumps(entry)) != entry:
            out.append(f"hook_entry for {event} is not JSON")
    if rt.directory_key is not None and not (isinstance(rt.directory_key, str)
                                             and rt.directory_key):
        out.append(f"directory_key {rt.directory_key!r}")
    warned = rt.warnings({}, "settings.json")
    if not (isinstance(warned, list) and all(isinstance(w, str) for w in warned)):
        out.append(f"warnings gives {warned!r}, not a list of lines")
    made = getattr(rt, "integration", None)
    if not isinstance(made, Integration):
        out.append("no integration (its plugin or extension)")
    else:
        out += integration_problems(rt.name, made)
    return out


def integration_problems(name: str, made: Integration) -> list[str]:
    """What is missing in a runtime's plugin or extension: the files in this
    repository, and readers of the runtime's records that answer for an empty home."""
    out: list[str] = []
    for text in ("kind", "source", "manifest"):
        if not (isinstance(getattr(made, text), str) and getattr(made, text).strip()):
            out.append(f"integration has no {text}")
    if not out:
        where = REPO / made.source
        for part in (made.manifest, "hooks/hooks.json", LAUNCHER):
            if not made.source.startswith("integrations/") or not (where / part).is_file():
                out.append(f"integration {made.source}: no {part}")
    empty = "/nonexistent/qrspi-guard-registry-home"
    try:
        got = made.presence({}, empty, None)
        if not (isinstance(got, Presence) and got.runtime == name and not got.installed):
            out.append(f"integration presence for an empty home gives {got!r}")
    except Exception as exc:
        out.append(f"integration presence: {type(exc).__name__}: {exc}")
    try:
        env = made.launcher_env({}, empty, None)
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in env.items())):
            out.append(f"integration launcher_env gives {env!r}, not an environment")
    except Exception as exc:
        out.append(f"integration launcher_env: {type(exc).__name__}: {exc}")
    return out


# -- the registry ---------------------------------------------------------------------------


def test_the_registry_lists_every_runtime_module_once_by_its_runtimes_name() -> None:
    here = Path(registry.__file__).parent
    files = sorted(p.stem for p in here.glob("*.py") if p.stem != "__init__")
    assert sorted(MODULES) == files, "a runtime module is not in MODULES, or the reverse"
    assert len(set(MODULES)) == len(MODULES)
    assert [rt.name for rt in ALL] == list(MODULES)
    assert all(isinstance(rt, Runtime) for rt in ALL)
    assert list(BY_NAME) == list(MODULES)


@pytest.mark.parametrize("rt", ALL, ids=lambda rt: rt.name)
def test_every_runtime_is_complete(rt: Runtime) -> None:
    assert problems(rt) == []


def test_a_half_written_runtime_is_not_complete() -> None:
    half = Runtime(name="half", display="Half", directory=".half",
                   events={"pre": "BeforeIt"},
                   tools={"write_it": ("write", "path"), "grep": ("search", "pattern")},
                   block=lambda reason, event: {"deny": True},
                   matchers={"pre": "write_it|bash"},
                   hook_entry=lambda event, command: {"command": command})
    found = "\n".join(problems(half))
    for words in ("events", "'grep'", "kind 'shell'", "does not carry the reason",
                  "matchers", "not in the tool table", "not a command hook",
                  "no integration"):
        assert words in found, words


def test_a_half_written_integration_is_not_complete() -> None:
    def says_installed(env: object, home: str, project: str | None) -> Presence:
        return Presence("other", True)

    half = Integration(kind="plugin", source="integrations/half", manifest="",
                       presence=says_installed,
                       launcher_env=lambda env, home, project: {"X": 1})  # type: ignore
    found = "\n".join(integration_problems("half", half))
    for words in ("no manifest", "presence for an empty home", "not an environment"):
        assert words in found, words
    missing = Integration(kind="extension", source="integrations/half", manifest="half.json",
                          presence=says_installed)
    assert "integrations/half: no half.json" in "\n".join(integration_problems("half", missing))


@pytest.mark.parametrize("rt", ALL, ids=lambda rt: rt.name)
def test_the_plugins_presence_and_source_are_read_through_the_registry(
        rt: Runtime, tmp_path: Path) -> None:
    assert rt.integration is not None and integration(rt.name) is rt.integration
    got = presence(rt.name, str(tmp_path), {})
    assert (got.runtime, got.installed) == (rt.name, False)
    with pytest.raises(ValueError, match="unknown runtime"):
        presence("codex", str(tmp_path), {})


def test_names_directories_and_event_names_are_not_shared() -> None:
    assert len({rt.name for rt in ALL}) == len(ALL)
    assert len({rt.directory for rt in ALL}) == len(ALL)
    names = [n for rt in ALL for n in rt.events.values()]
    assert len(set(names)) == len(names)
    assert len(EVENT_NAMES) == len(names)


# -- what reads it --------------------------------------------------------------------------


@pytest.mark.parametrize("rt", ALL, ids=lambda rt: rt.name)
@pytest.mark.parametrize("event", EVENTS)
def test_each_runtimes_events_and_tools_resolve_to_it(rt: Runtime, event: str) -> None:
    for tool, (kind, key) in rt.tools.items():
        call = resolve({"hook_event_name": rt.events[event], "tool_name": tool,
                        "tool_input": {key: "x"}, "cwd": "/"})
        assert (call.runtime, call.event, call.tool, call.key) == (rt.name, event, tool, key)
        assert call.kind in (kind, None)
        owner = next(r for r in ALL if tool in r.tools)  # the first in order that has it
        assert runtime_of({"tool_name": tool}) == owner.name


@pytest.mark.parametrize("rt", ALL, ids=lambda rt: rt.name)
@pytest.mark.parametrize("event", EVENTS)
def test_each_runtimes_json_answer_is_its_block_object(rt: Runtime, event: str) -> None:
    given = answer(True, REASON, "json", rt.name, event)
    assert given.code == 0 and json.loads(given.stdout) == rt.block(REASON, event)
    assert block_object(REASON, rt.name, event) == rt.block(REASON, event)


@pytest.mark.parametrize("rt", ALL, ids=lambda rt: rt.name)
def test_install_writes_each_runtimes_entries_and_uninstall_removes_them(rt: Runtime) -> None:
    doc: dict[str, Any] = {}
    assert merge(doc, rt.name, prog="/bin/qrspi-guard") == [rt.events[e] for e in EVENTS]
    assert doc == {"hooks": {
        rt.events[e]: [{"matcher": rt.matchers[e],
                        "hooks": [our_hook(rt.name, e, "/bin/qrspi-guard")]}]
        for e in EVENTS}}
    assert merge(doc, rt.name, prog="/bin/qrspi-guard") == []  # recognised as ours
    assert unmerge(doc, rt.name) == [rt.events[e] for e in EVENTS] and doc == {}
    assert settings_path(rt.name, "project", "/p") == f"/p/{rt.directory}/settings.json"


def test_the_command_lines_runtime_choices_are_the_registrys() -> None:
    assert OPTIONS["--runtime"] == MODULES
    out = run_main("hook", "install", "--help").stdout.decode()
    assert f"[{'|'.join(MODULES)}]" in out and f"[default: {MODULES[0]}]" in out
    out = run_main("hook", "--help").stdout.decode()
    assert "|".join(MODULES) in out
    for rt in ALL:
        assert rt.display in out and rt.events["pre"] in out and rt.events["post"] in out


def test_install_warns_when_the_runtimes_settings_switch_a_hook_off(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"disabled": ["qrspi-guard-pre", "other", 3]}}))
    path.with_name("trustedFolders.json").write_text(json.dumps({str(tmp_path): "TRUST_FOLDER"}))
    proc = run_main("hook", "install", "--runtime", "gemini", cwd=tmp_path,
                    env={"HOME": str(tmp_path)})
    assert proc.returncode == 0
    assert proc.stderr.decode() == (
        f"qrspi-guard hook: warning: qrspi-guard-pre is listed in hooks.disabled of {path}, "
        "so Gemini CLI will not run it\n")
    assert BY_NAME["claude"].warnings(json.loads(path.read_text()), "x") == []
