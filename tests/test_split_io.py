"""split's write path in-process: old state or new under a failure at every step, the
repair of an interrupted split, and `split_incomplete` in check and watch (split.md
"All or nothing"; round-contract §10). The kill-at-each-step runs through the installed
console script are in test_split_reliability.py."""

from __future__ import annotations

import errno
import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.engine import judge_round_files
from qrspi_guard.engine.discover import round_of_dir
from qrspi_guard.engine.roundlock import round_lock, split_lock_held
from qrspi_guard.rules.splitresidue import residue_diagnostics
from qrspi_guard.split import finding_name, plan_split
from qrspi_guard.split.errors import RecoveryError
from qrspi_guard.split.faults import parse, raise_errno
from qrspi_guard.split.io import SplitIOError, execute
from qrspi_guard.split.recover import recover
from qrspi_guard.split.residue import (
    Intent,
    intent_name,
    is_split_residue,
    new_name,
    parse_residue,
)

B = b"<<<FINDING-BOUNDARY>>>"
TAG = "quality-codex"
ERRNOS = [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EINTR]


def finding(n: int, body: str = "The message.") -> bytes:
    return (f"---\nfinding_id: R3-F{n:02d}\nseverity: medium\nchange_type: correctness\n"
            f"referenced_files: [design.md:L1-L2]\nartifact: design\nround: 3\n"
            f"reviewer: {TAG}\n---\n\n{body}\n").encode()


def stdout_of(*blocks: bytes) -> bytes:
    return b"".join(B + b"\n" + block for block in blocks)


