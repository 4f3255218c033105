"""Issue 29's fuzz suite for the hook's shell rule: shell commands that write a finding into
a round, in many shell forms, run for real between the pre and post calls.

Hypothesis picks a writer (a redirection, a here-document, ``tee``, ``cp``, ``sed``'s
``w``, ``sort -o``, ``python -c``, ``eval``, ``sh -c``, ``env``, ``xargs``, ``find
-exec``, a script the command does not name...), a way to spell the finding's path
(quoted, brace-expanded, continued over a line, relative to a ``cd``, in a subshell)
and read-only noise around it (``ls``, ``cat`` of another reviewer's broken finding,
comments, here-documents). Bash runs the command in a run's directory; the pre and
post calls around it come through the hook as a runtime sends them. Every write the
post call sees is judged: the broken finding the command wrote blocks, named, and the
other reviewer's broken finding is never named. Any text at all, as a command, gives a
decision and never an internal error.
"""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from qrspi_guard.hook import decide
from qrspi_guard.hook.shellwrites import analyse
from tests.test_hook_runtimes import BAD, NAME

R = "reviews/design/round-03"
OTHER = "security-codex.finding-F01.md"
QUICK, THOROUGH = 60, 400
_ids = itertools.count()

#: how the command spells the finding's path (`{P}` is replaced by it)
SPELLINGS = [
    f"{R}/{NAME}", f"'{R}/{NAME}'", f'"{R}"/{NAME}', f"{R}/quality-claude.\\\nfinding-F01.md",
    f"./{R}/{NAME}", f"reviews/design/../design/round-03/{NAME}",
    f"{R}/quality-claude.finding-F{{01..01}}.md", f"$'{R}/{NAME}'",
    f"{R}/quality\\-claude.finding-F01.md",
]
#: writers of {P} (the path, as a shell word) from {D} (the draft)
WRITERS = [
    "cp {D} {P}", "cat {D} > {P}", "cat {D} >| {P}", "cat {D} &> {P}", "tee {P} < {D} > /dev/null",
    "cat > {P} <<'EOF'\n{BODY}EOF", "cat > {P} <<EOF\n{BODY}EOF", "sort -o {P} {D}", "uniq {D} {P}",
    "install -m 644 {D} {P}", "ln {D} {P}", "cp {D} /tmp/qg-$$ && mv /tmp/qg-$$ {P}",
    "env X=1 cp {D} {P}", "command cp {D} {P}", "nice -n 1 cp {D} {P}", "timeout 30 cp {D} {P}",
    "echo {D} | xargs -I{{}} cp {{}} {P}",
    "find {DD} -maxdepth 1 -name draft.md -exec cp {{}} {P} \\;",
    "{{ cat {D}; }} > {P}", "(cat {D}) > {P}", "cat {D} | tee {P} > /dev/null",
    "exec 3>{P}; cat {D} >&3", "awk '{{print}}' {D} > {P}", "xxd {D} | xxd -r - {P}",
    "printf '%s\\n' \"$(cat {D})\" > {P}", "git diff --no-index --output={P} /dev/null {D} || true",
    "tee {P} {P}-copy{{1,2}} < {D} > /dev/null",
]
#: writers whose path {P} stands inside a string of their own (a sed script, code, a
#: command line run again): spelled plainly
EMBEDDED = [
    "sed -n 'w {P}' {D}", "sed 's/x/x/w {P}' {D} > /dev/null", "dd if={D} of={P} status=none",
    "python3 -c \"import shutil; shutil.copy('{D}', '{P}')\"",
    "python3 - <<'EOF'\nimport shutil\nshutil.copy('{D}', '{P}')\nEOF",
    "perl -e 'open(my $i, \"<\", \"{D}\"); open(my $o, \">\", \"{P}\"); print {{$o}} <$i>;'",
    "eval \"cp {D} {P}\"", "sh -c 'cp {D} {P}'", "bash -c \"cat {D} > {P}\"",
    "bash <<'EOF'\ncp {D} {P}\nEOF", "env sh -c 'cd . && tee {P} < {D} > /dev/null'",
]
PLAIN = [f"{R}/{NAME}", f"./{R}/{NAME}", f"reviews/design/../design/round-03/{NAME}"]
#: writers that name no path: a script writes the agent's finding (one tag changes)
SCRIPTS = ["python3 tools/gen.py", "bash tools/gen.sh", "sh < tools/gen.sh",
           "make -s -f tools/Makefile", "./tools/gen.sh"]
NOISE = ["ls {R}", f"cat {{R}}/{OTHER} > /dev/null", "echo done", "# a comment: cp x y",
         "grep -rc change_type {R} > /dev/null || true", ": <<'X'\ncp a b\nX", "true",
         "wc -l {R}/* > /dev/null"]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    art = tmp_path / "art"
    (art / R).mkdir(parents=True)
    (art / "draft.md").write_text(BAD)
    tools = art / "tools"
    tools.mkdir()
    (tools / "gen.py").write_text(f"import shutil\nshutil.copy('draft.md', '{R}/{NAME}')\n")
    (tools / "gen.sh").write_text(f"#!/bin/sh\ncp draft.md {R}/{NAME}\n")
    (tools / "gen.sh").chmod(0o755)
    (tools / "Makefile").write_text(f"all:\n\tcp draft.md {R}/{NAME}\n")
    return art


