"""The hook reads its payload under the rules of every JSON the guard reads (issue 29,
qrspi_guard/parse/jsondoc.py): NaN or Infinity, a key twice in one object, nesting past
the bound. The guard cannot be sure it reads such a payload as the runtime did (which
of two ``file_path`` keys, say), so it judges nothing in it. Its answer: a call whose
payload names a ``reviews`` tree is refused with one line naming the rule (never
silently off for a write into a review round); any other is allowed in silence, even
under ``--fail-closed`` (never blocked when it writes no review round).

Before, the payload went through ``json.loads``: NaN and a second key were read as if
nothing were wrong, and a payload nested past Python's recursion was the hook's own
failure, allowed with a line nobody sees, or under ``--fail-closed`` blocked whatever it
was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qrspi_guard.hook.payload import PAYLOAD_DEPTH, HookFailure, Refused, load_payload
from tests.support import run_cli, run_main
from tests.test_hook_json import GOOD, NAME

REFUSED = "qrspi-guard refused this tool call: its payload is not JSON the guard reads"


@pytest.fixture
def rnd(tmp_path: Path) -> Path:
    d = tmp_path / "reviews" / "design" / "round-03"
    d.mkdir(parents=True)
    return d


def write_call(path: Path, content: str, **extra: object) -> str:
    """A Claude Code pre-tool-use Write payload, as text, with *extra* tool_input keys
    (their values already JSON text)."""
    tail = "".join(f", {json.dumps(k)}: {v}" for k, v in extra.items())
    return ('{"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write", '
            f'"cwd": {json.dumps(str(path.parent))}, "tool_input": {{"file_path": '
            f'{json.dumps(str(path))}, "content": {json.dumps(content)}{tail}}}}}')


def hook(text: str, *args: str) -> tuple[int, str, str]:
    proc = run_main("hook", *args, input=text.encode())
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("value, rule", [
    ("NaN", "NaN is not JSON"), ("-Infinity", "-Infinity is not JSON"),
    ("1e400", "too large"), (deep(PAYLOAD_DEPTH + 1), "nested more than 512 levels deep")])
def test_a_valid_finding_written_with_a_payload_the_rules_refuse_is_refused_by_name(
        rnd: Path, value: str, rule: str) -> None:
    code, out, err = hook(write_call(rnd / NAME, GOOD, extra=value))
    assert (code, out) == (2, "")
    assert err.startswith(REFUSED) and rule in err and len(err.splitlines()) == 1


def test_a_second_file_path_that_lands_in_a_round_is_refused(rnd: Path, tmp_path: Path) -> None:
    """The guard would read one key and another reader the other: the call is refused,
    whichever of the two keys names the round."""
    for first, second in ((tmp_path / "notes.md", rnd / NAME), (rnd / NAME, tmp_path / "n.md")):
        text = write_call(first, GOOD, file_path=json.dumps(str(second)))
        code, _, err = hook(text)
        assert code == 2 and "the key 'file_path' appears twice in one object" in err


def test_a_round_named_only_through_json_escapes_is_still_seen(rnd: Path) -> None:
    text = write_call(rnd / NAME, GOOD, n="NaN")
    hidden = text.replace("reviews", "re\\u0076iews").replace("/", "\\/")
    assert "reviews" not in hidden
    code, _, err = hook(hidden)
    assert code == 2 and err.startswith(REFUSED)


def test_the_refusal_takes_the_runtimes_json_form_when_asked(rnd: Path) -> None:
    code, out, err = hook(write_call(rnd / NAME, GOOD, n="NaN"), "--output-format", "json",
                          "--runtime", "claude", "--event", "pre")
    assert (code, err) == (0, "")
    decision = json.loads(out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith(REFUSED)


@pytest.mark.parametrize("fail_closed", [[], ["--fail-closed"]])
def test_a_payload_the_rules_refuse_that_names_no_round_is_allowed_in_silence(
        tmp_path: Path, fail_closed: list[str]) -> None:
    code, out, err = hook(write_call(tmp_path / "design.md", "# Design\n", n="NaN"),
                          *fail_closed)
    assert (code, out, err) == (0, "", "")


def test_an_mcp_tools_output_nested_past_any_parser_is_never_blocked(tmp_path: Path) -> None:
    """A tool's own output rides in the post-tool-use payload, nested as deep as the tool
    made it; the hook judges no such tool, so even --fail-closed lets it through. (Before:
    Python's parser ran out of recursion, and --fail-closed blocked the call.)"""
    text = ('{"hook_event_name": "PostToolUse", "tool_name": "mcp__store__get", '
            f'"cwd": {json.dumps(str(tmp_path))}, "tool_input": {{}}, '
            f'"tool_response": {deep(5000)}}}')
    proc = run_cli("hook", "--fail-closed", input=text.encode())
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_a_payload_nested_within_the_bound_is_judged_as_usual(rnd: Path) -> None:
    """An MCP tool's input a few hundred levels deep is read, not refused."""
    text = write_call(rnd / NAME, GOOD.replace("high", "urgent"), extra=deep(PAYLOAD_DEPTH - 2))
    code, _, err = hook(text)
    assert code == 2 and "severity_out_of_enum" in err and REFUSED not in err


@pytest.mark.parametrize("raw", [b"{", b"\xff{}", b'{"a": 1'])
def test_text_that_is_not_json_at_all_stays_the_hooks_own_failure(raw: bytes) -> None:
    with pytest.raises(HookFailure) as got:
        load_payload(raw)
    assert not isinstance(got.value, Refused)
    assert str(got.value).startswith("stdin is not JSON")
