"""``qrspi-guard lockout`` end to end, through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import run_main

SCRIPT = Path(sys.executable).parent / "qrspi-guard"
ART = "src/auth.ts"


def run(cwd: Path, *args: str, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    full_env: dict[str, str | None] = {"QRSPI_GUARD_LEDGER": None}
    full_env.update(env or {})
    proc = run_main("lockout", *args, cwd=cwd, env=full_env)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(),
                                       proc.stderr.decode())


def ok(cwd: Path, *args: str) -> str:
    p = run(cwd, *args)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return p.stdout


def ledger_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_console_script_exists() -> None:
    assert SCRIPT.exists()


def test_coordinator_loop_exit_codes(tmp_path: Path) -> None:
    ok(tmp_path, "roster", "Original Author", "Revision Engineer", "Quality Engineer")
    ok(tmp_path, "author", "./src//auth.ts", "Original Author")
    out = ok(tmp_path, "reject", ART, "--reviewer", "Lead", "--decision", "reassign",
             "--reason", "Error handling is missing", "--condition", "errors are typed")
    assert "locked out: Original Author" in out

    # the reviewer names the original author: refused, exit 1, recorded
    p = run(tmp_path, "assign", ART, "Original Author")
    assert p.returncode == 1
    assert "original_author" in p.stdout
    assert "eligible: Revision Engineer, Quality Engineer" in p.stdout

    p = run(tmp_path, "check", ART, "Original Author", "--format", "json")
    assert p.returncode == 1
    data = json.loads(p.stdout)
    assert data["allowed"] is False and data["reason"] == "original_author"
    assert data["eligible"] == ["Revision Engineer", "Quality Engineer"]

    assert run(tmp_path, "check", "src", "Original Author").returncode == 0  # other artifact
    ok(tmp_path, "assign", ART, "Revision Engineer")
    ok(tmp_path, "reject", ART, "--reviewer", "Lead", "--decision", "reassign",
       "--reason", "still failing")
    ok(tmp_path, "assign", ART, "Quality Engineer")
    ok(tmp_path, "reject", ART, "--reviewer", "Lead", "--decision", "reassign",
       "--reason", "still failing")

    p = run(tmp_path, "assign", ART, "Original Author")
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert p.stdout.startswith("deadlock:")
    assert run(tmp_path, "check", ART, "Revision Engineer").returncode == 3

    events = ledger_lines(tmp_path / "reviews" / "lockout.jsonl")
    assert [e["event"] for e in events] == [
        "roster", "authored", "rejected", "refused", "assigned", "rejected", "assigned",
        "rejected", "escalated"]
    assert events[-1]["locked"] == ["Original Author", "Revision Engineer",
                                    "Quality Engineer"]
    assert events[2]["condition"] == "errors are typed"

    status = json.loads(ok(tmp_path, "status", ART, "--format", "json"))
    art = status["artifacts"][0]
    assert art["deadlocked"] is True and art["current_author"] == "Quality Engineer"

    ok(tmp_path, "unlock", ART, "Revision Engineer", "--by", "user")
    ok(tmp_path, "assign", ART, "Revision Engineer")
    ok(tmp_path, "approve", ART, "--reviewer", "Lead")
    assert run(tmp_path, "check", ART, "Original Author").returncode == 0
    text = ok(tmp_path, "status")
    assert "src/auth.ts" in text and "last decision: approved by Lead" in text


def test_escalate_admits_a_new_agent(tmp_path: Path) -> None:
    ok(tmp_path, "roster", "Original Author", "Lead")
    ok(tmp_path, "author", "tsconfig.json", "Original Author")
    ok(tmp_path, "reject", "tsconfig.json", "--reviewer", "Lead", "--decision", "escalate",
       "--reason", "Need deeper TS knowledge", "--expertise", "TypeScript")
    out = ok(tmp_path, "assign", "tsconfig.json", "TS Expert")
    assert "joined the roster" in out and "expertise: TypeScript" in out
    status = json.loads(ok(tmp_path, "status", "--format", "json"))
    assert status["roster"] == ["Original Author", "Lead", "TS Expert"]


def test_ledger_option_env_and_group_option(tmp_path: Path) -> None:
    p = run(tmp_path, "author", "a", "X", env={"QRSPI_GUARD_LEDGER": "env.jsonl"})
    assert p.returncode == 0
    assert (tmp_path / "env.jsonl").exists()
    assert not (tmp_path / "reviews").exists()
    ok(tmp_path, "--ledger", "group.jsonl", "author", "a", "Y")
    ok(tmp_path, "author", "a", "Z", "--ledger", "sub.jsonl")
    for name, agent in (("env.jsonl", "X"), ("group.jsonl", "Y"), ("sub.jsonl", "Z")):
        assert ledger_lines(tmp_path / name)[0]["agent"] == agent


@pytest.mark.parametrize("args", [
    ("unlock", ART, "A"),  # --by is required
    ("unlock", ART, "A", "--by", "coordinator"),
    ("reject", ART, "--reviewer", "R", "--decision", "maybe", "--reason", "x"),
    ("roster",),
    ("check", ART, "A", "--format", "xml"),
    ("author", "./", "A"),
    ("author", ART, " padded "),
    ("approve", ART, "--reviewer", "R"),  # nothing authored
    ("reject", ART, "--reviewer", "R", "--decision", "reassign", "--reason", "x"),
    ("unlock", ART, "A", "--by", "user"),  # not locked out
])
def test_bad_arguments_exit_2_and_write_nothing(tmp_path: Path, args: tuple[str, ...]) -> None:
    p = run(tmp_path, *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "reviews" / "lockout.jsonl").exists() or \
        (tmp_path / "reviews" / "lockout.jsonl").read_bytes() == b""


def test_unwritable_ledger_directory_exit_2_one_line(tmp_path: Path) -> None:
    (tmp_path / "somefile").write_text("x\n")
    p = run(tmp_path, "--ledger", "somefile/ledger.jsonl", "author", ART, "A")
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot" in lines[0] and "somefile" in lines[0]
    assert "Traceback" not in p.stderr
    # reading through a file-as-directory is an unreadable ledger: exit 2 as well
    p = run(tmp_path, "--ledger", "somefile/ledger.jsonl/x", "status")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_corrupt_middle_line_exit_2_names_line_and_ledger_unchanged(tmp_path: Path) -> None:
    ok(tmp_path, "author", ART, "A")
    ok(tmp_path, "reject", ART, "--reviewer", "R", "--decision", "reassign", "--reason", "x")
    ok(tmp_path, "assign", ART, "B")
    path = tmp_path / "reviews" / "lockout.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = '{"seq": 2, "event": "rejected", oops\n'
    path.write_text("".join(lines))
    before = path.read_bytes()
    for args in (("status",), ("check", ART, "A"), ("author", "other", "Z"),
                 ("approve", ART, "--reviewer", "R")):
        p = run(tmp_path, *args)
        assert p.returncode == 2, args
        assert "line 2" in p.stderr and "Traceback" not in p.stderr
        assert path.read_bytes() == before


def test_unknown_event_type_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text('{"seq":1,"at":"2026-01-01T00:00:00Z","event":"vetoed","artifact":"a"}\n')
    p = run(tmp_path, "--ledger", "l.jsonl", "status")
    assert p.returncode == 2
    assert "line 1" in p.stderr and "unknown event type 'vetoed'" in p.stderr


def test_torn_tail_reported_by_readers_and_dropped_by_next_writer(tmp_path: Path) -> None:
    ok(tmp_path, "author", ART, "A")
    path = tmp_path / "reviews" / "lockout.jsonl"
    good = path.read_bytes()
    path.write_bytes(good + b'{"seq":2,"at":"2026-')
    p = run(tmp_path, "status", "--format", "json")
    assert p.returncode == 0
    assert "ignoring torn final line 2" in p.stderr
    assert json.loads(p.stdout)["torn_tail"] == {"line": 2, "bytes": 20}
    assert path.read_bytes() == good + b'{"seq":2,"at":"2026-'
    p = run(tmp_path, "reject", ART, "--reviewer", "R", "--decision", "reassign",
            "--reason", "x")
    assert p.returncode == 0
    assert "dropped torn final line 2" in p.stderr
    assert [e["seq"] for e in ledger_lines(path)] == [1, 2]
    assert ledger_lines(path)[1]["event"] == "rejected"


def test_untrusted_text_is_printed_on_one_line(tmp_path: Path) -> None:
    ok(tmp_path, "author", ART, "A")
    out = ok(tmp_path, "reject", ART, "--reviewer", "R", "--decision", "reassign",
             "--reason", "bad\n::error::injected\x1b[31m")
    assert "\x1b" not in out
    text = ok(tmp_path, "status")
    assert "\x1b" not in text and "\n::error::" not in text
    assert "bad\\n::error::injected\\x1b[31m" in text


WORKER = textwrap.dedent("""
    import sys
    from qrspi_guard.cli import main
    ledger, k, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    art = f"art/{k}"
    for i in range(n):
        if i % 2 == 0:
            args = ["author", art, f"agent-{k}-{i}"]
        else:
            args = ["reject", art, "--reviewer", f"rev-{k}", "--decision", "reassign",
                    "--reason", f"round {i}"]
        try:
            main(["lockout", "--ledger", ledger, *args])
        except SystemExit as exc:
            if exc.code != 0:
                sys.exit(f"worker {k} step {i}: exit {exc.code}")
