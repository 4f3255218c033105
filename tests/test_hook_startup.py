"""Start-up: what a hook call imports, through the installed console script.

The hook runs on every matching tool call an agent makes, so the call that is not
about a review round must cost about what a bare interpreter start costs. Imports are
read from ``-X importtime`` (``PYTHONPROFILEIMPORTTIME``), which lists every module a
process imports, whatever is cached: the set is deterministic, the timings are not
asserted (``benchmarks/hook_latency.py`` measures them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from qrspi_guard.hook.runtimes import MODULES as RUNTIME_MODULES
from tests.support import SCRIPT, run_cli

#: the hook's own modules on the no-op path, exactly
NO_OP_MODULES = {"qrspi_guard", "qrspi_guard.cli", "qrspi_guard.hook",
                 "qrspi_guard.hook.payload", "qrspi_guard.hook.run",
                 "qrspi_guard.hook.where",
                 # the runtimes: their registry, and each runtime's module
                 "qrspi_guard.hook.runtimes",
                 *(f"qrspi_guard.hook.runtimes.{m}" for m in RUNTIME_MODULES),
                 # the one capped reader of every byte source (os and typing only)
                 "qrspi_guard.parse", "qrspi_guard.parse.capped",
                 # the one JSON reader (json and re only)
                 "qrspi_guard.parse.jsondoc"}
#: the standard library modules it may add to a bare start (json; and typing, which
#: qrspi_guard/__init__.py imports today)
STDLIB_ALLOWED = {"json", "json.decoder", "json.scanner", "json.encoder", "_json", "typing",
                  "_typing", "collections.abc"}
HEAVY = ("click", "pydantic", "yaml", "frontmatter", "watchdog", "dataclasses", "inspect",
         "qrspi_guard.engine", "qrspi_guard.rules", "qrspi_guard.contract.layout",
         "qrspi_guard.contract.generations", "array", "math")
GOOD = ("---\nfinding_id: R3-F01\nseverity: high\nchange_type: correctness\n"
        "referenced_files: [design.md:L10-L20]\nartifact: design\nround: 3\n"
        "reviewer: quality-claude\n---\n\nThe design drops the retry path; restore it.\n")


def imported(cmd: list[str], stdin: bytes = b"") -> tuple[set[str], int]:
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    proc = subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=60)
    names = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$",
                           proc.stderr.decode(), re.M))
    return names, proc.returncode


@pytest.fixture(scope="module")
def bare() -> set[str]:
    """A bare start of the same interpreter, plus what the console script itself imports."""
    names, code = imported([sys.executable, "-c", "import re, sys"])
    assert code == 0 and names
    return names


def payload(tmp_path: Path, event: str, tool: str, **tool_input: str) -> bytes:
    return json.dumps({"hook_event_name": event, "tool_name": tool, "cwd": str(tmp_path),
                       "tool_input": tool_input}).encode()


@pytest.mark.parametrize("case", ["write outside a round", "a tool not judged",
                                  "a shell command naming no round",
                                  "a Gemini write outside a round"])
def test_a_no_op_call_imports_only_the_hooks_light_modules(tmp_path: Path, bare: set[str],
                                                          case: str) -> None:
    stdin = {
        "write outside a round": payload(tmp_path, "PreToolUse", "Write",
                                         file_path=str(tmp_path / "design.md"), content="x"),
        "a tool not judged": payload(tmp_path, "PreToolUse", "Read",
                                     file_path=str(tmp_path / "x")),
        "a shell command naming no round": payload(tmp_path, "PostToolUse", "Bash",
                                                   command="git status && ls -la"),
        "a Gemini write outside a round": payload(tmp_path, "BeforeTool", "write_file",
                                                  file_path="notes.md", content="x"),
    }[case]
    names, code = imported([str(SCRIPT), "hook"], stdin)
    assert code == 0
    extra = names - bare
    assert {m for m in extra if m.startswith("qrspi_guard")} == NO_OP_MODULES
    assert {m for m in extra if not m.startswith("qrspi_guard")} <= STDLIB_ALLOWED
    for heavy in HEAVY:  # what the hook adds: a bare start may import some already
        assert heavy not in extra, heavy  # (3.12's pathlib, for an editable finder: math)


def test_a_valid_finding_write_imports_neither_click_nor_pydantic_nor_yaml(
        tmp_path: Path) -> None:
    round_dir = tmp_path / "reviews" / "design" / "round-03"
    round_dir.mkdir(parents=True)
    stdin = payload(tmp_path, "PreToolUse", "Write",
                    file_path=str(round_dir / "quality-claude.finding-F01.md"), content=GOOD)
    names, code = imported([str(SCRIPT), "hook"], stdin)
    assert code == 0 and "qrspi_guard.engine" in names
    for heavy in ("click", "pydantic", "yaml", "watchdog"):
        assert heavy not in names, heavy


def test_the_rest_of_the_command_line_still_goes_through_click() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0 and b"qrspi-guard" in proc.stdout
    proc = run_cli("hook", "--help")
    assert proc.returncode == 0
    for word in (b"install", b"uninstall", b"--output-format", b"--runtime", b"--fail-closed"):
        assert word in proc.stdout


def test_python_dash_m_takes_the_same_fast_route(tmp_path: Path) -> None:
    round_dir = tmp_path / "reviews" / "design" / "round-03"
    round_dir.mkdir(parents=True)
    stdin = payload(tmp_path, "PreToolUse", "Write",
                    file_path=str(round_dir / "quality-claude.finding-F01.md"),
                    content=GOOD.replace("high", "highest"))
    proc = subprocess.run([sys.executable, "-m", "qrspi_guard", "hook"], input=stdin,
                          capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"severity_out_of_enum" in proc.stderr


def test_the_cli_module_exports_its_click_group_lazily() -> None:
    code = ("import sys, qrspi_guard.cli as c; assert 'click' not in sys.modules; "
            "g = c.cli; assert 'click' in sys.modules; print(sorted(g.list_commands(None)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert "hook" in out and "check" in out
