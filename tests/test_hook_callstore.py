"""Where the hook's pre-tool-use calls leave their records for the post-tool-use calls
(hook/callstore.py, docs/hook.md): private, anchored, bounded, stale records expire, a
record is taken once, and concurrent hook processes each find their own."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from qrspi_guard.hook import callstore
from tests.support import SCRIPT
from tests.test_hook_runtimes import BAD, NAME

ROUND = "reviews/design/round-03"


def test_a_record_is_taken_once(private_hook_state: Path) -> None:
    assert callstore.put("session", "call", b"state")
    assert callstore.take("session", "other call") is None
    assert callstore.take("other session", "call") is None
    assert callstore.take("session", "call") == b"state"
    assert callstore.take("session", "call") is None


def test_the_store_is_under_the_users_runtime_directory_and_private(
        private_hook_state: Path) -> None:
    assert callstore.put("s", "k", b"x")
    store = private_hook_state / "qrspi-guard-hook-calls"
    assert callstore.root() == str(store)
    for path in [store, *store.rglob("*")]:
        assert path.stat().st_mode & 0o777 in (0o700, 0o600), path


def test_without_a_private_runtime_directory_the_store_is_in_the_temp_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)  # another user could enter it: not the runtime directory
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert callstore.root() == str(tmp_path / f"qrspi-guard-hook-calls-{os.getuid()}")
    assert callstore.put("s", "k", b"x") and callstore.take("s", "k") == b"x"


def test_a_record_too_large_is_not_kept(private_hook_state: Path) -> None:
    assert not callstore.put("s", "k", b"x" * (callstore.MAX_RECORD_BYTES + 1))
    assert callstore.take("s", "k") is None


def test_a_stale_record_expires(private_hook_state: Path) -> None:
    assert callstore.put("s", "old", b"x")
    old = time.time() - callstore.STALE_SECONDS - 10
    for path in (private_hook_state / "qrspi-guard-hook-calls").rglob("*.rec"):
        os.utime(path, (old, old))
    assert callstore.take("s", "old") is None  # too old to be this call's
    assert callstore.put("s", "a", b"x")
    assert callstore.put("s", "b", b"y")  # the next write removes stale leftovers
    names = [p.name for p in (private_hook_state / "qrspi-guard-hook-calls").rglob("*")]
    assert len([n for n in names if n.endswith(".rec")]) == 2


def test_a_session_keeps_at_most_its_bound_of_records(private_hook_state: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(callstore, "MAX_RECORDS", 5)
    for i in range(20):
        assert callstore.put("s", f"call {i}", b"x")
    records = list((private_hook_state / "qrspi-guard-hook-calls").rglob("*.rec"))
    assert len(records) <= 5
    assert callstore.take("s", "call 19") == b"x"  # the newest are kept


def test_old_sessions_are_removed(private_hook_state: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(callstore, "MAX_SESSIONS", 3)
    for i in range(8):
        assert callstore.put(f"session {i}", "k", b"x")
        old = time.time() - 1000 + i
        for d in (private_hook_state / "qrspi-guard-hook-calls").iterdir():
            if d.stat().st_mtime > old + 500:
                os.utime(d, (old, old))
    sessions = [d for d in (private_hook_state / "qrspi-guard-hook-calls").iterdir() if d.is_dir()]
    assert len(sessions) <= 3
    assert callstore.take("session 7", "k") == b"x"


def test_a_record_replaced_by_a_link_is_not_followed(private_hook_state: Path,
                                                     tmp_path: Path) -> None:
    assert callstore.put("s", "k", b"mine")
    record = next((private_hook_state / "qrspi-guard-hook-calls").rglob("*.rec"))
    secret = tmp_path / "secret"
    secret.write_text("not a record")
    record.unlink()
    record.symlink_to(secret)
    assert callstore.take("s", "k") is None
    assert secret.read_text() == "not a record"


def test_concurrent_takers_get_a_record_once(private_hook_state: Path) -> None:
    """Many times: eight threads race to take one record; exactly one gets it."""
    for round_no in range(100):
        assert callstore.put("s", f"k{round_no}", b"x")
        barrier = threading.Barrier(8)

        def take(key: str = f"k{round_no}", start: threading.Barrier = barrier) -> bytes | None:
            start.wait()
            return callstore.take("s", key)

        with ThreadPoolExecutor(8) as pool:
            got = [f.result() for f in [pool.submit(take) for _ in range(8)]]
        assert got.count(b"x") == 1, round_no


def test_concurrent_writers_and_takers_keep_every_record(private_hook_state: Path) -> None:
    """Many times: writers and takers of different calls of one session interleave;
    every taker finds the record its own writer left."""
    for round_no in range(20):
        keys = [f"r{round_no} call {i}" for i in range(8)]

        def pair(key: str) -> bytes | None:
            callstore.put("s", key, key.encode())
            return callstore.take("s", key)

        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(pair, keys)) == [k.encode() for k in keys], round_no


def _hook(payload: dict[str, object]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([str(SCRIPT), "hook"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload).encode())
    proc.stdin.close()
    proc.stdin = None  # written: communicate() only reads now
    return proc


@pytest.mark.parametrize("attempt", range(5))
def test_concurrent_hook_processes_pair_their_own_calls(tmp_path: Path, attempt: int) -> None:
    """Six agents' calls in one session at once, each through the console script: each
    post call judges what changed since its own pre call."""
    art = tmp_path / "art"
    (art / ROUND).mkdir(parents=True)
    tags = [f"tag{i}-claude" for i in range(6)]

    def payload(event: str, i: int) -> dict[str, object]:
        command = f"python3 tools/gen.py {ROUND}/{tags[i]}.finding-F01.md"
        return {"session_id": "one session", "tool_use_id": f"toolu_{attempt}_{i}",
                "hook_event_name": event, "tool_name": "Bash", "cwd": str(art),
                "tool_input": {"command": command}}

    pres = [_hook(payload("PreToolUse", i)) for i in range(6)]
    assert [p.communicate(timeout=60) and p.returncode for p in pres] == [0] * 6
    for i, tag in enumerate(tags):
        text = BAD.replace("quality-claude", tag)
        if i % 2:  # the odd ones wrote a finding that passes
            text = text.replace("corectness", "correctness")
        (art / ROUND / f"{tag}.finding-F01.md").write_text(text)
    posts = [_hook(payload("PostToolUse", i)) for i in range(6)]
    for i, proc in enumerate(posts):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == (0 if i % 2 else 2), (i, err)
        if not i % 2:
            assert f"{tags[i]}.finding-F01.md" in err.decode()
            assert all(f"{t}.finding" not in err.decode() for t in tags if t != tags[i])
    assert NAME not in os.listdir(art / ROUND)
