"""Every runnable snippet in README.md and docs/*.md runs as written.

The convention (README, "What a change touches"): a ```` ```sh ````, ```` ```bash ```` or
```` ```python ```` block runs, in a temporary copy of the repository with the installed
`qrspi-guard` first on PATH and `.venv` standing for the environment the suite runs in.
A block that cannot says why on the line above it, ``<!-- not run: WHY -->``, and writes
its placeholders as ``<name>`` or as shell variables; ```` ```console ```` is a transcript
and ```` ```text ```` a synopsis. A block that starts with ``#!`` is a script file: it is
written, made executable and run with ``--help``.

Two kinds of command in a block are the suite's own, not run again here:
- the set-up commands of the Quick start and of Installing (a virtualenv, an install):
  the suite already runs in the environment they make, so a block's leading set-up
  commands (joined by ``&&``) are dropped and the rest runs against the suite's
  environment; the Installing block, set-up only, runs in full in a slow test;
- the test command (``python -m pytest``): running the suite inside the suite would
  recurse; ``tests/test_docs.py`` pins it to what ``.ci/run`` runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qrspi_guard.records import record
from tests.support import REPO, SCRIPT, UNSET

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUNNABLE = ("sh", "bash", "python")
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
_NOT_RUN = re.compile(r"<!-- not run: (.+?) -->\n$")
#: a command that makes the environment (a virtualenv, an install): the suite's own
_SET_UP = re.compile(r"^(python3? -m venv\b|\S*pip3? install\b|uv (pip|sync|venv|tool)\b)")
#: the suite itself
_SUITE = re.compile(r"\bpython3? -m pytest\b")
#: what a block's last command exits with, when not 0: the examples have defects
EXIT: dict[str, int] = {
    "qrspi-guard check fixtures/rounds/example fixtures/rounds/example-fanin": 1,
    "qrspi-guard check fixtures/rounds/example --ignore expected_tag_no_output": 1,
}
#: what never belongs in a block that runs: placeholders written as if literal
_PLACEHOLDER = re.compile(r"OWNER|<[a-z][\w -]*>|/\.\.\./")


@record(frozen=True)
class Snippet:
    path: Path
    line: int
    lang: str
    text: str
    #: why it is not run, from the marker on the line above it
    not_run: str | None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def snippets() -> list[Snippet]:
    out = []
    for path in DOCS:
        text = path.read_text()
        for m in _FENCE.finditer(text):
            before = text[:m.start()]
            marker = _NOT_RUN.search(before[before.rfind("\n", 0, len(before) - 1) + 1:])
            out.append(Snippet(path, before.count("\n") + 1, m.group(1), m.group(2),
                               marker.group(1) if marker else None))
    return out


RUN = [s for s in snippets() if s.lang in RUNNABLE and s.not_run is None]


def commands(snippet: Snippet) -> tuple[str, bool]:
    """The block as it runs here (its set-up and test commands dropped), and whether
    anything was dropped."""
    lines, dropped = [], False
    for line in snippet.text.splitlines():
        parts = [p.strip() for p in line.split("&&")]
        while parts and _SET_UP.match(parts[0]):
            parts.pop(0)
            dropped = True
        if parts and _SUITE.search(parts[-1]):
            parts.pop()
            dropped = True
        if parts:
            lines.append(" && ".join(parts))
    return "\n".join(lines), dropped


def copy_of_the_repository(dest: Path) -> Path:
    """The repository's files (not its environment, caches or git metadata), with
    `.venv` the environment the suite runs in."""
    skip = shutil.ignore_patterns(".git", ".venv", ".hypothesis", ".mypy_cache",
                                  ".ruff_cache", ".pytest_cache", "__pycache__", "*.egg-info",
                                  "node_modules", "build", "dist")
    shutil.copytree(REPO, dest, ignore=skip, symlinks=True)
    (dest / ".venv").symlink_to(SCRIPT.parent.parent, target_is_directory=True)
    return dest


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(PATH=f"{SCRIPT.parent}{os.pathsep}{env.get('PATH', '')}", HOME=str(home),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def commit_all(repo: Path, env: dict[str, str]) -> None:
    for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "the repository as it is"]):
        subprocess.run(argv, cwd=repo, env=env, check=True, capture_output=True)


def test_every_shell_or_python_block_runs_or_says_why_not() -> None:
    """A new snippet is run by the next test on its own; one that cannot run must say
    why, and one that runs holds no placeholder written as if it were literal."""
    found = [s for s in snippets() if s.lang in RUNNABLE]
    assert len(RUN) >= 10, [s.id for s in RUN]
    for s in found:
        if s.not_run is not None:
            assert len(s.not_run) > 10, s.id  # a reason, not a bare marker
            continue
        assert not _PLACEHOLDER.search(s.text), (s.id, _PLACEHOLDER.search(s.text))
    for s in snippets():  # a marker above a block that is never run anyway misleads
        assert s.not_run is None or s.lang in RUNNABLE, s.id


@pytest.mark.parametrize("snippet", RUN, ids=[s.id for s in RUN])
def test_snippet_runs_as_written(snippet: Snippet, tmp_path: Path) -> None:
    repo = copy_of_the_repository(tmp_path / "repo")
    env = environment(tmp_path)
    if snippet.lang == "python":
        (tmp_path / "snippet.py").write_text(snippet.text)
        proc = subprocess.run([sys.executable, str(tmp_path / "snippet.py")], cwd=repo,
                              env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return
    if snippet.text.startswith("#!"):  # a wrapper script's content
        script = tmp_path / "wrapper.sh"
        script.write_text(snippet.text)
        script.chmod(0o755)
        proc = subprocess.run([str(script), "--help"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        command = re.search(r"exec qrspi-guard ([\w-]+)", snippet.text)
        assert command is not None
        assert proc.stdout.startswith(f"Usage: qrspi-guard {command.group(1)} "), proc.stdout
        return
    text, _ = commands(snippet)
    if not text and _SUITE.search(snippet.text):
        # the test command: the suite itself, which CI runs exactly so
        assert snippet.text.strip() in (REPO / ".ci" / "run").read_text()
        return
    if not text:
        pytest.skip("set-up only: run in full by test_the_installing_block_installs_a_"
                    "working_tool (slow)")
    if re.search(r"^git ", text, re.M):
        commit_all(repo, env)
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    last = text.strip().splitlines()[-1]
    expected = next((code for cmd, code in EXIT.items() if cmd in last), 0)
    assert proc.returncode == expected, (text, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "command not found" not in proc.stderr


def test_the_quick_start_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """The output shown under "What the first command prints", paths shortened with
    `...`, is what the first Quick start command prints."""
    readme = (REPO / "README.md").read_text()
    first = next(s for s in RUN if s.path.name == "README.md")
    text, dropped = commands(first)
    assert dropped and text.startswith(".venv/bin/qrspi-guard check ")
    shown = readme.split("What the first command prints:\n\n```\n", 1)[1].split("```", 1)[0]
    repo = copy_of_the_repository(tmp_path / "repo")
    proc = subprocess.run(["bash", "-c", text], cwd=repo, env=environment(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1
    got = proc.stdout.splitlines()
    want = shown.splitlines()
    assert len(got) == len(want), (got, want)
    for line, pattern in zip(got, want, strict=True):
        regex = ".+".join(re.escape(part) for part in pattern.split("..."))
        assert re.fullmatch(regex, line), (line, pattern)


def test_the_quick_start_and_test_commands_set_up_the_environment_the_suite_runs_in(
        ) -> None:
    """What is dropped from the Quick start is set-up (the suite's own environment) and
    the test command; what stays runs the installed tool."""
    quick = [s for s in RUN if s.path.name == "README.md"][:2]
    first, second = (commands(s) for s in quick)
    assert first[1] and first[0].startswith(".venv/bin/qrspi-guard check fixtures/rounds/")
    assert second == ("", True) and _SUITE.search(quick[1].text)
    assert (SCRIPT.parent.parent / "bin" / "qrspi-guard").exists()


def verdict_transcripts() -> list[tuple[Path, str, str]]:
    """(document, the findings.json shown above it or "", the transcript) of every
    `qrspi-guard verdict` transcript."""
    out = []
    for path in (REPO / "README.md", REPO / "docs" / "verdict.md"):
        text = path.read_text()
        json_block = ""
        for m in _FENCE.finditer(text):
            if m.group(1) == "json" and "issue_count" in m.group(2):
                json_block = m.group(2)
            elif m.group(1) == "console" and "$ qrspi-guard verdict" in m.group(2):
                out.append((path, json_block, m.group(2)))
    return out


@pytest.mark.parametrize("case", verdict_transcripts(),
                         ids=lambda c: f"{c[0].name}:{c[2].splitlines()[0]}")
def test_a_verdict_example_shows_its_input_and_prints_what_it_shows(
        case: tuple[Path, str, str], tmp_path: Path) -> None:
    path, findings, transcript = case
    named = re.search(r"\$ qrspi-guard verdict (\S+)", transcript)
    assert named is not None
    if named.group(1) == "findings.json":  # the file the example reads is shown above it
        assert findings, f"{path.name}: the verdict example never shows its input"
        (tmp_path / "findings.json").write_text(findings)
    code = 0
    blocks = re.split(r"^\$ ", transcript, flags=re.M)[1:]
    for block in blocks:
        command, _, shown = block.partition("\n")
        if command == "echo $?":
            assert shown == f"{code}\n", (path.name, command)
            continue
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path,
                              env=environment(tmp_path), capture_output=True, text=True,
                              timeout=60)
        code = proc.returncode
        assert proc.stdout == shown, (path.name, command, proc.stdout)


def test_the_readme_lists_every_schema_kind() -> None:
    from qrspi_guard.contract.schema import SCHEMA_KINDS

    readme = (REPO / "README.md").read_text()
    listed = re.search(r"qrspi-guard schema \[--kind ([\w|-]+)\]", readme)
    assert listed is not None
    assert listed.group(1).split("|") == ["all", *SCHEMA_KINDS]


def test_no_snippet_shows_a_placeholder_as_if_it_were_literal() -> None:
    """`OWNER/qrspi-guard` read as a real name; a placeholder is written `<owner>`."""
    for s in snippets():
        assert "OWNER" not in s.text, s.id
    example = (REPO / "docs" / "examples" / "qrspi-guard.yml").read_text()
    assert "OWNER" not in example and "<owner>/qrspi-guard@" in example


@pytest.mark.slow
def test_the_installing_block_installs_a_working_tool(tmp_path: Path) -> None:
    """The one snippet that is all set-up, run in full: a fresh virtualenv in a copy of
    the repository, the package installed into it, and its console script runs."""
    block = next(s for s in RUN if commands(s) == ("", True) and not _SUITE.search(s.text))
    repo = copy_of_the_repository(tmp_path / "repo")
    (repo / ".venv").unlink()  # the block makes its own
    proc = subprocess.run(["bash", "-e", "-c", block.text], cwd=repo,
                          env=environment(tmp_path), capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0 and re.search(r"(?i)no matching distribution|could not find a "
                                          r"version|network is unreachable", proc.stderr):
        pytest.skip(f"no package index to install from: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    version = subprocess.run([str(repo / ".venv" / "bin" / "qrspi-guard"), "-V"],
                             capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("qrspi-guard, version ")
