"""The hook after a shell call judges only what the command wrote (cli.md, the hook
paragraph): never what it only read or listed, naming only the files it wrote; a command
whose writes are not on its command line is judged by what changed during the call,
and where the hook cannot tell, it says nothing.

The second half is issue 29's list of writes the shell rule missed: each test writes
what the command would have written, then asks the post-tool-use call about it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.hook import decide
from qrspi_guard.hook.shellwrites import analyse
from tests.test_hook_runtimes import BAD, GOOD, NAME, art, causes, rnd, shell

__all__ = ["art"]  # the fixture, shared
ROUND = "reviews/design/round-03"
OTHER = "security-codex.finding-F01.md"  # another reviewer's file, broken


@pytest.fixture
def round_with_a_broken_neighbour(art: Path) -> Path:
    (rnd(art) / OTHER).write_text(BAD.replace("quality-claude", "security-codex"))
    (rnd(art) / NAME).write_text(GOOD)
    return art


def writes(command: str, base: Path) -> tuple[list[str], bool]:
    """(what *command* visibly writes, relative to *base*; whether it is opaque)."""
    found = analyse(command, str(base))
    return [str(Path(p).relative_to(base)) if p.startswith(str(base)) else p
            for p, _ in found.writes], found.opaque


@pytest.mark.parametrize("command", [
    f"cat {ROUND}/{NAME}", f"ls -la {ROUND}", f"grep -r change_type {ROUND}",
    f"head -5 {ROUND}/*.md | wc -l", f"git diff -- {ROUND}", f"find {ROUND} -name '*.md'",
    f"cat {ROUND}/{NAME} 2>&1 | less", f"sed -n 1,5p {ROUND}/{NAME}",
    f"env cat {ROUND}/{NAME}", f"command ls {ROUND}", f"xargs cat < {ROUND}/list",
    f"find {ROUND} -name '*.md' -exec grep -l x {{}} +", f"awk '{{print $1}}' {ROUND}/{NAME}",
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
    """Where the hook cannot tell what changed, it reports nothing: the script names
    the round, no file in it."""
    decision = decide(_script(round_with_a_broken_neighbour))
    assert decision.action == "ignore"


def test_writes_reads_redirections_and_descriptors(tmp_path: Path) -> None:
    assert writes("ls 2>&1 >out.txt", tmp_path) == (["out.txt"], False)
    assert writes("cmd 2> err.txt", tmp_path) == (["err.txt"], True)
    assert writes("cat a b | grep x", tmp_path) == ([], False)
    assert writes("echo hi > \"$OUT\"", tmp_path)[1]  # a variable: cannot tell
    assert writes("tee -a one two < x", tmp_path) == (["one", "two"], False)
    assert writes("touch a; rm b; mkdir -p c", tmp_path) == (["a", "c"], False)
    assert writes("sed 's/a/b/' f", tmp_path) == ([], False)  # no -i: to stdout
    assert writes("cat <<'X' > f\n> not a redirect\nX", tmp_path) == (["f"], False)
    assert writes("echo 'unclosed", tmp_path) == ([], True)
    assert writes("exec 3> log; ls >&log2; ls >&2; ls 2>&-", tmp_path) == (
        ["log", "log2"], False)


@pytest.mark.parametrize("command, written", [
    ("sed -i 's/a/b/' f", ["f"]), ("sed -i.ref 's/a/b/' f g", ["f", "g"]),
    ("sed -ie 's/a/b/' f", ["f"]), ("sed -E -i -e 's/a/b/' -e 's/c/d/' f", ["f"]),
    ("sed --in-place=.bak 's/a/b/' f", ["f"]), ("perl -pi -e 's/x/y/' f", ["f"]),
    ("perl -i -pe 's/x/y/' f g", ["f", "g"]), ("mv -t d a b", ["d/a", "d/b"]),
    ("cp a b c d", ["d/a", "d/b", "d/c"]), ("dd if=a of=b", ["b"]),
    ("ln -s ../x link", ["link"]), ("truncate -s 0 f", ["f"]),
    ("cp -T a d", ["d"]), ("install -d x y", ["x", "y"]), ("chmod -w f g", ["f", "g"]),
    ("chmod 644 f", ["f"]), ("touch -d yesterday f", ["f"]), ("mkdir -m 700 x", ["x"]),
])
def test_writes_reads_in_place_edits_and_copies(tmp_path: Path, command: str,
                                                written: list[str]) -> None:
    (tmp_path / "d").mkdir()
    assert writes(command, tmp_path) == (written, False)


@pytest.mark.parametrize("command", [
    "python3 gen.py", "bash -c \"cat > $X\"", "xargs touch", "git checkout -- .",
    "make findings", "sh script.sh", "cat list | sh", "source env.sh", "./write.sh",
    "env -S 'touch x'", "sed -f script.sed in", "sed 's/a/b/e' in", "sort --compress-program=gz x",
    "git -c diff.external=x diff", "git grep -O x", "awk '{print > \"f\"}' in", "rg --pre x y",
    "find . -exec touch {} +", "chmod -R 644 d", "mktemp d/x.XXXX", "sudo -s",
    "cp -r d e", "echo $(( $(touch x) ))", "for f in a b; do touch $f; done",
])
def test_a_command_whose_writes_are_not_on_its_command_line_is_opaque(
        tmp_path: Path, command: str) -> None:
    (tmp_path / "d").mkdir()
    assert writes(command, tmp_path)[1], command


def test_after_a_cd_it_cannot_follow_relative_paths_are_not_blamed(tmp_path: Path) -> None:
    paths, opaque = writes('cd "$ROUND" && cat > x.md <<EOF\nbody\nEOF', tmp_path)
    assert opaque and paths == []
    assert writes("cd sub && echo > /abs/x.md", tmp_path) == (["/abs/x.md"], False)
    assert writes("cd sub; touch y", tmp_path) == (["sub/y"], False)
    assert writes("pushd sub; popd; touch z", tmp_path) == ([], True)


# -- issue 29: writes the shell rule missed -----------------------------------------------


@pytest.fixture
def broken(art: Path) -> Path:
    """The agent's finding, broken, as the command left it."""
    (rnd(art) / NAME).write_text(BAD)
    return art


