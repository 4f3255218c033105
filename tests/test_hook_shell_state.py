"""The shell rule judges what the call changed, not only what a parser guesses (issue 29):
the pre-tool-use call records the state of the rounds the call can reach, the
post-tool-use call judges what changed during the call, whatever wrote it, and blames
the agent only for the files its command names or visibly writes, or for the one tag
that changed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook import decide
from tests.test_hook_runtimes import BAD, GOOD, NAME, art, causes, rnd, shell

__all__ = ["art"]  # the fixture, shared
ROUND = "reviews/design/round-03"
OTHER = "security-codex.finding-F01.md"
OTHER_BAD = BAD.replace("quality-claude", "security-codex")
MINE_2 = NAME.replace("F01", "F02")


def call(command: str, cwd: Path, event: str, **extra: Any) -> dict[str, Any]:
    payload = shell(command, cwd, event=event)
    payload.update(extra)
    return payload


def around(command: str, cwd: Path, during: Any, **extra: Any) -> Any:
    """The pre call, what the command did (*during*), the post call's decision."""
    assert decide(call(command, cwd, "PreToolUse", **extra)).action == "ignore"
    during()
    return decide(call(command, cwd, "PostToolUse", **extra))


def test_python_c_is_judged_by_the_file_it_wrote(art: Path) -> None:
    command = f"python3 -c \"open('{ROUND}/{NAME}', 'w').write(open('/tmp/d').read())\""
    decision = around(command, art, lambda: (rnd(art) / NAME).write_text(BAD),
                      session_id="s1", tool_use_id="toolu_1")
    assert causes(decision) == ["change_type_out_of_enum"]
    assert f"In design/round-03/{NAME}:" in decision.message


def test_a_command_naming_its_file_is_not_blamed_for_a_neighbours(art: Path) -> None:
    """Reviewers write one round in parallel: the other reviewer's file changed during
    the call too, but the command names only its own."""
    def during() -> None:
        (rnd(art) / NAME).write_text(BAD)
        (rnd(art) / OTHER).write_text(OTHER_BAD)

    decision = around(f"python3 fix.py {ROUND}/{NAME}", art, during)
    assert causes(decision) == ["change_type_out_of_enum"]
    assert OTHER not in decision.message


def test_naming_no_file_it_is_blamed_for_the_one_tag_that_changed(art: Path) -> None:
    def during() -> None:
        (rnd(art) / NAME).write_text(BAD)
        (rnd(art) / MINE_2).write_text(GOOD.replace("F01", "F02"))

    decision = around(f"python3 tools/gen.py {ROUND}", art, during)
    assert causes(decision) == ["change_type_out_of_enum"]
    assert f"In design/round-03/{NAME}:" in decision.message


def test_where_several_tags_changed_and_it_names_none_it_reports_nothing(art: Path) -> None:
    def during() -> None:
        (rnd(art) / NAME).write_text(BAD)
        (rnd(art) / OTHER).write_text(OTHER_BAD)

    assert around(f"python3 tools/gen.py {ROUND}", art, during).action == "ignore"


def test_a_file_that_did_not_change_is_not_blamed(art: Path) -> None:
    """A command naming a broken file it did not change (another reviewer's) says
    nothing; what changed is judged."""
    (rnd(art) / OTHER).write_text(OTHER_BAD)
    decision = around(f"python3 check.py {ROUND}/{OTHER}", art, lambda: None)
    assert decision.action == "ignore"


def test_a_write_read_from_the_command_that_did_not_happen_is_not_judged(art: Path) -> None:
    (rnd(art) / NAME).write_text(BAD)  # there before: the command failed before writing
    assert around(f"false && cp /tmp/d {ROUND}/{NAME}", art, lambda: None).action == "ignore"


def test_a_post_call_without_its_pre_call_judges_what_the_command_names(art: Path) -> None:
    (rnd(art) / NAME).write_text(BAD)
    decision = decide(call(f"python3 fix.py {ROUND}/{NAME}", art, "PostToolUse"))
    assert causes(decision) == ["change_type_out_of_enum"]


def test_a_script_run_in_the_run_directory_reaches_its_rounds(art: Path) -> None:
    """The command names no round at all: it runs where `reviews/` is."""
    decision = around("python3 tools/write_findings.py", art,
                      lambda: (rnd(art) / NAME).write_text(BAD))
    assert causes(decision) == ["change_type_out_of_enum"]


def test_a_round_made_during_the_call_is_all_new(art: Path) -> None:
    new = art / "reviews" / "design" / "round-04"

    def during() -> None:
        new.mkdir()
        (new / NAME).write_text(BAD.replace("round: 3", "round: 4").replace("R3-", "R4-"))

    decision = around("python3 tools/next_round.py reviews/design", art, during)
    assert causes(decision) == ["change_type_out_of_enum"]
    assert "design/round-04" in decision.message