def listing(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def stale_round(tmp_path: Path) -> tuple[RoundRef, Path]:
    d = tmp_path / "reviews" / "design" / "round-03"
    d.mkdir(parents=True)
    (d / finding_name(TAG, 1)).write_bytes(finding(1, "Old attempt."))
    (d / "quality-codex.finding-F01.score.yml").write_bytes(b"score: 90\nreason: ok\n")
    (d / finding_name(TAG, 2)).write_bytes(finding(2, "Old attempt."))
    (d / finding_name(TAG, 4)).write_bytes(finding(4, "Old attempt."))
    (d / "scope-codex.clean.md").write_bytes(b"---\nreviewer: scope-codex\nround: 3\n"
                                             b"findings: 0\n---\n")
    ref = round_of_dir(str(d))
    assert ref is not None
    return ref, d


NEW = stdout_of(finding(1), finding(2), finding(3))


def new_state(before: dict[str, bytes]) -> dict[str, bytes]:
    kept = {k: v for k, v in before.items() if not k.startswith(TAG + ".")}
    kept.update({finding_name(TAG, n): finding(n) for n in (1, 2, 3)})
    return kept


def plan_for(ref: RoundRef, d: Path):  # type: ignore[no-untyped-def]
    return plan_split(NEW, ref, TAG, os.listdir(d), replace=True)


def incomplete(ref: RoundRef, watching: bool = False) -> bool:
    """What check says: does the round report split_incomplete?"""
    _, diags, _ = judge_round_files(ref, ignore_temp=watching)
    return any(d.cause == "split_incomplete" for d in diags)


def steps(tmp_path: Path) -> list[tuple[str, str]]:
    """Every fault-seam step of a --replace run, in order (recorded on a copy)."""
    ref, d = stale_round(tmp_path / "record")
    seen: list[tuple[str, str]] = []
    execute(plan_for(ref, d), lambda s, n: seen.append((s, n)))
    return seen


COMMIT = ("commit", "")


def test_a_replace_run_walks_the_documented_steps(tmp_path: Path) -> None:
    got = steps(tmp_path)
    names = [finding_name(TAG, n) for n in (1, 2, 3)]
    assert got == ([("write", n) for n in names] + [("sync-new", ""), ("intent", ""), COMMIT,
                   ("sync-intent", "")] + [("place", n) for n in names]
                   + [("remove", "quality-codex.finding-F01.score.yml"),
                      ("remove", finding_name(TAG, 4)), ("sync", ""), ("finish", "")])


def test_execute_writes_every_file_and_leaves_no_residue(tmp_path: Path) -> None:
    ref, d = stale_round(tmp_path)
    before = listing(d)
    assert execute(plan_for(ref, d)) == []
    assert listing(d) == new_state(before)
    assert all(oct(os.stat(d / finding_name(TAG, n)).st_mode & 0o777) == "0o644"
               for n in (1, 2, 3))
    assert not incomplete(ref)


@pytest.mark.parametrize("code", ERRNOS, ids=[errno.errorcode[c] for c in ERRNOS])
def test_an_os_error_at_any_step_leaves_the_old_state_or_the_new_one(tmp_path: Path,
                                                                      code: int) -> None:
    all_steps = steps(tmp_path)
    commit = all_steps.index(COMMIT)
    for k, at in enumerate(all_steps):
        ref, d = stale_round(tmp_path / f"k{k}")
        before = listing(d)

        def fault(step: str, name: str, at: tuple[str, str] = at,
                  fired: list[int] = []) -> None:  # noqa: B006 - one list per step
            if (step, name) == at and not fired:  # one fault, as the disk gives it once
                fired.append(1)
                raise_errno(code)

        if k <= commit:  # before the commit point: undone, exactly as it was
            with pytest.raises(SplitIOError, match="nothing was changed") as info:
                execute(plan_for(ref, d), fault)
            assert info.value.restored and listing(d) == before, at
        else:  # after it: retried at once, and complete
            warnings = execute(plan_for(ref, d), fault)
            assert listing(d) == new_state(before), at
            assert warnings and "succeeded on retry" in warnings[0]
        assert not incomplete(ref), at


def test_a_lasting_failure_after_the_commit_leaves_split_incomplete_until_the_next_split(
        tmp_path: Path) -> None:
    ref, d = stale_round(tmp_path)
    before = listing(d)
    broken = {"on": False}

    def fault(step: str, name: str) -> None:
        if step == "place" and name == finding_name(TAG, 2):
            broken["on"] = True
        if broken["on"] and step in ("place", "remove", "sync", "finish"):
            raise_errno(errno.EROFS)

    with pytest.raises(SplitIOError, match="split_incomplete") as info:
        execute(plan_for(ref, d), fault)
    assert not info.value.restored
    assert incomplete(ref)  # check tells: neither state, the round halts
    said = recover(str(d))
    assert len(said) == 1 and "completed" in said[0]
    assert listing(d) == new_state(before) and not incomplete(ref)


def test_a_lasting_failure_before_the_commit_leaves_the_old_state(tmp_path: Path) -> None:
    ref, d = stale_round(tmp_path)
    before = listing(d)

    def fault(step: str, name: str) -> None:
        if step in ("intent", "commit"):
            raise_errno(errno.ENOSPC)

    with pytest.raises(SplitIOError, match="No space left on device"):
        execute(plan_for(ref, d), fault)
    assert listing(d) == before and not incomplete(ref)


@pytest.mark.parametrize("at,state", [(("write", finding_name(TAG, 2)), "old"),
                                      (COMMIT, "old"),
                                      (("place", finding_name(TAG, 2)), "new")],
                         ids=["before-commit", "at-commit", "after-commit"])
@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit],
                         ids=["ctrl-c", "sigterm"])
def test_an_interrupt_ends_in_the_state_its_commit_decided_and_propagates(
        tmp_path: Path, at: tuple[str, str], state: str,
        interrupt: type[BaseException]) -> None:
    ref, d = stale_round(tmp_path)
    before = listing(d)
    fired = []

    def fault(step: str, name: str) -> None:
        if (step, name) == at and not fired:
            fired.append(1)
            raise interrupt

    with pytest.raises(interrupt):
        execute(plan_for(ref, d), fault)
    assert listing(d) == (before if state == "old" else new_state(before))
    assert not incomplete(ref)


