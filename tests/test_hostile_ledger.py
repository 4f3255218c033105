"""The lockout ledger under hostile paths (issue 24): a named ledger whose directory
does not exist is exit 2 for every subcommand (never an empty ledger that allows a
locked-out author), and the default ledger in `reviews/` is never reached through a
link a reviewer planted there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import run_main

ART = "src/auth.ts"
SUBCOMMANDS: tuple[tuple[str, ...], ...] = (
    ("author", ART, "alice"),
    ("reject", ART, "--reviewer", "carol", "--decision", "reassign", "--reason", "x"),
    ("assign", ART, "bob"),
    ("approve", ART, "--reviewer", "carol"),
    ("unlock", ART, "alice", "--by", "user"),
    ("roster", "alice", "bob"),
    ("check", ART, "alice"),
    ("status",),
    ("status", ART),
)


def _lockout(cwd: Path, *args: str, env: dict[str, str | None] | None = None
             ) -> tuple[int, str]:
    full: dict[str, str | None] = {"QRSPI_GUARD_LEDGER": None}
    full.update(env or {})
    p = run_main("lockout", *args, cwd=cwd, env=full)
    return p.returncode, p.stderr.decode()


@pytest.mark.parametrize("args", SUBCOMMANDS, ids=lambda a: " ".join(a[:1] + a[2:3]))
def test_every_lockout_subcommand_with_a_ledger_in_a_missing_directory_is_exit_2(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    code, err = _lockout(tmp_path, "--ledger", "no-such-dir/ledger.jsonl", *args)
    assert code == 2, err
    assert "no-such-dir" in err and "does not exist" in err
    code, err = _lockout(tmp_path, *args, env={"QRSPI_GUARD_LEDGER": "gone/ledger.jsonl"})
    assert code == 2, err
    assert "gone" in err
    assert not (tmp_path / "no-such-dir").exists() and not (tmp_path / "gone").exists()


def test_a_locked_out_author_is_never_allowed_through_a_mistyped_ledger_directory(
        tmp_path: Path) -> None:
    (tmp_path / "ledgers").mkdir()
    named = ("--ledger", "ledgers/run.jsonl")
    assert _lockout(tmp_path, *named, "author", ART, "alice")[0] == 0
    assert _lockout(tmp_path, *named, "reject", ART, "--reviewer", "carol", "--decision",
                    "reassign", "--reason", "x")[0] == 0
    assert _lockout(tmp_path, *named, "check", ART, "alice")[0] == 1  # locked out
    assert _lockout(tmp_path, "--ledger", "ledger/run.jsonl", "check", ART, "alice")[0] == 2


def test_the_default_ledger_is_never_read_or_appended_through_a_planted_link(
        tmp_path: Path) -> None:
    (tmp_path / "reviews").mkdir()
    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text("")
    (tmp_path / "reviews" / "lockout.jsonl").symlink_to(theirs)
    code, err = _lockout(tmp_path, "author", ART, "alice")
    assert code == 2 and "lockout.jsonl" in err
    assert theirs.read_text() == ""
    assert _lockout(tmp_path, "status")[0] == 2
