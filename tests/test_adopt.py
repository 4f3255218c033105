"""`qrspi-guard adopt` / `adopt --undo` end to end, through the installed console script
on a stand-in upstream checkout (fixtures/adopt/: tiny scripts of our own, and their
hashes for ``--known``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.adoptkit import KNOWN, MODES, SCRIPTS, adopt, checkout, git, scripts_state, tree
from tests.support import SCRIPT, run_cli

STATE = Path(".git") / "qrspi-guard-adopt"


def test_adopt_then_undo_restores_every_script_byte_for_byte_mode_too(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    before = scripts_state(co)
    other = (co / "scripts/other-helper.sh").read_bytes()
    proc = adopt(co)
    assert proc.returncode == 0, proc.stderr
    for script in SCRIPTS:
        text = (co / script).read_text()
        assert text.startswith("#!/usr/bin/env bash\n# qrspi-guard adopt v1:")
        assert f"guard={SCRIPT}\n" in text  # the guard's absolute path, not a bare name
        assert (co / script).stat().st_mode & 0o7777 == MODES[script]
    assert (co / "scripts/other-helper.sh").read_bytes() == other
    # the originals live in the git directory: git status shows only the four scripts
    assert sorted(git(co, "status", "--porcelain").splitlines()) == sorted(
        f" M {s}" for s in SCRIPTS)
    assert sorted(os.listdir(co / STATE / "originals")) == sorted(
        s.rsplit("/", 1)[1] for s in SCRIPTS)

    proc = adopt(co, "--undo")
    assert proc.returncode == 0, proc.stderr
    assert scripts_state(co) == before
    assert git(co, "status", "--porcelain") == ""
    assert not (co / STATE).exists()


def test_fan_in_wrapper_halts_on_all_unless_upstream_is_chosen(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    assert adopt(co).returncode == 0
    fan_in = co / "scripts/verifier-fan-in.sh"
    assert 'exec "$guard" fan-in --halt-on all "$@"\n' in fan_in.read_text()
    proc = adopt(co, "--halt-on", "upstream")
    assert proc.returncode == 0, proc.stderr
    assert 'exec "$guard" fan-in --halt-on upstream "$@"\n' in fan_in.read_text()
    assert b"wrapper rewritten" in proc.stdout
    assert 'exec "$guard" await "$@"\n' in (co / "scripts/await-round.sh").read_text()


def test_adopt_again_changes_nothing(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    assert adopt(co).returncode == 0
    first = tree(co)
    proc = adopt(co)
    assert proc.returncode == 0, proc.stderr
    assert tree(co) == first  # not a byte, mode or mtime changed
    assert proc.stdout.count(b"already adopted") == 4


def test_dry_run_writes_nothing_for_adopt_nor_undo(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    before = tree(co)
    proc = adopt(co, "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert b"dry run: nothing written" in proc.stdout and b"wrapped" in proc.stdout
    assert tree(co) == before
    assert adopt(co).returncode == 0
    adopted = tree(co)
    proc = adopt(co, "--undo", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(b"original restored") == 4
    assert tree(co) == adopted


def test_a_version_adopt_does_not_know_is_refused_by_name(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    (co / "scripts/round-prepare.sh").write_bytes(b"#!/usr/bin/env bash\necho local\n")
    before = tree(co)
    proc = adopt(co)
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "scripts/round-prepare.sh is a version adopt does not know (sha256 " in err
    assert "--force" in err and "nothing adopted" in err
    assert "review-prep.sh" not in err  # only the unknown one is named
    assert tree(co) == before  # all or nothing: the known three are not wrapped either
    proc = adopt(co, "--force")
    assert proc.returncode == 0, proc.stderr
    assert b"warning: scripts/round-prepare.sh is a version adopt does not know" in proc.stderr
    assert adopt(co, "--undo").returncode == 0
    assert (co / "scripts/round-prepare.sh").read_bytes() == b"#!/usr/bin/env bash\necho local\n"


def test_without_known_the_fixture_is_refused_and_upstreams_hashes_are_built_in(
        tmp_path: Path) -> None:
    proc = adopt(checkout(tmp_path), known=False)
    assert proc.returncode == 1
    assert proc.stderr.decode().count("is a version adopt does not know") == 4


def _guard_copy(tmp_path: Path) -> Path:
    """A qrspi-guard console script at a path of its own, that a test can take away."""
    bindir = tmp_path / "guard-bin"
    bindir.mkdir()
    guard = bindir / "qrspi-guard"
    shutil.copy2(SCRIPT, guard)
    return guard


def test_wrapper_fails_loudly_when_the_guard_is_gone(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    guard = _guard_copy(tmp_path)
    proc = subprocess.run([str(guard), "adopt", str(co), "--known", str(KNOWN)],
                          capture_output=True)
    assert proc.returncode == 0, proc.stderr
    # while the guard is there, the wrapper runs it (fan-in's own usage error, exit 2)
    run = subprocess.run(["bash", str(co / "scripts/verifier-fan-in.sh")], capture_output=True)
    assert run.returncode == 2 and b"qrspi-guard" in run.stderr
    guard.unlink()
    for script in SCRIPTS:
        run = subprocess.run([str(co / script) if os.access(co / script, os.X_OK) else "bash",
                              *([] if os.access(co / script, os.X_OK) else [str(co / script)]),
                              "reviews/design/round-01"], capture_output=True, cwd=co)
        name = script.rsplit("/", 1)[1]
        assert run.returncode == 127, (script, run)
        assert f"{name}: cannot run qrspi-guard at {guard}".encode() in run.stderr
        assert b"qrspi-guard adopt" in run.stderr and run.stdout == b""


def test_wrapper_fails_loudly_when_the_guards_interpreter_is_gone(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    guard = _guard_copy(tmp_path)
    assert subprocess.run([str(guard), "adopt", str(co), "--known", str(KNOWN)],
                          capture_output=True).returncode == 0
    guard.write_bytes(b"#!" + str(tmp_path / "gone" / "python").encode() + b"\n")
    run = subprocess.run(["bash", str(co / "scripts/await-round.sh"), "--round-dir", "x"],
                         capture_output=True)
    assert run.returncode == 127
    assert b"await-round.sh: cannot run qrspi-guard at" in run.stderr


def test_undo_when_the_kept_original_is_gone_changes_nothing_and_says_how(
        tmp_path: Path) -> None:
    co = checkout(tmp_path)
    assert adopt(co).returncode == 0
    (co / STATE / "originals" / "await-round.sh").unlink()
    adopted = tree(co)
    proc = adopt(co, "--undo")
    assert proc.returncode == 2
    assert b"scripts/await-round.sh is the guard's wrapper but its original is not kept" \
        in proc.stderr
    assert b"git checkout -- scripts/await-round.sh" in proc.stderr
    assert tree(co) == adopted
    git(co, "checkout", "--", "scripts/await-round.sh")  # what the message says
    proc = adopt(co, "--undo")
    assert proc.returncode == 0, proc.stderr
    assert git(co, "status", "--porcelain") == ""
    assert not (co / STATE).exists()


def test_undo_puts_back_a_script_the_user_deleted(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    before = scripts_state(co)
    assert adopt(co).returncode == 0
    (co / "scripts/verifier-fan-in.sh").unlink()
    assert adopt(co, "--undo").returncode == 0
    assert scripts_state(co) == before


def test_a_wrapper_edited_after_adoption_is_refused_by_undo_unless_forced(
        tmp_path: Path) -> None:
    co = checkout(tmp_path)
    before = scripts_state(co)
    assert adopt(co).returncode == 0
    with open(co / "scripts/review-prep.sh", "a") as fh:
        fh.write("# my change\n")
    edited = tree(co)
    proc = adopt(co, "--undo")
    assert proc.returncode == 1
    assert b"scripts/review-prep.sh changed since it was adopted (it is an edited wrapper)" \
        in proc.stderr
    assert tree(co) == edited
    assert adopt(co, "--undo", "--force").returncode == 0
    assert scripts_state(co) == before


def test_a_hand_written_wrapper_is_not_taken_for_upstreams_script(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    hand = b'#!/usr/bin/env bash\nexec qrspi-guard fan-in "$@"\n'
    (co / "scripts/verifier-fan-in.sh").write_bytes(hand)
    proc = adopt(co)
    assert proc.returncode == 1
    assert b"scripts/verifier-fan-in.sh is already a wrapper written by hand" in proc.stderr
    assert b"git checkout -- scripts/verifier-fan-in.sh" in proc.stderr


def test_a_link_where_a_script_belongs_is_refused_never_followed(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    target = tmp_path / "elsewhere.sh"
    target.write_bytes((co / "scripts/await-round.sh").read_bytes())
    (co / "scripts/await-round.sh").unlink()
    (co / "scripts/await-round.sh").symlink_to(target)
    before = tree(co)
    proc = adopt(co)
    assert proc.returncode == 2
    assert b"scripts/await-round.sh is a symbolic link; not changed" in proc.stderr
    assert tree(co) == before
    assert target.read_bytes().startswith(b"#!/usr/bin/env bash\n# A stand-in")


def test_a_checkout_without_git_keeps_the_originals_in_an_ignored_dot_directory(
        tmp_path: Path) -> None:
    outer = tmp_path / "project"
    outer.mkdir()
    git(outer, "init", "-q")
    co = checkout(outer, with_git=False, name="vendor-qrspi-plus")
    git(outer, "add", "-A")
    git(outer, "commit", "-q", "-m", "vendored")
    before = scripts_state(co)
    proc = adopt(co)
    assert proc.returncode == 0, proc.stderr
    assert b"originals kept in .qrspi-guard-adopt" in proc.stdout
    assert (co / ".qrspi-guard-adopt" / ".gitignore").read_text().endswith("*\n")
    assert sorted(git(outer, "status", "--porcelain").splitlines()) == sorted(
        f" M vendor-qrspi-plus/{s}" for s in SCRIPTS)
    assert adopt(co, "--undo").returncode == 0
    assert scripts_state(co) == before
    assert not (co / ".qrspi-guard-adopt").exists()
    assert git(outer, "status", "--porcelain") == ""


def test_a_linked_worktree_keeps_the_originals_in_its_own_git_directory(
        tmp_path: Path) -> None:
    main = checkout(tmp_path)
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(wt))
    for script, mode in MODES.items():
        os.chmod(wt / script, mode)
    before = scripts_state(wt)
    assert adopt(wt).returncode == 0
    assert (main / ".git" / "worktrees" / "wt" / "qrspi-guard-adopt" / "manifest.json").exists()
    assert not (main / STATE).exists()
    assert adopt(wt, "--undo").returncode == 0
    assert scripts_state(wt) == before


def test_not_a_checkout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_cli("adopt", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.count(b"\n") == 1
    assert b"is not an upstream checkout: it has no scripts/ directory" in proc.stderr
    proc = run_cli("adopt", str(tmp_path / "nope"))
    assert proc.returncode == 2 and b"path not found" in proc.stderr


def test_a_known_file_of_another_form_is_named_by_line(tmp_path: Path) -> None:
    bad = tmp_path / "known.txt"
    bad.write_text("# mine\n" + "ab" * 32 + "  scripts/unrelated.sh\n")
    proc = run_cli("adopt", str(checkout(tmp_path)), "--known", str(bad))
    assert proc.returncode == 2
    assert b"line 2 is not 'SHA256  PATH' naming one of" in proc.stderr


def test_undo_of_a_checkout_never_adopted_changes_nothing(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    before = tree(co)
    proc = adopt(co, "--undo")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(b"not adopted") == 4
    assert tree(co) == before


def test_a_known_file_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "known.fifo"
    os.mkfifo(fifo)
    proc = run_cli("adopt", str(checkout(tmp_path)), "--known", str(fifo), timeout=20)
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr


def test_a_manifest_of_another_shape_is_one_line_and_nothing_changes(tmp_path: Path) -> None:
    co = checkout(tmp_path)
    assert adopt(co).returncode == 0
    manifest = co / STATE / "manifest.json"
    for text in ("{", '{"version": 1, "originals": {}, "extras": {"hooks": {"a": 1}}}',
                 '{"version": 1, "originals": {"scripts/x.sh": {"sha256": "a", "mode": 1e99}}}',
                 "[]", '{"version": 2, "originals": {}}'):
        manifest.write_text(text)
        before = tree(co)
        for args in ((), ("--undo",)):
            proc = adopt(co, *args)
            assert proc.returncode == 2, (text, proc.stderr)
            assert proc.stderr.count(b"\n") == 1 and b"is not a manifest adopt wrote" in proc.stderr
            assert tree(co) == before


def test_a_git_file_swapped_for_a_fifo_after_the_look_is_no_git_directory_never_a_hang(
        tmp_path: Path) -> None:
    """locate() looks at `.git` (a worktree's file), then reads the directory it names: a
    FIFO in its place by then is read without waiting (before, a blocking open)."""
    import signal

    from qrspi_guard.adopt import store

    fifo = tmp_path / ".git"
    os.mkfifo(fifo)

    class Hung(Exception):  # not an OSError, which the reader turns into None
        pass

    def hung(*_: object) -> None:
        raise Hung("the .git read waited for a writer")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(10)
    try:
        assert store._gitdir_of(str(fifo)) is None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_git_file_longer_than_its_first_line_still_names_its_directory(
        tmp_path: Path) -> None:
    from qrspi_guard.adopt import store

    (tmp_path / "gd").mkdir()
    (tmp_path / ".git").write_text("gitdir: gd\n" + "#" * 10_000 + "\n")
    assert store._gitdir_of(str(tmp_path / ".git")) == str(tmp_path / "gd")