def test_replace_refuses_to_remove_a_directory_named_like_output(tmp_path: Path) -> None:
    ref, d = stale_round(tmp_path)
    (d / "quality-codex.finding-F09.md").mkdir()
    before = sorted(os.listdir(d))
    with pytest.raises(SplitIOError, match="is a directory"):
        execute(plan_for(ref, d))
    assert sorted(os.listdir(d)) == before


# -- the reserved names and recovery -------------------------------------------------

ATTEMPT = "0123456789ab"


def test_every_name_split_makes_is_in_the_one_reserved_pattern() -> None:
    names = [new_name(ATTEMPT, finding_name(TAG, 1)), intent_name(ATTEMPT),
             f".qrspi-split.{ATTEMPT}.intent-tmp"]
    assert all(is_split_residue(n) and parse_residue(n) is not None for n in names)
    assert parse_residue(names[0]).target == finding_name(TAG, 1)  # type: ignore[union-attr]
    for other in (".quality-codex.split-abc.tmp", ".dispatch-manifest.json", "x.qrspi-split."):
        assert not is_split_residue(other)
    assert is_split_residue(".qrspi-split.garbage") and parse_residue(".qrspi-split.garbage") \
        is None


@pytest.mark.parametrize("doc", [
    b"not json",
    b"[]",
    json.dumps({"tag": TAG, "writes": ["../escape.md"], "removals": []}).encode(),
    json.dumps({"tag": TAG, "writes": ["scope-codex.clean.md"], "removals": []}).encode(),
    json.dumps({"tag": TAG, "writes": [finding_name(TAG, 1)], "removals": ["config.md"]}).encode(),
    json.dumps({"tag": TAG, "writes": "F01", "removals": []}).encode(),
    b"[" * 100_000,
], ids=["not-json", "not-object", "path-escape", "other-tag", "foreign-removal", "not-list",
        "deep-nesting"])
def test_a_damaged_intent_is_never_carried_out(tmp_path: Path, doc: bytes) -> None:
    assert Intent.decode(doc) is None
    ref, d = stale_round(tmp_path)
    (d / intent_name(ATTEMPT)).write_bytes(doc)
    before = listing(d)
    with pytest.raises(RecoveryError, match="unreadable or damaged"):
        recover(str(d))
    assert listing(d) == before and incomplete(ref)


def test_an_unknown_name_in_the_reserved_pattern_is_left_for_a_person(tmp_path: Path) -> None:
    ref, d = stale_round(tmp_path)
    (d / ".qrspi-split.by-hand").write_bytes(b"x")
    with pytest.raises(RecoveryError, match="move it away by hand"):
        recover(str(d))
    assert incomplete(ref)


def interrupted(tmp_path: Path, after: tuple[str, str]) -> tuple[RoundRef, Path, dict[str, bytes]]:
    """A round in which a --replace split died right before step *after*: a forked
    child runs it and ends with ``os._exit`` there, which no handler or undo outlives."""
    ref, d = stale_round(tmp_path)
    before = listing(d)
    plan = plan_for(ref, d)

    def fault(step: str, name: str) -> None:
        if (step, name) == after:
            os._exit(9)

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            execute(plan, fault)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    return ref, d, before


@pytest.mark.parametrize("after,state", [
    (("write", finding_name(TAG, 2)), "old"),
    (("intent", ""), "old"),
    (COMMIT, "old"),
    (("sync-intent", ""), "new"),
    (("place", finding_name(TAG, 3)), "new"),
    (("remove", finding_name(TAG, 4)), "new"),
    (("finish", ""), "new"),
], ids=["mid-write", "before-intent", "before-commit", "just-committed", "mid-place",
        "mid-remove", "before-finish"])
