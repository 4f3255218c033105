"""The hook is never silently off (issue 30, cli.md): an option it cannot use is left out
and the call judged with the defaults; the user is told once per session through the
runtime's user-visible channel (``systemMessage``, which both runtimes show the user
and not the model: tests/test_runtimes_real.py); every refusal meanwhile names the
option; and a call that writes no review round is never blocked for it.

Before, a typo such as ``--evnt`` in the installed hook command allowed every call with
one line on stderr, which neither runtime shows after a successful hook: the guard was
off, and nobody was told."""

from __future__ import annotations

import json
import os
import stat
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support import run_cli, run_main
from tests.test_hook_json import BAD, GOOD, NAME  # a finding, its malformed twin, its name


@pytest.fixture
def rnd(tmp_path: Path) -> Path:
    d = tmp_path / "reviews" / "design" / "round-03"
    d.mkdir(parents=True)
    return d


def call(path: Path, content: str, session: str, event: str = "PreToolUse",
         tool: str = "Write") -> dict[str, Any]:
    return {"session_id": session, "hook_event_name": event, "tool_name": tool,
            "cwd": str(path.parent), "tool_input": {"file_path": str(path), "content": content}}


def hook(payload: dict[str, Any], *args: str) -> tuple[int, str, str]:
    proc = run_main("hook", *args, input=json.dumps(payload).encode())
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def told(out: str) -> str | None:
    return json.loads(out).get("systemMessage") if out else None


def session() -> str:
    return f"never-off-{uuid.uuid4()}"


def test_a_mistyped_option_still_refuses_a_malformed_finding_and_names_the_option(
        rnd: Path) -> None:
    code, out, err = hook(call(rnd / NAME, BAD, session()), "--evnt", "pre")
    assert code == 2 and out == ""
    head, _, rest = err.partition("\n\n")
    assert head == ("qrspi-guard hook: cannot use its command line (no such option: --evnt); "
                    "guarding with the defaults until the hook's command in the runtime's "
                    "settings is fixed")
    assert rest.startswith("qrspi-guard refused this write") and "severity_out_of_enum" in rest


@pytest.mark.parametrize("args", [["--event", "before"], ["--runtime", "codex"],
                                  ["--output-format", "yaml"], ["--settings"],
                                  ["--fail-closed=yes"], ["stray"]])
def test_every_kind_of_bad_option_leaves_the_defaults_guarding(rnd: Path,
                                                               args: list[str]) -> None:
    code, _, err = hook(call(rnd / NAME, BAD, session()), *args)
    assert code == 2 and "severity_out_of_enum" in err
    assert err.startswith("qrspi-guard hook: cannot use its command line (")


def test_the_user_is_told_once_per_session_and_the_model_is_not_told_on_an_allowed_call(
        rnd: Path) -> None:
    one, two = session(), session()
    first = hook(call(rnd / NAME, GOOD, one), "--evnt", "pre")
    assert first[0] == 0 and first[2] == "" and "--evnt" in (told(first[1]) or "")
    assert hook(call(rnd / NAME, GOOD, one), "--evnt", "pre") == (0, "", "")
    assert "--evnt" in (told(hook(call(rnd / NAME, GOOD, two), "--evnt", "pre")[1]) or "")


def test_every_refusal_names_the_option_even_after_the_user_was_told(rnd: Path) -> None:
    s = session()
    hook(call(rnd / NAME, GOOD, s), "--evnt", "pre")
    for _ in range(2):
        code, _, err = hook(call(rnd / NAME, BAD, s), "--evnt", "pre")
        assert code == 2 and err.startswith("qrspi-guard hook: cannot use its command line")