def test_an_unlisted_tool_through_eval_is_judged(art: Path) -> None:
    command = f'eval "$(printf %s {ROUND}/gen)"'
    decision = around(command, art, lambda: (rnd(art) / NAME).write_text(BAD))
    assert causes(decision) == ["change_type_out_of_enum"]


def test_the_tool_use_id_pairs_the_calls(art: Path) -> None:
    """Two calls of the same command in one session: each post call takes its own
    pre call's record (Claude Code's tool_use_id)."""
    command = f"python3 tools/gen.py {ROUND}"
    first = {"session_id": "s", "tool_use_id": "toolu_A"}
    second = {"session_id": "s", "tool_use_id": "toolu_B"}
    decide(call(command, art, "PreToolUse", **first))
    (rnd(art) / NAME).write_text(BAD)  # the first call wrote it ...
    decide(call(command, art, "PreToolUse", **second))  # ... before the second started
    assert decide(call(command, art, "PostToolUse", **second)).action == "ignore"
    decision = decide(call(command, art, "PostToolUse", **first))
    assert causes(decision) == ["change_type_out_of_enum"]


def test_gemini_pairs_by_session_and_call(art: Path) -> None:
    """Gemini CLI sends no tool-use id: the session and the call itself pair them."""
    def gemini(event: str, session: str) -> dict[str, Any]:
        return {"hook_event_name": event, "tool_name": "run_shell_command", "cwd": str(art),
                "session_id": session, "timestamp": "2026-01-01T00:00:00Z",
                "tool_input": {"command": "python3 tools/gen.py", "directory": ROUND}}

    assert decide(gemini("BeforeTool", "g1")).action == "ignore"
    (rnd(art) / NAME).write_text(BAD)
    assert decide(gemini("AfterTool", "g2")).action == "ignore"  # another session's call
    assert causes(decide(gemini("AfterTool", "g1"))) == ["change_type_out_of_enum"]
    assert decide(gemini("AfterTool", "g1")).action == "ignore"  # taken once


def test_a_glob_matches_only_what_was_there_before_the_call(art: Path) -> None:
    """`sed -i ... R/*.md` rewrote the files that were there when bash expanded the
    glob; a file another reviewer wrote meanwhile is not the command's."""
    (rnd(art) / NAME).write_text(GOOD)

    def during() -> None:
        (rnd(art) / NAME).write_text(BAD)
        (rnd(art) / OTHER).write_text(OTHER_BAD)

    decision = around(f"sed -i s/correctness/corectness/ {ROUND}/*.md", art, during)
    assert causes(decision) == ["change_type_out_of_enum"]
    assert OTHER not in decision.message


def test_the_pre_call_never_refuses_and_writes_nothing_in_the_project(art: Path) -> None:
    before = sorted(str(p) for p in art.rglob("*"))
    payload = call(f"cat > {ROUND}/{NAME} <<'EOF'\n{BAD}EOF", art, "PreToolUse")
    assert decide(payload).action == "ignore"
    assert sorted(str(p) for p in art.rglob("*")) == before


def test_the_record_is_bounded_and_private(art: Path, private_hook_state: Path) -> None:
    for i in range(300):
        (rnd(art) / f"tag{i}.finding-F01.md").write_text("x")
    decide(call(f"python3 gen.py {ROUND}", art, "PreToolUse", session_id="s"))
    store = private_hook_state / "qrspi-guard-hook-calls"
    files = [p for p in store.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].stat().st_size < 64 << 10
    for path in [store, *store.rglob("*")]:
        assert path.stat().st_mode & 0o077 == 0, path


@pytest.mark.parametrize("problem", ["group-readable", "a link", "not ours"])
def test_a_store_that_is_not_private_is_not_used(art: Path, private_hook_state: Path,
                                                 problem: str) -> None:
    store = private_hook_state / "qrspi-guard-hook-calls"
    if problem == "a link":
        elsewhere = private_hook_state / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        store.symlink_to(elsewhere)
    else:
        store.mkdir(mode=0o700)
        store.chmod(0o750 if problem == "group-readable" else 0o700)
        if problem == "not ours":
            if os.geteuid() != 0:
                pytest.skip("needs root to give a directory away")
            os.chown(store, 12345, 12345)
    command = f"python3 tools/gen.py {ROUND}"
    decide(call(command, art, "PreToolUse"))
    (rnd(art) / NAME).write_text(BAD)
    assert decide(call(command, art, "PostToolUse")).action == "ignore"  # nothing recorded
    assert not [p for p in private_hook_state.rglob("*.rec")]