def test_the_next_split_rolls_back_before_the_commit_and_forward_after_it(
        tmp_path: Path, after: tuple[str, str], state: str) -> None:
    ref, d, before = interrupted(tmp_path, after)
    assert incomplete(ref)
    said = recover(str(d))
    assert len(said) == 1 and ("rolled back" if state == "old" else "completed") in said[0]
    assert listing(d) == (before if state == "old" else new_state(before))
    assert not incomplete(ref) and recover(str(d)) == []


def test_a_recovery_killed_half_way_is_finished_by_the_next_one(tmp_path: Path) -> None:
    ref, d, before = interrupted(tmp_path, ("place", finding_name(TAG, 2)))

    class Dead(BaseException):
        pass

    def fault(step: str, name: str) -> None:
        if step == "recover-remove":
            raise Dead

    with pytest.raises(Dead):
        recover(str(d), fault)
    assert incomplete(ref)
    recover(str(d))
    assert listing(d) == new_state(before) and not incomplete(ref)


# -- split_incomplete in check and watch ---------------------------------------------


def test_check_reports_a_round_holding_residue_as_split_incomplete(tmp_path: Path) -> None:
    ref, d, _ = interrupted(tmp_path, ("place", finding_name(TAG, 2)))
    _, diags, _ = judge_round_files(ref)
    (got,) = [x for x in diags if x.cause == "split_incomplete"]
    assert got.level == "error" and got.path == ref.round_dir and got.file is None
    assert "had committed" in got.message and TAG in got.message


def test_watch_skips_residue_while_a_split_holds_the_lock(tmp_path: Path) -> None:
    ref, d, _ = interrupted(tmp_path, ("write", finding_name(TAG, 2)))
    assert not split_lock_held(str(d))
    with round_lock(str(d)):
        assert split_lock_held(str(d))
        assert not incomplete(ref, watching=True)  # a split at work
        assert incomplete(ref, watching=False)  # check still says so
    assert not split_lock_held(str(d))
    assert incomplete(ref, watching=True)


def test_residue_diagnostics_ignore_every_other_hidden_name(tmp_path: Path) -> None:
    names = [".dispatch-manifest.json", ".quality-codex.split-abc.tmp", ".round-complete.json"]
    assert residue_diagnostics(str(tmp_path), names) == []


def test_the_lock_makes_a_second_split_wait_and_says_so(tmp_path: Path) -> None:
    ref, d = stale_round(tmp_path)
    fd = os.open(d, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    waited: list[int] = []

    def on_wait() -> None:
        waited.append(1)
        os.close(fd)  # the other holder goes away: the wait ends

    with round_lock(str(d), on_wait=on_wait):
        assert waited == [1]


# -- the fault seam itself -----------------------------------------------------------

SeamCall = Callable[[str, str], None]


@pytest.mark.parametrize("spec,calls,fires_at", [
    ("enospc@3", [("a", ""), ("b", ""), ("c", ""), ("c", "")], 2),
    ("erofs@place", [("write", "x"), ("place", "x"), ("place", "y")], 1),
    ("eacces@place y", [("write", "x"), ("place", "x"), ("place", "y")], 2),
    ("eintr@listed", [("listed", "")], 0),
])
def test_a_fault_spec_fires_once_at_its_step(spec: str, calls: list[tuple[str, str]],
                                            fires_at: int) -> None:
    fault: SeamCall = parse(spec)
    fired = []
    for i, (step, name) in enumerate(calls):
        try:
            fault(step, name)
        except OSError as exc:
            fired.append((i, exc.errno))
    assert [i for i, _ in fired] == [fires_at]


@pytest.mark.parametrize("spec", ["boom@1", "kill", "enospc@", "@3"])
def test_a_malformed_fault_spec_is_a_usage_error(spec: str) -> None:
    from qrspi_guard.split.errors import SplitUsageError

    with pytest.raises(SplitUsageError):
        parse(spec)