def _fresh(art: Path) -> None:
    for entry in (art / R).iterdir():
        entry.unlink() if not entry.is_dir() else shutil.rmtree(entry)
    (art / R / OTHER).write_text(BAD.replace("quality-claude", "security-codex"))


def payload(command: str, art: Path, event: str, use_id: str) -> dict[str, Any]:
    return {"session_id": "fuzz", "tool_use_id": use_id, "hook_event_name": event,
            "tool_name": "Bash", "cwd": str(art), "tool_input": {"command": command}}


@st.composite
def write_command(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 5)) == 0:
        core = draw(st.sampled_from(SCRIPTS))
    else:
        writer = draw(st.sampled_from(WRITERS + EMBEDDED))
        spelling = draw(st.sampled_from(SPELLINGS if writer in WRITERS else PLAIN))
        where = draw(st.sampled_from(["here", "cd", "subshell cd", "cd semicolon"]))
        draft = "draft.md"
        if where != "here" and spelling.startswith(("reviews/", "./", "'", '"', "$'")) \
                and "/" in spelling:
            spelling = spelling.replace(f"{R}/", "").replace(f"./{R}/", "").replace(
                f"'{R}/", "'").replace(f'"{R}"/', "").replace(f"$'{R}/", "$'")
            spelling = spelling.replace("reviews/design/../design/round-03/", "")
            draft = "../../../draft.md"
        core = writer.format(P=spelling, D=draft, DD=draft[:-len("/draft.md")] or ".",
                             BODY=BAD)
        if where == "cd":
            core = f"cd {R} && {core}"
        elif where == "subshell cd":
            core = f"(cd {R} && {core}\n)"
        elif where == "cd semicolon":
            core = f"cd {R}; {core}"
    before = draw(st.lists(st.sampled_from(NOISE), max_size=2))
    after = draw(st.lists(st.sampled_from(NOISE), max_size=2))
    glue = draw(st.sampled_from(["\n", "; ", " && "]))
    parts = [n.format(R=R) for n in before] + [core] + [n.format(R=R) for n in after]
    text = parts[0]
    for left, right in itertools.pairwise(parts):  # a comment, a here-document end a line
        text += ("\n" if "#" in (left[:1], right[:1]) or "<<" in left else glue) + right
    return text


def _judged_as_written(art: Path, command: str) -> None:
    _fresh(art)
    use_id = f"toolu_{next(_ids)}"
    assert decide(payload(command, art, "PreToolUse", use_id)).action == "ignore"
    proc = subprocess.run(["bash", "-c", command], cwd=art, capture_output=True, timeout=60)
    assert (art / R / NAME).exists(), (command, proc.stderr)  # the generator wrote it
    decision = decide(payload(command, art, "PostToolUse", use_id))
    assert decision.blocks, command
    assert f"In design/round-03/{NAME}:" in decision.message, command
    assert OTHER not in decision.message, command


@settings(max_examples=QUICK, deadline=None, suppress_health_check=list(HealthCheck))
@given(write_command())
@example(f"ls {R}#x\ncp draft.md {R}/{NAME}")
@example(f"echo \"<<X\" > /dev/null\ncp draft.md {R}/{NAME}")
@example(f"(cd {R} && ls); cp draft.md {R}/{NAME}")
@example(f"env LC_ALL=C sort -o {R}/{NAME} draft.md")
@example(f"git diff --no-index --output={R}/{NAME} /dev/null draft.md || true")
def test_every_write_into_a_round_is_judged(run_dir: Path, command: str) -> None:
    _judged_as_written(run_dir, command)


@pytest.mark.slow
@settings(max_examples=THOROUGH, deadline=None, suppress_health_check=list(HealthCheck))
@given(write_command())
def test_every_write_into_a_round_is_judged_thoroughly(run_dir: Path, command: str) -> None:
    _judged_as_written(run_dir, command)


shellish = st.lists(st.sampled_from(list("ab /.-'\"\\$`(){}[]<>|&;#*?~=\n\t!%,:")
                                    + ["round-03", "reviews", "<<EOF", "EOF", "cd ", "sh -c ",
                                       "eval ", "env ", "$(", "${", "\\\n", "\x00", "\udcff",
                                       "é", "\x1b", f"{R}/{NAME}", "cp draft.md "]),
                    max_size=40).map("".join)


@settings(max_examples=QUICK * 5, deadline=None, suppress_health_check=list(HealthCheck))
@given(shellish)
@example("$(" * 200)
@example('cat x > "a\x00b/round-03"')  # found here: a NUL in a path was an internal error
@example("echo {1..99999999}{1..99999999} > reviews/design/round-03/x")
@example("cat <<" + "A" * 10000)
@example("'" + "a" * 5000)
@example("eval " + "'eval " * 40)
def test_any_text_as_a_command_gives_a_decision(run_dir: Path, text: str) -> None:
    analyse(text, str(run_dir))
    for event in ("PreToolUse", "PostToolUse"):
        decision = decide(payload(text, run_dir, event, "toolu_any"))
        assert decision.action in ("ignore", "allow", "block")