def _blocks_naming_the_finding(art: Path, command: str) -> None:
    decision = decide(shell(command, art))
    assert decision.blocks, command
    assert causes(decision) == ["change_type_out_of_enum"], command
    assert f"In design/round-03/{NAME}:" in decision.message


@pytest.mark.parametrize("command", [
    f"env LC_ALL=C cp /tmp/draft.md {ROUND}/{NAME}",
    f"env -u HOME -- cp /tmp/draft.md {ROUND}/{NAME}",
    f"env -C {ROUND} cp /tmp/draft.md {NAME}",
    f"command cp /tmp/draft.md {ROUND}/{NAME}",
    f"command -p tee {ROUND}/{NAME} < /tmp/draft.md",
    f"nice -n 5 cp /tmp/draft.md {ROUND}/{NAME}",
    f"timeout -s KILL 30 cp /tmp/draft.md {ROUND}/{NAME}",
    f"exec cp /tmp/draft.md {ROUND}/{NAME}",
    f"sh -c 'cp /tmp/draft.md {ROUND}/{NAME}'",
    f"bash -ec \"cd {ROUND} && cp /tmp/draft.md {NAME}\"",
    f"eval 'cp /tmp/draft.md {ROUND}/{NAME}'",
    f"bash <<'EOF'\ncp /tmp/draft.md {ROUND}/{NAME}\nEOF",
])
def test_a_command_that_runs_its_arguments_is_judged_by_what_it_runs(
        broken: Path, command: str) -> None:
    """env and command were listed read-only although they run their arguments."""
    _blocks_naming_the_finding(broken, command)


@pytest.mark.parametrize("command", [
    f"git diff --output={ROUND}/{NAME}", f"git log -p --output {ROUND}/{NAME}",
    f"git show HEAD --output={ROUND}/{NAME}",
    f"git -C reviews diff --output=design/round-03/{NAME}",
])
def test_git_output_writes_its_file(broken: Path, command: str) -> None:
    _blocks_naming_the_finding(broken, command)


