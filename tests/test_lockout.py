"""The lockout core: the seed's four examples, the spec's rules, and the ledger's durability."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qrspi_guard.lockout.ledger import Ledger, LedgerError, WriteResult, parse, resolve_path
from qrspi_guard.lockout.state import (
    LockoutError,
    State,
    evaluate,
    normalise_artifact,
    plan_approve,
    plan_assign,
    plan_author,
    plan_reject,
    plan_roster,
    plan_unlock,
    replay,
)

ART = "src/auth.ts"


class Coord:
    """A coordinator driving one ledger through the core API."""

    def __init__(self, path: Path) -> None:
        self.ledger = Ledger(path)
        self.path = path

    def roster(self, *agents: str) -> WriteResult:
        return self.ledger.write(lambda s: plan_roster(s, list(agents)))

    def author(self, artifact: str, agent: str) -> WriteResult:
        return self.ledger.write(lambda s: plan_author(s, artifact, agent))

    def reject(self, artifact: str, reviewer: str, decision: str = "reassign",
               reason: str = "not good enough", **details: str | None) -> WriteResult:
        return self.ledger.write(
            lambda s: plan_reject(s, artifact, reviewer, decision, reason, **details))

    def assign(self, artifact: str, agent: str) -> WriteResult:
        return self.ledger.write(lambda s: plan_assign(s, artifact, agent))

    def approve(self, artifact: str, reviewer: str) -> WriteResult:
        return self.ledger.write(lambda s: plan_approve(s, artifact, reviewer))

    def unlock(self, artifact: str, agent: str, by: str = "user") -> WriteResult:
        return self.ledger.write(lambda s: plan_unlock(s, artifact, agent, by))

    def state(self) -> State:
        return self.ledger.state()[0]

    def check(self, artifact: str, agent: str):  # -> Eligibility
        return evaluate(self.state(), artifact, agent)

    def events(self) -> list[dict]:
        return [json.loads(line) for line in self.path.read_text().splitlines()]


@pytest.fixture()
def coord(tmp_path: Path) -> Coord:
    return Coord(tmp_path / "reviews" / "lockout.jsonl")


# -- the seed's examples ----------------------------------------------------------------


def test_example1_reassign_after_rejection(coord: Coord) -> None:
    coord.roster("Runtime Engineer", "Revision Engineer", "Quality Engineer")
    coord.author(ART, "Runtime Engineer")
    coord.reject(ART, "Quality Engineer", "reassign", "Error handling is missing.")
    v = coord.check(ART, "Runtime Engineer")
    assert not v.allowed and v.reason == "original_author"
    r = coord.assign(ART, "Revision Engineer")
    assert r.plan.outcome == "recorded" and r.event.event == "assigned"
    assert coord.state().artifact(ART).current_author == "Revision Engineer"
    coord.author(ART, "Revision Engineer")  # v2
    coord.approve(ART, "Quality Engineer")
    a = coord.state().artifact(ART)
    assert a.locked == [] and a.gates == [] and not a.cycle_open
    assert coord.check(ART, "Runtime Engineer").allowed  # lockout cleared


def test_example2_escalate_admits_new_agent_with_expertise(coord: Coord) -> None:
    coord.roster("Original Author", "Lead")
    coord.author("tsconfig.json", "Original Author")
    coord.reject("tsconfig.json", "Lead", "escalate", "Need deeper TS knowledge.",
                 expertise="TypeScript compiler options")
    assert coord.check("tsconfig.json", "Original Author").reason == "original_author"
    r = coord.assign("tsconfig.json", "TS Expert")
    assert r.plan.outcome == "recorded"
    assert r.event.joined_roster is True
    assert r.event.expertise == "TypeScript compiler options"
    st_ = coord.state()
    assert "TS Expert" in st_.roster
    assert st_.artifact("tsconfig.json").current_author == "TS Expert"
    # an existing agent is also fine under escalate, and does not "join" again
    assert coord.check("tsconfig.json", "TS Expert").allowed


def test_reassign_with_roster_refuses_unknown_agent(coord: Coord) -> None:
    coord.roster("A", "B")
    coord.author(ART, "A")
    coord.reject(ART, "R", "reassign")
    r = coord.assign(ART, "Stranger")
    assert r.plan.outcome == "refused" and r.event.reason == "not_on_roster"
    assert r.event.eligible == ["B"]


def test_example3_deadlock_after_three_rejections(coord: Coord) -> None:
    coord.roster("Original Author", "Revision Engineer", "Quality Engineer")
    coord.author(ART, "Original Author")
    coord.reject(ART, "Lead")
    assert coord.assign(ART, "Revision Engineer").plan.outcome == "recorded"
    coord.reject(ART, "Lead")
    assert coord.assign(ART, "Quality Engineer").plan.outcome == "recorded"
    coord.reject(ART, "Lead")
    a = coord.state().artifact(ART)
    assert a.locked == ["Original Author", "Revision Engineer", "Quality Engineer"]
    for agent in ("Original Author", "Quality Engineer", "Someone New"):
        r = coord.assign(ART, agent)
        assert r.plan.outcome == "deadlock"
        assert r.event.event == "escalated" and r.event.reason == "deadlock"
        assert r.event.artifact == ART
        assert r.event.locked == ["Original Author", "Revision Engineer", "Quality Engineer"]
    # never re-admitted: no assignment after the third rejection
    kinds = [e["event"] for e in coord.events()]
    assert kinds[-3:] == ["escalated"] * 3
    assert coord.state().artifact(ART).current_author == "Quality Engineer"
    assert coord.check(ART, "Original Author").deadlock


def test_example4_reviewer_names_original_author(coord: Coord) -> None:
    coord.roster("Original Author", "Revision Engineer", "Quality Engineer")
    coord.author(ART, "Original Author")
    coord.reject(ART, "Quality Engineer", reason="Fix the error handling")
    r = coord.assign(ART, "Original Author")
    assert r.plan.outcome == "refused"
    assert r.event.event == "refused" and r.event.reason == "original_author"
    assert r.event.eligible == ["Revision Engineer"]  # QE is the rejecting gate
    assert coord.events()[-1]["event"] == "refused"  # the attempt is in the history
    r = coord.assign(ART, "Revision Engineer")
    assert r.plan.outcome == "recorded"


# -- rules ------------------------------------------------------------------------------


def test_scope_is_per_artifact_and_exact(coord: Coord) -> None:
    coord.author(ART, "A")
    coord.reject(ART, "R")
    assert not coord.check("./src//auth.ts", "A").allowed
    assert not coord.check("src/auth.ts/", "A").allowed
    assert coord.check("src", "A").allowed
    assert coord.check("src/auth", "A").allowed
    assert coord.check("src/auth.ts.bak", "A").allowed
    assert coord.check("lib/other.py", "A").allowed


def test_locking_a_directory_id_does_not_lock_paths_under_it(coord: Coord) -> None:
    coord.author("src", "A")
    coord.reject("src", "R")
    assert not coord.check("src", "A").allowed
    assert coord.check("src/auth.ts", "A").allowed  # the squad substring bug


def test_normalise_artifact() -> None:
    assert normalise_artifact("./a//b") == "a/b"
    assert normalise_artifact("a/./b/") == "a/b"
    assert normalise_artifact("/a//b") == "/a/b"
    assert normalise_artifact("a/../b") == "a/../b"
    for bad in ("", ".", "./", "a\nb"):
        with pytest.raises(LockoutError):
            normalise_artifact(bad)


def test_stacking(coord: Coord) -> None:
    coord.roster("A", "B", "C", "D")
    coord.author(ART, "A")
    coord.reject(ART, "R1")
    coord.assign(ART, "B")
    coord.reject(ART, "R2")
    a = coord.state().artifact(ART)
    assert a.locked == ["A", "B"] and a.gates == ["R1", "R2"]
    assert coord.check(ART, "A").reason == "original_author"
    assert coord.check(ART, "B").reason == "locked_out"
    assert coord.check(ART, "R1").reason == "rejecting_gate"
    v = coord.check(ART, "C")
    assert v.allowed and v.eligible == ["C", "D"]


def test_second_rejection_of_same_version_keeps_set_growing(coord: Coord) -> None:
    coord.author(ART, "A")
    coord.reject(ART, "R1")
    coord.reject(ART, "R2", "escalate")
    a = coord.state().artifact(ART)
    assert a.locked == ["A"] and a.gates == ["R1", "R2"] and a.decision == "escalate"


def test_refusal_reason_order(coord: Coord) -> None:
    coord.roster("A", "B", "C")
    coord.author(ART, "A")
    coord.reject(ART, "A")  # the author rejecting their own work: original_author wins
    assert coord.check(ART, "A").reason == "original_author"
    coord.assign(ART, "B")
    coord.reject(ART, "B")  # B is locked out and a gate: locked_out wins
    assert coord.check(ART, "B").reason == "locked_out"


def test_rejecting_gate_may_not_author_but_may_approve(coord: Coord) -> None:
    coord.author(ART, "A")
    coord.reject(ART, "QE")
    r = coord.author(ART, "QE")
    assert r.plan.outcome == "refused" and r.event.reason == "rejecting_gate"
    assert r.event.command == "author"
    coord.assign(ART, "B")
    coord.approve(ART, "QE")
    assert coord.check(ART, "QE").allowed


def test_no_roster_means_no_roster_check_and_no_deadlock(coord: Coord) -> None:
    coord.author(ART, "A")
    coord.reject(ART, "R")
    v = coord.check(ART, "Anyone")
    assert v.allowed and v.eligible is None
    assert coord.check(ART, "A").eligible is None


def test_approval_clears_and_next_version_starts_a_new_cycle(coord: Coord) -> None:
    coord.author(ART, "A")
    coord.reject(ART, "R")
    coord.assign(ART, "B")
    assert coord.state().artifact(ART).cycle == 1
    coord.approve(ART, "R")
    assert coord.check(ART, "A").allowed and coord.check(ART, "R").allowed
    with pytest.raises(LockoutError, match="already approved"):
        coord.approve(ART, "R")
    coord.author(ART, "A")
    a = coord.state().artifact(ART)
    assert a.cycle == 2 and a.cycle_open and a.locked == []


def test_lockout_persists_until_approval(coord: Coord) -> None:
    coord.author(ART, "A")
    coord.reject(ART, "R")
    coord.assign(ART, "B")
    coord.author(ART, "B")  # v2 produced, not yet approved
    assert coord.check(ART, "A").reason == "original_author"


def test_unlock_by_user_only_and_explicit(coord: Coord) -> None:
    coord.roster("A", "B")
    coord.author(ART, "A")
    coord.reject(ART, "R")
    with pytest.raises(LockoutError, match="user"):
        coord.unlock(ART, "A", by="coordinator")
    with pytest.raises(LockoutError, match="not locked out"):
        coord.unlock(ART, "B")
    coord.unlock(ART, "A")
    assert coord.events()[-1] == {**coord.events()[-1], "event": "unlocked", "by": "user"}
    assert coord.check(ART, "A").allowed
    assert coord.assign(ART, "A").plan.outcome == "recorded"
    coord.reject(ART, "R")  # rejected again: locked again
    assert coord.check(ART, "A").reason == "locked_out"


def test_unlock_resolves_deadlock(coord: Coord) -> None:
    coord.roster("A", "B")
    coord.author(ART, "A")
    coord.reject(ART, "R")
    coord.assign(ART, "B")
    coord.reject(ART, "R")
    assert coord.assign(ART, "B").plan.outcome == "deadlock"
    coord.unlock(ART, "B")
    assert coord.assign(ART, "B").plan.outcome == "recorded"


def test_refused_and_escalated_do_not_change_authorship(coord: Coord) -> None:
    coord.roster("A")
    coord.author(ART, "A")
    coord.reject(ART, "R")
    before = coord.state().artifact(ART)
    assert coord.assign(ART, "A").plan.outcome == "deadlock"
    after = coord.state().artifact(ART)
    assert after.current_author == before.current_author == "A"
    assert after.locked == before.locked


def test_reject_without_author_is_an_error_and_writes_nothing(coord: Coord) -> None:
    with pytest.raises(LockoutError, match="no author"):
        coord.reject(ART, "R")
    assert coord.path.read_bytes() == b""


@pytest.mark.parametrize("agent", ["", " A", "A\n", "A\x1b[31m"])
def test_bad_agent_names_are_rejected(coord: Coord, agent: str) -> None:
    with pytest.raises(LockoutError):
        coord.author(ART, agent)


# -- replay ------------------------------------------------------------------------------

AGENTS = ["A", "B", "C", "D"]
ARTIFACTS = ["src", "src/auth.ts", "./src//auth.ts", "docs/x.md"]

op = st.one_of(
    st.tuples(st.just("roster"), st.lists(st.sampled_from(AGENTS), min_size=1, max_size=4)),
    st.tuples(st.just("author"), st.sampled_from(ARTIFACTS), st.sampled_from(AGENTS)),
    st.tuples(st.just("reject"), st.sampled_from(ARTIFACTS), st.sampled_from(AGENTS),
              st.sampled_from(["reassign", "escalate"])),
    st.tuples(st.just("assign"), st.sampled_from(ARTIFACTS),
              st.sampled_from(AGENTS + ["New"])),
    st.tuples(st.just("approve"), st.sampled_from(ARTIFACTS), st.sampled_from(AGENTS)),
    st.tuples(st.just("unlock"), st.sampled_from(ARTIFACTS), st.sampled_from(AGENTS)),
)


def _run(c: Coord, o: tuple) -> WriteResult:
    kind, *args = o
    if kind == "roster":
        return c.roster(*args[0])
    if kind == "reject":
        return c.reject(args[0], args[1], args[2])
    return getattr(c, kind)(*args)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=25))
def test_replay_after_every_event_equals_incremental_state(tmp_path_factory, ops) -> None:
    c = Coord(tmp_path_factory.mktemp("prop") / "lockout.jsonl")
    incremental = State()
    for o in ops:
        try:
            r = _run(c, o)
        except LockoutError:
            continue
        # a locked author is never assigned, whatever the sequence
        if r.event.event == "assigned":
            assert r.event.agent not in r.before.artifact(r.event.artifact).excluded()
        incremental.apply(r.event)
        assert r.after.to_dict() == incremental.to_dict()
        assert c.state().to_dict() == incremental.to_dict()
    lines = c.path.read_text().splitlines() if c.path.exists() else []
    assert [json.loads(x)["seq"] for x in lines] == list(range(1, len(lines) + 1))
    assert replay(parse(c.path.read_bytes()).events if lines else []).to_dict() \
        == incremental.to_dict()


# -- durability --------------------------------------------------------------------------


def _three_events(c: Coord) -> bytes:
    c.author(ART, "A")
    c.reject(ART, "R")
    c.assign(ART, "B")
    return c.path.read_bytes()


def test_torn_tail_is_ignored_by_readers_and_cut_by_next_writer(coord: Coord) -> None:
    good = _three_events(coord)
    torn = b'{"seq":4,"at":"2026-01-01T00:00:00Z","event":"auth'
    coord.path.write_bytes(good + torn)
    state, snap = coord.ledger.state()
    assert snap.torn is not None and snap.torn.line == 4 and snap.torn.size == len(torn)
    assert len(snap.events) == 3 and state.artifact(ART).current_author == "B"
    assert coord.path.read_bytes() == good + torn  # reading never rewrites
    r = coord.approve(ART, "R")
    assert r.dropped is not None and r.dropped.line == 4
    assert r.event.seq == 4
    data = coord.path.read_bytes()
    assert data.startswith(good) and data.endswith(b"\n") and torn not in data
    assert [e["seq"] for e in coord.events()] == [1, 2, 3, 4]


def test_torn_tail_is_kept_when_the_write_is_refused_as_bad_arguments(coord: Coord) -> None:
    good = _three_events(coord)
    coord.path.write_bytes(good + b'{"seq":4')
    with pytest.raises(LockoutError):
        coord.approve("never/authored", "R")
    assert coord.path.read_bytes() == good + b'{"seq":4'


@pytest.mark.parametrize("bad_line, message", [
    (b"not json at all", "line 2: not valid JSON"),
    (b'{"seq":2,"at":"2026-01-01T00:00:00Z","event":"exploded","artifact":"x"}',
     "line 2: unknown event type 'exploded'"),
    (b'{"seq":2,"at":"2026-01-01T00:00:00Z","event":"authored","artifact":"x"}',
     "line 2: invalid authored event: agent"),
    (b'{"seq":7,"at":"2026-01-01T00:00:00Z","event":"authored","artifact":"x","agent":"A"}',
     "line 2: seq 7 out of order"),
    (b'{"seq":"2","at":"2026-01-01T00:00:00Z","event":"authored","artifact":"x","agent":"A"}',
     "line 2: invalid authored event: seq"),
    (b'{"seq":2,"at":"2026-01-01T00:00:00","event":"authored","artifact":"x","agent":"A"}',
     "line 2: invalid authored event: at"),
    (b"", "line 2: empty line"),
    (b"[1,2]", "line 2: not a JSON object"),
])
def test_corrupt_middle_line_names_line_and_writes_nothing(coord: Coord, bad_line: bytes,
                                                           message: str) -> None:
    lines = _three_events(coord).split(b"\n")
    lines[1] = bad_line
    corrupt = b"\n".join(lines)
    coord.path.write_bytes(corrupt)
    with pytest.raises(LedgerError, match=message):
        coord.ledger.read()
    with pytest.raises(LedgerError, match=message):
        coord.author("other", "Z")
    assert coord.path.read_bytes() == corrupt


def test_unwritable_ledger_directory_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "somefile"
    blocker.write_text("not a directory\n")
    c = Coord(blocker / "reviews" / "lockout.jsonl")
    with pytest.raises(LedgerError, match="cannot create ledger directory"):
        c.author(ART, "A")
    c2 = Coord(blocker / "lockout.jsonl")
    with pytest.raises(LedgerError, match="not a directory"):
        c2.author(ART, "A")
    assert blocker.read_text() == "not a directory\n"


def test_ledger_is_a_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="cannot read ledger"):
        Ledger(tmp_path).read()


def test_missing_ledger_reads_as_empty(tmp_path: Path) -> None:
    state, snap = Ledger(tmp_path / "nope.jsonl").state()
    assert state.artifacts == {} and snap.torn is None
    assert not (tmp_path / "nope.jsonl").exists()


def test_resolve_path_precedence() -> None:
    assert resolve_path("x.jsonl", {"QRSPI_GUARD_LEDGER": "y"}) == Path("x.jsonl")
    assert resolve_path(None, {"QRSPI_GUARD_LEDGER": "y"}) == Path("y")
    assert resolve_path(None, {}) == Path("reviews/lockout.jsonl")


def test_every_line_has_seq_at_event_artifact_first(coord: Coord) -> None:
    coord.roster("A")
    _three_events(coord)
    for e in coord.events():
        assert list(e)[:4] == ["seq", "at", "event", "artifact"]
        assert e["at"].endswith("Z")
