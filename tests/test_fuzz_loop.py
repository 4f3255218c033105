"""The fuzz suite for the loop commands' inputs (issue 29): hypothesis builds dispatch
manifests (random JSON, hostile numbers, duplicate keys, deep nesting, bytes that are
not UTF-8), tags, commands (shell syntax, NUL bytes, leading dashes, paths in and out of
the exec root) and command lines for `await`, `fan-in`, `prepare` and `review-prep`.
For every input: no internal error and no traceback, an exit code the command documents,
output within its bound, and the manifest either left byte for byte or written back as
JSON every reader reads (never `NaN` or `Infinity`). Nothing outside the exec root runs.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qrspi_guard.parse import jsondoc
from tests.support import run_main

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
FUZZ = settings(max_examples=80, deadline=None,
                suppress_health_check=[HealthCheck.too_slow,
                                       HealthCheck.function_scoped_fixture])
_COUNTER = itertools.count()

# -- manifests ----------------------------------------------------------------------------

TAGS = st.one_of(
    st.sampled_from(["quality-claude", "scope-codex", "q", "a-b-c", "Bad", "-x", "a/b",
                     "../x", "", "a b", "x\n", "é", "a" * 300, "quality-claude\x00"]),
    st.text(max_size=12), st.integers(), st.none(), st.lists(st.integers(), max_size=2))
#: argv[0] choices: the stubs under the exec root and everything that must be refused
PROGRAMS = ["{bin}/ok.sh", "{bin}/fail.sh", "{bin}/split.sh", "{bin}/../bin/ok.sh",
            "{bin}/missing.sh", "../x.sh", "./x.sh", "/bin/sh", "sh", "codex", "-rf",
            "{round}/.dispatch/x.sh", "{bin}", "~/x", "$HOME/x", "`id`", "'unclosed",
            '"{bin}/ok.sh"', "{bin}/ok.sh\x00", "\\{bin}/ok.sh"]
WORDS = st.one_of(st.sampled_from(["--x", "a;b", "$(touch pwned)", "|x", "'q'", '"',
                                   "\\", "\n", "\x00", "-"]), st.text(max_size=8))
COMMANDS = st.one_of(
    st.builds(lambda p, ws: " ".join([p, *ws]), st.sampled_from(PROGRAMS),
              st.lists(WORDS, max_size=3)),
    st.text(max_size=20), st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=10))
ENTRY = st.fixed_dictionaries(
    {"tag": TAGS},
    optional={"mode": st.sampled_from(["background", "first_party", "x", 3]),
              "status": st.sampled_from(["pending", "dispatched", "failed", "done", None]),
              "await_cmd": COMMANDS, "split_cmd": COMMANDS, "job_id": SCALARS,
              "dispatch_spec": st.dictionaries(st.text(max_size=4), SCALARS, max_size=3)})
ITEMS = st.lists(st.one_of(ENTRY, SCALARS), max_size=6)
#: raw texts no encoder writes: each must be a named error, the file left as it was
RAW = st.sampled_from([
    b'[{"tag": "q", "x": NaN}]', b'[{"tag": "q", "x": Infinity}]', b'[{"tag": "q"}] x',
    b'[{"tag": "q", "x": 1e400}]', b'[{"tag": "q", "tag": "r"}]', b"[" * 5000,
    b'[{"tag": "q", "n": ' + b"9" * 5000 + b"}]", b"\xff\xfe[]", b"", b"{}", b"null",
    b'[{"tag": "q", "await_cmd": "a\\u0000b"}]', b"[" * 65 + b"]" * 65, b"\x00"])


def manifest_bytes(items: Any, bin_dir: Path, round_dir: Path) -> bytes:
    text = json.dumps(items)
    return text.replace("{bin}", str(bin_dir)).replace("{round}", str(round_dir)).encode()


def stubs(root: Path) -> Path:
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for name, body in (("ok.sh", "exit 0"), ("fail.sh", "exit 3"),
                       ("split.sh", 'printf "x\\n" > ../stub.finding-F01.md')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


@FUZZ
@given(items=ITEMS, raw=st.one_of(st.none(), RAW), capture=st.one_of(
    st.none(), st.sampled_from([b"NO_FINDINGS\n", b"<<<FINDING-BOUNDARY>>>\n---\nx: 1\n---\nb\n",
                                b"\xff", b""])))
def test_await_on_any_manifest_never_raises_and_writes_only_json(
        tmp_path: Path, items: Any, raw: bytes | None, capture: bytes | None) -> None:
    root = tmp_path / f"a{next(_COUNTER)}"
    rd = root / "reviews" / "design" / "round-01"
    (rd / ".dispatch").mkdir(parents=True)
    bin_dir = stubs(root)
    data = raw if raw is not None else manifest_bytes(items, bin_dir, rd)
    manifest = rd / ".dispatch-manifest.json"
    manifest.write_bytes(data)
    if capture is not None:
        (rd / ".dispatch" / "quality-claude.raw").write_bytes(capture)
    proc = run_main("await", "--round-dir", str(rd), "--timeout", "20", cwd=root,
                    env={"QRSPI_AWAIT_EXEC_ROOTS": str(bin_dir)})
    said = proc.stdout + proc.stderr
    assert b"internal error" not in said and b"Traceback" not in said, said
    assert proc.returncode in (0, 1), said
    assert len(said) < 2048
    after = manifest.read_bytes()
    if after != data:  # rewritten: JSON every reader reads, the drain's statuses in it
        written = jsondoc.loads(after)
        assert isinstance(written, list)
    assert not (root / "pwned").exists() and not (tmp_path / "pwned").exists()


# -- fan-in -----------------------------------------------------------------------------

NAMES = st.one_of(
    st.sampled_from(["qc.finding-F01.md", "qc.finding-F02.md", "quality-claude.finding-F01.md",
                     "qc.finding-F01.md\n.finding-F03.md", "qc.finding-F1.md",
                     "qc\r.finding-F01.md", "é.finding-F01.md", "qc.finding-F01.md\n",
                     "kept-findings.txt", ".verifier-fan-in-audit.json"]),
    st.text(min_size=1, max_size=10).filter(lambda n: "/" not in n and "\x00" not in n
                                            and n not in (".", "..")))
BODIES = st.sampled_from([
    "---\nfinding_id: F01\nchange_type: style\n---\n\nb\n",
    "---\nfinding_id: R1-F01\nseverity: high\nchange_type: scope\nreferenced_files: [a]\n"
    "artifact: goals\nround: 1\nreviewer: qc\n---\n\nb\n",
    "---\nchange_type: nope\n---\n", "", "\xff", "---\nfinding_id: " + "9" * 5000 + "\n---\n"])
SCORES = st.sampled_from(["---\nscore: 90\n---\n\nw\n", "---\nscore: 10\n---\n",
                          "---\nscore: " + "9" * 5000 + "\n---\n", "---\nscore: x\n---\n",
                          "---\nverifier_status: failed\n---\n"])


@FUZZ
@given(files=st.lists(st.tuples(NAMES, BODIES, st.one_of(st.none(), SCORES)), max_size=6),
       halt_on=st.sampled_from(["all", "upstream"]), layout=st.booleans())
def test_fan_in_on_any_round_never_raises_and_keeps_only_kept_findings(
        tmp_path: Path, files: list[tuple[str, str, str | None]], halt_on: str,
        layout: bool) -> None:
    root = tmp_path / f"f{next(_COUNTER)}"
    rd = root / "reviews" / "goals" / "round-01" if layout else root / "round-NN"
    rd.mkdir(parents=True)
    for name, body, score in files:
        path = rd / name
        if path.exists():
            continue
        path.write_bytes(body.encode("utf-8", "surrogateescape"))
        if score is not None and name.endswith(".md"):
            (rd / (name[:-3] + ".score.md")).write_text(score)
    proc = run_main("fan-in", "--halt-on", halt_on, str(rd))
    assert b"internal error" not in proc.stderr and b"Traceback" not in proc.stderr
    assert proc.returncode in (0, 1, 2), proc.stderr
    kept = rd / "kept-findings.txt"
    if proc.returncode == 0 and kept.exists():
        for line in kept.read_bytes().splitlines():
            path = Path(os.fsdecode(line))
            assert path.parent == rd.resolve() and path.is_file(), line


# -- prepare and review-prep command lines -------------------------------------------------

@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("fuzz-repo")
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "t@e.test"],
                 ["config", "user.name", "t"]):
        subprocess.run(["git", "-C", str(top), *args], check=True, capture_output=True)
    for name in ("goals.md", "design.md", "plan.md"):
        (top / name).write_text(f"# {name}\nbase\n")
    subprocess.run(["git", "-C", str(top), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(top), "commit", "-q", "-m", "base"], check=True)
    (top / "goals.md").write_text("# goals\nbase\nmore\n")
    return top


VALUES = st.one_of(st.sampled_from(["main", "HEAD", "HEAD~1", "-x", "", "0" * 40, "a" * 40,
                                    "..", ".", "goals.md", "main..HEAD", "x y", "é",
                                    "reviews/tasks/task-01/round-01", "01", "99", "1e3"]),
                   st.text(max_size=12).filter(lambda t: "\x00" not in t))
PREPARE_FLAGS = st.sampled_from(["--task-branch", "--implementer-commit", "--worktree",
                                 "--base-ref", "--artifact", "--verify", "--bogus", "-h"])
REVIEW_FLAGS = st.sampled_from(["--step", "--round", "--artifact-dir", "--base-ref",
                                "--bogus", "--help", "--step=goals", "--round=1"])


@FUZZ
@given(nn=VALUES, out=VALUES, rest=st.lists(st.one_of(PREPARE_FLAGS, VALUES), max_size=6))
def test_prepare_on_any_command_line_never_raises(repo: Path, nn: str, out: str,
                                                   rest: list[str]) -> None:
    proc = run_main("prepare", nn, out, *rest, cwd=repo)
    assert b"internal error" not in proc.stderr and b"Traceback" not in proc.stderr
    assert proc.returncode in (0, 1, 2, 10, 11, 12), proc.stderr


@FUZZ
@given(args=st.lists(st.one_of(REVIEW_FLAGS, VALUES), max_size=8),
       step=st.sampled_from(["goals", "design", "plan", "implement", "nope", "../x"]),
       round_no=VALUES)
def test_review_prep_on_any_command_line_never_raises(repo: Path, args: list[str], step: str,
                                                       round_no: str) -> None:
    proc = run_main("review-prep", "--step", step, "--round", round_no, "--artifact-dir",
                    str(repo), *args, cwd=repo)
    assert b"internal error" not in proc.stderr and b"Traceback" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