@pytest.mark.parametrize("command", [
    f"xxd -r /tmp/dump {ROUND}/{NAME}", f"xxd -c 8 -r /tmp/dump {ROUND}/{NAME}",
    f"sort -o {ROUND}/{NAME} /tmp/draft.md", f"sort -rno{ROUND}/{NAME} /tmp/draft.md",
    f"sort --output={ROUND}/{NAME} /tmp/draft.md",
    f"uniq -f 1 /tmp/draft.md {ROUND}/{NAME}", f"uniq --skip-chars 2 /tmp/d {ROUND}/{NAME}",
    f"find /tmp -maxdepth 0 -fprint {ROUND}/{NAME}",
    f"find /tmp -maxdepth 0 -fprintf {ROUND}/{NAME} '%p'",
    f"sed -n 'w {ROUND}/{NAME}' /tmp/draft.md", f"sed 's/a/b/w {ROUND}/{NAME}' /tmp/draft.md",
    f"sed -e '/^---/W {ROUND}/{NAME}' -e p /tmp/draft.md",
    f"yq -i '.severity = \"high\"' {ROUND}/{NAME}", f"yq --inplace -P '.' {ROUND}/{NAME}",
    f"tree -o {ROUND}/{NAME} /tmp",
])
def test_writers_the_rule_missed_are_judged(broken: Path, command: str) -> None:
    _blocks_naming_the_finding(broken, command)


def test_a_hash_inside_a_word_is_not_a_comment(broken: Path) -> None:
    """`ls R#x` then a new line: the `#` swallowed the next command."""
    _blocks_naming_the_finding(broken, f"ls {ROUND}#x\ncp /tmp/draft.md {ROUND}/{NAME}")
    _blocks_naming_the_finding(broken, f"ls x # cp a b\ncp /tmp/draft.md {ROUND}/{NAME}")


def test_a_quoted_heredoc_marker_is_a_word(broken: Path) -> None:
    _blocks_naming_the_finding(broken, f'echo "<<X" > /tmp/y\ncp /tmp/draft.md {ROUND}/{NAME}')
    _blocks_naming_the_finding(broken, f"echo '<<X' \\<<Y; cp /tmp/draft.md {ROUND}/{NAME}")


def test_a_backslash_newline_is_removed_from_a_path(broken: Path) -> None:
    stem, tail = NAME.split("F01")
    _blocks_naming_the_finding(broken, f"cp /tmp/draft.md {ROUND}/{stem}\\\nF01{tail}")
    _blocks_naming_the_finding(broken, f"cp /tmp/draft.md \\\n  {ROUND}/{NAME}")


def test_brace_expansion_names_every_file(broken: Path) -> None:
    stem = NAME.replace("F01.md", "")
    _blocks_naming_the_finding(broken, f"touch {ROUND}/{stem}F{{01,02}}.md")
    _blocks_naming_the_finding(broken, f"touch {ROUND}/{stem}F{{00..03}}.md")
    _blocks_naming_the_finding(broken, f"cd {ROUND} && sed -i s/a/b/ {{x,{NAME}}}")
    assert writes("touch 'F{01,02}.md' F\\{a,b\\}", broken) == (
        ["F{01,02}.md", "F{a,b}"], False)


def test_a_cd_in_a_subshell_ends_with_it(broken: Path) -> None:
    """`(cd R && ls); echo > F` writes F where the command started, not in R."""
    command = f"(cd {ROUND} && ls); echo x > {NAME}"
    assert decide(shell(command, broken)).action == "ignore"
    assert writes(command, broken) == ([NAME], False)
    assert writes(f"cd {ROUND} | cat; touch {NAME}", broken) == ([NAME], False)
    assert writes(f"cd {ROUND} & touch {NAME}", broken) == ([NAME], False)
    assert writes(f"echo $(cd {ROUND}); touch {NAME}", broken) == ([NAME], False)
    assert writes(f"{{ cd {ROUND}; }}; touch {NAME}", broken) == ([f"{ROUND}/{NAME}"], False)


@pytest.mark.parametrize("command", [
    "{ " * 3000 + "ls" + "; }" * 3000, "if true; then " * 2000 + "ls" + "; fi" * 2000,
    "touch a" + "{1..1}" * 5000, "touch " + "{" * 200000, "((" * 3000 + "x;" + "))" * 3000,
    "touch x" + "{a,b}" * 20, "echo " + "$(" * 100, "echo " + "`" * 1001,
    "touch " + "{" * 4000 + "a,b" + "}" * 4000,
])
def test_a_command_nested_or_expanded_past_the_bounds_is_opaque(tmp_path: Path,
                                                                 command: str) -> None:
    """Bounded by the input: deep nesting (past 64 compound commands, 16 substitutions)
    and brace expansions past 1,024 words or 64 levels are read as opaque, never a
    RecursionError or a quadratic scan."""
    found = analyse(command, str(tmp_path))
    assert found.opaque and found.writes == []