def test_a_json_refusal_names_the_option_and_carries_the_notice_for_the_user(
        rnd: Path) -> None:
    s = session()
    code, out, err = hook(call(rnd / NAME, BAD, s), "--output-format", "json", "--evnt")
    obj = json.loads(out)
    assert code == 0 and err == ""
    reason = obj["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("qrspi-guard hook: cannot use its command line (no such option: "
                             "--evnt)")
    assert obj["systemMessage"] == reason.partition("\n\n")[0]
    again = json.loads(hook(call(rnd / NAME, BAD, s), "--output-format", "json", "--evnt")[1])
    assert "systemMessage" not in again and "--evnt" in again["hookSpecificOutput"][
        "permissionDecisionReason"]


def test_gemini_gets_the_notice_in_its_own_block(rnd: Path) -> None:
    code, out, _ = hook(call(rnd / NAME, BAD, session(), "BeforeTool", "write_file"),
                        "--output-format", "json", "--bogus")
    obj = json.loads(out)
    assert code == 0 and obj["decision"] == "deny" and "--bogus" in obj["reason"]
    assert "--bogus" in obj["systemMessage"]


@pytest.mark.parametrize("payload", ["outside", "shell", "read", "other-tool", "not-json"])
def test_a_bad_option_never_blocks_a_call_that_writes_no_review_round(
        rnd: Path, tmp_path: Path, payload: str) -> None:
    s = session()
    p = {"outside": call(tmp_path / "notes.md", BAD, s),
         "shell": {"session_id": s, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "cwd": str(tmp_path), "tool_input": {"command": f"ls {rnd}"}},
         "read": {"session_id": s, "hook_event_name": "PreToolUse", "tool_name": "Read",
                  "cwd": str(tmp_path), "tool_input": {"file_path": str(rnd / NAME)}},
         "other-tool": call(rnd / NAME, BAD, s, tool="WebFetch"),
         "not-json": None}[payload]
    data = b"{not json" if p is None else json.dumps(p).encode()
    proc = run_main("hook", "--evnt", "pre", input=data)
    assert proc.returncode == 0


def test_an_unusable_settings_file_leaves_the_found_configuration_guarding(
        rnd: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("select = [\n")
    for settings in (str(broken), str(tmp_path / "missing.toml")):
        code, _, err = hook(call(rnd / NAME, BAD, session()), "--settings", settings)
        assert code == 2 and "severity_out_of_enum" in err
        assert err.startswith(f"qrspi-guard hook: cannot use --settings ({settings}")
    code, out, err = hook(call(rnd / NAME, GOOD, session()), "--settings", str(broken))
    assert (code, err) == (0, "") and "--settings" in (told(out) or "")


def test_a_usable_settings_file_says_nothing(rnd: Path, tmp_path: Path) -> None:
    good = tmp_path / "ok.toml"
    good.write_text("ignore = []\n")
    assert hook(call(rnd / NAME, GOOD, session()), "--settings", str(good)) == (0, "", "")


def test_the_notice_is_one_line_whatever_the_option(rnd: Path) -> None:
    code, out, _ = hook(call(rnd / NAME, GOOD, session()), "--e\x1b[31m\nvil\u202e")
    line = told(out) or ""
    assert code == 0 and "\n" not in line and "\x1b" not in line and "\u202e" not in line


def test_fail_closed_still_blocks_the_hooks_own_failures_with_a_bad_option() -> None:
    proc = run_main("hook", "--fail-closed", "--bogus", input=b"{not json")
    assert proc.returncode == 2 and b"--bogus" in proc.stderr


def test_with_no_private_directory_for_its_markers_it_tells_every_time(
        rnd: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    shared = tmp / f"qrspi-guard-told-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)  # not private: another user could plant markers to silence it
    s = session()
    for _ in range(2):
        proc = run_cli("hook", "--evnt", "pre", env={"TMPDIR": str(tmp), "XDG_RUNTIME_DIR": ""},
                       input=json.dumps(call(rnd / NAME, GOOD, s)).encode())
        assert proc.returncode == 0 and b"--evnt" in proc.stdout
    assert stat.S_IMODE(shared.stat().st_mode) == 0o777 and list(shared.iterdir()) == []


def test_markers_are_private_and_kept_apart_from_other_temporary_files(rnd: Path,
                                                                       tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = run_cli("hook", "--evnt", "pre", env={"TMPDIR": str(tmp), "XDG_RUNTIME_DIR": ""},
                   input=json.dumps(call(rnd / NAME, GOOD, session())).encode())
    assert proc.returncode == 0 and b"--evnt" in proc.stdout
    (marker_dir,) = tmp.iterdir()
    assert stat.S_IMODE(marker_dir.stat().st_mode) == 0o700
    assert marker_dir.name == f"qrspi-guard-told-{os.getuid()}"
    assert tempfile.gettempdir() != str(tmp)


def test_markers_live_in_the_users_runtime_directory_as_the_call_records_do(
        rnd: Path, private_hook_state: Path) -> None:
    """One rule for the hook's private directories (hook/private.py): the notices told
    and the shell calls' records both go under a private ``$XDG_RUNTIME_DIR``."""
    s = session()
    outs = [run_cli("hook", "--evnt", "pre",
                    input=json.dumps(call(rnd / NAME, GOOD, s)).encode()).stdout
            for _ in range(2)]
    assert b"--evnt" in outs[0] and outs[1] == b""
    markers = private_hook_state / "qrspi-guard-told"
    assert stat.S_IMODE(markers.stat().st_mode) == 0o700 and len(list(markers.iterdir())) == 1
