"""The hook reads a command line as bash reads it (issue 29): its words, with real bash
as the oracle.

Hypothesis writes command lines of ``printf '%s\\0' WORD...`` commands whose words mix
plain text, single and double quotes, ``$'...'``, backslashes, brace expansion,
backslash-newline continuations and ``#`` inside and at the start of words, joined by
new lines, ``;``, ``&&``, subshells and comments, with here-documents between them
whose bodies look like commands. Bash runs each line (in an empty directory, so no
glob matches); the words it printed must be the fields the hook's parser reads, in
order. A line bash refuses must be one the parser refuses too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from qrspi_guard.hook.bash.fields import fields
from qrspi_guard.hook.bash.grammar import Seq, Simple, Sub, parse
from qrspi_guard.hook.bash.tokens import Incomplete

PRINTF = "printf '%s\\0' M"
#: examples in the default run, and in the thorough run marked `slow`
QUICK, THOROUGH = 200, 1500

plain = st.text(alphabet="abXY019._/-+%@:=,~#!*?[]", min_size=1, max_size=5)
single = st.text(alphabet="ab #;&|<>(){},\"$`\\\n*", max_size=5).map(lambda t: f"'{t}'")
double = st.lists(st.sampled_from(["a", " ", "#", "'", "{a,b}", "\\\\", "\\\"", "\\$", "\\`",
                                   "\\n", "\\\n", ";", "<<X", "*"]),
                  max_size=4).map(lambda parts: '"' + "".join(parts) + '"')
escaped = st.sampled_from([" ", ";", "#", "{", "}", ",", "'", '"', "\n", "a", "<", "\\",
                           "$", "*"]).map(lambda c: "\\" + c)
ansi = st.lists(st.sampled_from(["a", "\\t", "\\n", "\\x41", "\\101", "\\'", "\\\\", " "]),
                max_size=3).map(lambda parts: "$'" + "".join(parts) + "'")
alternative = st.text(alphabet="abc01._-", max_size=3)
braces = st.one_of(
    st.lists(alternative, min_size=2, max_size=3).map(lambda alts: "{" + ",".join(alts) + "}"),
    st.sampled_from(["{1..3}", "{a..c}", "{01..03}", "{3..1..2}", "{x}", "{}", "{a,{b,c}}",
                     "{-1..1}", "{a..e..2}", "{1..2}{a,b}"]))
segment = st.one_of(plain, single, double, escaped, ansi, braces, st.just("\\\n"))
word = st.lists(segment, min_size=1, max_size=4).map("".join)
blank = st.sampled_from([" ", "\t", " \\\n "])


@st.composite
def command(draw: st.DrawFn) -> str:
    words = draw(st.lists(word, min_size=1, max_size=4))
    text = PRINTF + "".join(draw(blank) + w for w in words)
    if draw(st.booleans()):
        text += " #" + draw(st.text(alphabet="ab '\"\\;", max_size=5))
    return text


@st.composite
def command_line(draw: st.DrawFn) -> str:
    parts = [draw(command())]
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["\n", "; ", "sub", "heredoc", "quoted heredoc"]))
        nxt = draw(command())
        if how == "sub":
            parts.append(f"\n( {nxt} )")
        elif how in ("heredoc", "quoted heredoc"):
            mark = "'EOF'" if how == "quoted heredoc" else "EOF"
            body = draw(st.sampled_from([f"{PRINTF} swallowed", "a # b", "'unclosed", "EOF x",
                                         "\tEOF", "(", ""]))
            parts.append(f"\ntrue <<{mark}\n{body}\nEOF\n{nxt}")
        else:
            parts.append(how + nxt)
    return "".join(parts) + "\n"


def printed_by_bash(line: str, cwd: Path) -> list[str] | None:
    """What bash's printf commands printed; None when bash refuses the line's syntax."""
    if subprocess.run(["bash", "-n", "-c", line], capture_output=True).returncode != 0:
        return None
    proc = subprocess.run(["bash", "-c", line], capture_output=True, cwd=cwd, timeout=30)
    return proc.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


def printed_by_the_parser(line: str) -> list[str] | None:
    try:
        node = parse(line)
    except Incomplete:
        return None
    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, Simple):
            if node.words and node.words[0].value() == "printf":
                for w in node.words[2:]:
                    found = fields(w)
                    assume(found is not None)  # `~+`, `~0`: the directory stack
                    assert found is not None
                    out.extend(found)
        elif isinstance(node, Seq):
            for item in node.items:
                walk(item)
        elif isinstance(node, Sub):
            walk(node.body)

    walk(node)
    return out


@pytest.fixture(scope="module")
def empty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("empty")


def _same(line: str, empty: Path) -> None:
    assert printed_by_the_parser(line) == printed_by_bash(line, empty), repr(line)


@settings(max_examples=QUICK, deadline=None, suppress_health_check=list(HealthCheck))
@given(command_line())
@example(f"{PRINTF} R#x\n{PRINTF} a\n")
@example(f"{PRINTF} \"<<X\" y\n{PRINTF} z\n")
@example(f"{PRINTF} ab\\\ncd e\\\n\n")
@example(f"{PRINTF} F{{01,02}}.md x{{a,b{{c,d}}}}y {{,x}} '{{a,b}}' \\{{a,b\\}}\n")
@example(f"true <<EOF\n{PRINTF} no\nEOF\n{PRINTF} yes\n")
@example(f"true <<-EOF\n\t{PRINTF} no\n\tEOF\n{PRINTF} yes\n")
@example(f"( {PRINTF} a ); {PRINTF} b # c \\\n{PRINTF} d\n")
def test_the_parser_reads_words_as_bash_does(empty: Path, line: str) -> None:
    _same(line, empty)


@pytest.mark.slow
@settings(max_examples=THOROUGH, deadline=None, suppress_health_check=list(HealthCheck))
@given(command_line())
def test_the_parser_reads_words_as_bash_does_thoroughly(empty: Path, line: str) -> None:
    _same(line, empty)
