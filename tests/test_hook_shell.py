"""The hook after a shell call judges only what the command wrote (cli.md, the hook
paragraph): never what it only read or listed, naming only the files it wrote; a command
whose writes are not on its command line is judged by what changed during the call,
and where the hook cannot tell, it says nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook import decide
from qrspi_guard.hook.shellwrites import writes
from tests.test_hook_runtimes import BAD, GOOD, NAME, art, causes, rnd, shell

__all__ = ["art"]  # the fixture, shared
ROUND = "reviews/design/round-03"
OTHER = "security-codex.finding-F01.md"  # another reviewer's file, broken


@pytest.fixture
def round_with_a_broken_neighbour(art: Path) -> Path:
    (rnd(art) / OTHER).write_text(BAD.replace("quality-claude", "security-codex"))
    (rnd(art) / NAME).write_text(GOOD)
    return art


@pytest.mark.parametrize("command", [
    f"cat {ROUND}/{NAME}", f"ls -la {ROUND}", f"grep -r change_type {ROUND}",
    f"head -5 {ROUND}/*.md | wc -l", f"git diff -- {ROUND}", f"find {ROUND} -name '*.md'",
    f"cat {ROUND}/{NAME} 2>&1 | less", f"sed -n 1,5p {ROUND}/{NAME}",
])
def test_a_command_that_only_reads_or_lists_says_nothing(
        round_with_a_broken_neighbour: Path, command: str) -> None:
    decision = decide(shell(command, round_with_a_broken_neighbour))
    assert decision.action == "ignore" and not decision.blocks, command


@pytest.mark.parametrize("command", [
    f"cat > {ROUND}/{NAME} <<'EOF'\n{BAD}EOF",
    f"echo x >> {ROUND}/{NAME}",
    f"cat /tmp/draft.md | tee {ROUND}/{NAME} > /dev/null",
    f"sed -i 's/correctness/corectness/' {ROUND}/{NAME}",
    f"sed -i.bak -e 's/a/b/' {ROUND}/{NAME}",
    f"cp /tmp/draft.md {ROUND}/{NAME}",
    f"mv /tmp/draft.md {ROUND}/",
    f"cd {ROUND} && cat > {NAME} <<EOF\n{BAD}EOF",
    f"perl -pi -e 's/x/y/' {ROUND}/{NAME}",
])
def test_a_command_that_wrote_a_broken_finding_names_only_that_file(
        round_with_a_broken_neighbour: Path, command: str) -> None:
    art = round_with_a_broken_neighbour
    if "mv /tmp/draft.md" in command:
        command = command.replace("/tmp/draft.md", f"/tmp/{NAME}")
    (rnd(art) / NAME).write_text(BAD)  # what the command wrote
    decision = decide(shell(command, art))
    assert decision.blocks, command
    assert causes(decision) == ["change_type_out_of_enum"]
    assert f"In design/round-03/{NAME}:" in decision.message
    assert OTHER not in decision.message


def test_a_valid_file_written_beside_a_broken_neighbour_is_allowed(
        round_with_a_broken_neighbour: Path) -> None:
    decision = decide(shell(f"cat > {ROUND}/{NAME} <<'EOF'\n{GOOD}EOF",
                            round_with_a_broken_neighbour))
    assert decision.action == "allow" and not decision.diagnostics


def _script(art: Path) -> dict[str, Any]:
    return shell(f"python3 tools/write_findings.py {ROUND}", art)


def test_a_script_is_judged_by_what_changed_during_the_call(
        round_with_a_broken_neighbour: Path) -> None:
    art = round_with_a_broken_neighbour
    pre = _script(art) | {"hook_event_name": "PreToolUse"}
    assert decide(pre).action == "ignore"  # before: the state is recorded, nothing judged
    (rnd(art) / NAME).write_text(BAD + "\n")  # what the script did
    decision = decide(_script(art))
    assert causes(decision) == ["change_type_out_of_enum"]
    assert OTHER not in decision.message


def test_a_script_that_changed_nothing_says_nothing(
        round_with_a_broken_neighbour: Path) -> None:
    art = round_with_a_broken_neighbour
    decide(_script(art) | {"hook_event_name": "PreToolUse"})
    assert decide(_script(art)).action == "ignore"


def test_without_a_record_of_the_state_a_script_is_not_blamed(
        round_with_a_broken_neighbour: Path) -> None:
    """Where the hook cannot tell what changed, it reports nothing."""
    decision = decide(_script(round_with_a_broken_neighbour))
    assert decision.action == "ignore"


def test_writes_reads_redirections_and_descriptors(tmp_path: Path) -> None:
    base = str(tmp_path)
    assert writes("ls 2>&1 >out.txt", base) == ([f"{base}/out.txt"], False)
    assert writes("cmd 2> err.txt", base) == ([f"{base}/err.txt"], True)
    assert writes("cat a b | grep x", base) == ([], False)
    assert writes("echo hi > \"$OUT\"", base)[1]  # a variable: cannot tell
    assert writes("tee -a one two < x", base) == ([f"{base}/one", f"{base}/two"], False)
    assert writes("touch a; rm b; mkdir -p c", base) == ([f"{base}/a", f"{base}/c"], False)
    assert writes("sed 's/a/b/' f", base) == ([], False)  # no -i: to stdout
    assert writes("cat <<'X' > f\n> not a redirect\nX", base) == ([f"{base}/f"], False)
    assert writes("echo 'unclosed", base) == ([], True)


@pytest.mark.parametrize("command, written", [
    ("sed -i 's/a/b/' f", ["f"]), ("sed -i.ref 's/a/b/' f g", ["f", "g"]),
    ("sed -ie 's/a/b/' f", ["f"]), ("sed -E -i -e 's/a/b/' -e 's/c/d/' f", ["f"]),
    ("sed --in-place=.bak 's/a/b/' f", ["f"]), ("perl -pi -e 's/x/y/' f", ["f"]),
    ("perl -i -pe 's/x/y/' f g", ["f", "g"]), ("mv -t d a b", ["d/a", "d/b"]),
    ("cp a b c d", ["d/a", "d/b", "d/c"]), ("dd if=a of=b", ["b"]),
    ("ln -s ../x link", ["link"]), ("truncate -s 0 f", ["f"]),
])
def test_writes_reads_in_place_edits_and_copies(tmp_path: Path, command: str,
                                                written: list[str]) -> None:
    if "cp a b c d" in command or "-t d" in command:
        (tmp_path / "d").mkdir()
    paths, opaque = writes(command, str(tmp_path))
    assert not opaque
    assert paths == [f"{tmp_path}/{w}" for w in written]


@pytest.mark.parametrize("command", ["python3 gen.py", "bash -c 'cat > x'", "xargs touch",
                                     "git checkout -- .", "find . -delete", "make findings"])
def test_a_command_whose_writes_are_not_on_its_command_line_is_opaque(
        tmp_path: Path, command: str) -> None:
    assert writes(command, str(tmp_path))[1]


def test_after_a_cd_it_cannot_follow_relative_paths_are_not_blamed(tmp_path: Path) -> None:
    paths, opaque = writes('cd "$ROUND" && cat > x.md <<EOF\nbody\nEOF', str(tmp_path))
    assert opaque and paths == []
    assert writes("cd sub && echo > /abs/x.md", str(tmp_path)) == (["/abs/x.md"], False)
    assert writes("cd sub; touch y", str(tmp_path)) == ([f"{tmp_path}/sub/y"], False)