""")


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    ledger = tmp_path / "reviews" / "lockout.jsonl"
    ledger.parent.mkdir()  # an explicit --ledger path's directory must exist
    procs, per = 8, 40
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(ledger), str(k), str(per)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for k in range(procs)
    ]
    for w in workers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    raw = ledger.read_bytes()
    assert raw.endswith(b"\n")
    events = [json.loads(line) for line in raw.decode().splitlines()]  # every line valid
    assert len(events) == procs * per
    assert [e["seq"] for e in events] == list(range(1, procs * per + 1))
    for k in range(procs):
        mine = [e for e in events if e["artifact"] == f"art/{k}"]
        assert len(mine) == per
        assert [e.get("agent") or e.get("reason") for e in mine] == [
            f"agent-{k}-{i}" if i % 2 == 0 else f"round {i}" for i in range(per)]
    status = json.loads(ok(tmp_path, "--ledger", str(ledger), "status", "--format", "json"))
    assert status["events"] == procs * per
    for art in status["artifacts"]:
        assert len(art["locked"]) == per // 2


def test_explicit_ledger_in_a_missing_directory_is_exit_2_and_creates_nothing(
        tmp_path: Path) -> None:
    p = run(tmp_path, "--ledger", "no/such/dir/ledger.jsonl", "author", ART, "A")
    assert p.returncode == 2
    assert "does not exist" in p.stderr and p.stderr.count("\n") == 1
    assert not (tmp_path / "no").exists()


def test_default_ledger_directory_is_created_on_first_write(tmp_path: Path) -> None:
    env_free = run(tmp_path, "author", ART, "A")
    assert env_free.returncode == 0, env_free.stderr
    assert (tmp_path / "reviews" / "lockout.jsonl").exists()


@pytest.mark.parametrize("artifact", ["::error file=x,line=1::pwned", "  ::warning::x"])
def test_status_never_starts_a_line_with_a_workflow_command(tmp_path: Path,
                                                            artifact: str) -> None:
    """Issue 12 #11: an artifact id printed at a line start must not be read by the
    GitHub Actions runner as a workflow command."""
    ok(tmp_path, "author", artifact, "A")
    text = ok(tmp_path, "status")
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    # an artifact id is a path: shown with a ./ prefix, as every output shows such paths
    assert "./" + artifact.strip() in text or "./" + artifact in text
