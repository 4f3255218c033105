"""`qrspi-guard await --round-dir ROUND_DIR` (loop.md "await" and the common rules): the
drain of a round's background reviewers, in process. Timeouts, kills and concurrent
runs, which only real processes show, are in test_loop_await_processes.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.support import Run, run_cli, run_main

FINDING_RAW = """<<<FINDING-BOUNDARY>>>
---
reviewer: {tag}
artifact: design
severity: high
---
First finding body.
<<<FINDING-BOUNDARY>>>
---
reviewer: {tag}
artifact: design
severity: medium
---
Second finding body.
"""


def stub(bin_dir: Path, name: str, body: str) -> Path:
    """An executable shell script *name* in *bin_dir* running *body*."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def write_manifest(round_dir: Path, entries: object) -> Path:
    path = round_dir / ".dispatch-manifest.json"
    path.write_text(json.dumps(entries))
    return path


def pending(tag: str, await_cmd: str, split_cmd: str | None = None) -> dict[str, object]:
    entry: dict[str, object] = {"tag": tag, "agent": "qrspi-x", "mode": "background",
                                "status": "pending", "job_id": "j-1", "await_cmd": await_cmd}
    if split_cmd is not None:
        entry["split_cmd"] = split_cmd
    return entry


def drain(round_dir: Path, *args: str, roots: Path | str | None = None,
          env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[bytes]:
    full: dict[str, str | None] = {"QRSPI_AWAIT_EXEC_ROOTS": None if roots is None else str(roots)}
    full.update(env or {})
    return run_main("await", "--round-dir", str(round_dir), *args, env=full)


def output(proc: subprocess.CompletedProcess[bytes]) -> str:
    return (proc.stdout + proc.stderr).decode()


def statuses(round_dir: Path) -> list[str]:
    return [e["status"] for e in json.loads((round_dir / ".dispatch-manifest.json").read_text())]


def summary(round_dir: Path) -> dict[str, object]:
    return json.loads((round_dir / ".round-complete.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture
def rd(tmp_path: Path) -> Path:
    d = tmp_path / "round-01"
    (d / ".dispatch").mkdir(parents=True)
    return d


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    return d


# -- the drain itself -------------------------------------------------------------------

def test_a_pending_background_entry_runs_await_then_split_and_is_marked(rd: Path,
                                                                      bin_dir: Path) -> None:
    order = bin_dir / "order.log"
    a = stub(bin_dir, "await.sh", f'echo await >> "{order}"; pwd > "{bin_dir}/cwd"\n'
             f'printf "%s" "$1" > .dispatch-arg')
    s = stub(bin_dir, "split.sh", f'echo split >> "{order}"\n'
             f'printf "x\\n" > "{rd}/codex-quality.finding-F01.md"')
    write_manifest(rd, [pending("codex-quality", f"{a} 'one arg'", str(s))])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 0, output(proc)
    assert order.read_text() == "await\nsplit\n"
    assert (bin_dir / "cwd").read_text().strip() == str(rd / ".dispatch")  # cwd .dispatch/
    assert statuses(rd) == ["complete-with-findings"]
    assert summary(rd) == {"awaited": 1, "with_findings": 1, "clean": 0, "entries": [
        {"tag": "codex-quality", "status": "complete-with-findings"}]}
    assert not (rd / ".dispatch").exists()  # every entry drained: removed
    assert proc.stdout.decode().startswith("qrspi-guard await: drained 1 background")


def test_commands_run_without_a_shell(rd: Path, bin_dir: Path, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    a = stub(bin_dir, "argv.sh", f'for a in "$@"; do echo "$a"; done > "{bin_dir}/argv"')
    write_manifest(rd, [pending("quality-x", f"{a} 'a;b' '$(touch {pwned})' `id` |x")])
    assert drain(rd, roots=bin_dir).returncode == 0
    assert (bin_dir / "argv").read_text() == f"a;b\n$(touch {pwned})\n`id`\n|x\n"
    assert not pwned.exists()


def test_a_second_exec_root_in_the_colon_separated_list_counts(rd: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    a = stub(other, "await.sh", "exit 0")
    write_manifest(rd, [pending("quality-x", str(a))])
    proc = drain(rd, roots=f"{tmp_path / 'missing'}::{other}")
    assert proc.returncode == 0, output(proc)


def test_the_git_top_level_scripts_directory_is_an_exec_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    stub(repo / "scripts", "await.sh", f'touch "{repo}/ran"')
    outside = stub(tmp_path / "elsewhere", "await.sh", f'touch "{repo}/ran-outside"')
    rd = repo / "work" / "round-01"
    rd.mkdir(parents=True)
    write_manifest(rd, [pending("quality-x", "../../../scripts/await.sh"),
                        pending("scope-x", str(outside))])
    # the repository await was started in (its working directory)
    proc = run_main("await", "--round-dir", str(rd), cwd=repo,
                    env={"QRSPI_AWAIT_EXEC_ROOTS": None})
    assert (repo / "ran").exists()  # relative to .dispatch/, resolved under <top>/scripts
    assert not (repo / "ran-outside").exists()
    assert proc.returncode == 1 and "resolves outside the exec roots" in output(proc)
    assert statuses(rd) == ["complete", "failed"]


@pytest.mark.parametrize("command, words", [
    ("touch {p}", ("rejected", "allowlist")),
    ("/usr/bin/touch {p}", ("rejected", "outside")),
    ("/bin/sh -c 'touch {p}'", ("rejected", "outside")),
    ("../../../../../../../../../../..{bin}/../../../../bin/touch {p}", ("rejected",)),
    ("--no-such-option=value", ("must not start with",)),
    ("-x {p}", ("must not start with",)),
    ("echo 'unbalanced", ("parse error", "No closing quotation")),
    ("", ("await_cmd is missing",)),
])
def test_a_command_outside_the_rules_is_refused_and_never_runs(
        rd: Path, bin_dir: Path, tmp_path: Path, command: str, words: tuple[str, ...]) -> None:
    pwned = tmp_path / "pwned"
    write_manifest(rd, [pending("evil", command.format(p=pwned, bin=bin_dir), "true")])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1
    assert not pwned.exists()
    for word in words:
        assert word in output(proc)
    assert statuses(rd) == ["failed"]


def test_a_program_inside_the_round_is_refused_even_under_an_exec_root(rd: Path,
                                                                     tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    stub(rd / ".dispatch", "codex", f'touch "{ran}"')
    write_manifest(rd, [pending("masq", "./codex --reviewer-tag x")])
    proc = drain(rd, roots=tmp_path)  # the root holds the round: still refused
    assert proc.returncode == 1 and "inside the round directory" in output(proc)
    assert not ran.exists()


def test_a_link_under_an_exec_root_pointing_outside_it_is_refused(rd: Path, bin_dir: Path,
                                                                tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    target = stub(tmp_path / "outside", "evil.sh", f'touch "{ran}"')
    (bin_dir / "link.sh").symlink_to(target)
    write_manifest(rd, [pending("linked", str(bin_dir / "link.sh"))])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1 and "outside the exec roots" in output(proc)
    assert not ran.exists()


def test_the_bare_name_codex_is_allowed_from_path(rd: Path, bin_dir: Path) -> None:
    stub(bin_dir, "codex", f'touch "{bin_dir}/codex-ran"')
    write_manifest(rd, [pending("quality-codex", "codex exec --sandbox read-only")])
    proc = drain(rd, env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert proc.returncode == 0, output(proc)
    assert (bin_dir / "codex-ran").exists()


def test_a_bad_split_cmd_is_refused_by_name_after_await_cmd_ran(rd: Path, bin_dir: Path,
                                                              tmp_path: Path) -> None:
    a = stub(bin_dir, "ok.sh", "exit 0")
    write_manifest(rd, [pending("splitevil", str(a), f"touch {tmp_path / 'pwned'}")])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1 and "split_cmd rejected" in output(proc)
    assert not (tmp_path / "pwned").exists()


def test_a_failing_command_fails_its_entry_and_keeps_dispatch(rd: Path, bin_dir: Path) -> None:
    a = stub(bin_dir, "fail.sh", 'echo partial > x.raw; exit 3')
    (rd / ".dispatch" / "x.raw").write_text("partial")
    write_manifest(rd, [pending("x", str(a)), {"tag": "y", "mode": "first_party",
                                               "status": "dispatched"}])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1 and "await_cmd failed (exit 3)" in output(proc)
    assert statuses(rd) == ["failed", "complete"]
    assert (rd / ".dispatch" / "x.raw").read_text() == "partial\n"  # kept for a rescue
    assert ".dispatch/ kept" in output(proc)


def test_child_output_is_discarded_and_payload_bytes_never_reach_the_output(
        rd: Path, bin_dir: Path) -> None:
    secret = "SECRET-PAYLOAD-XYZZY"
    a = stub(bin_dir, "loud.sh", f'i=0; while [ $i -lt 500 ]; do echo {secret}; '
             f'echo {secret} >&2; i=$((i+1)); done\nexit 0')
    (rd / ".dispatch" / "prompt.txt").write_text(secret * 5000)
    (rd / ".dispatch" / "spoof.raw").write_text(
        f"<<<FINDING-BOUNDARY>>>\n---\nreviewer: {secret}\nseverity: {secret}\n---\n{secret}\n")
    (rd / ".dispatch" / "junk.raw").write_text(secret * 3000)
    write_manifest(rd, [pending("loud", str(a)),
                        {"tag": "spoof", "mode": "first_party", "status": "dispatched"},
                        {"tag": "junk", "mode": "first_party", "status": "dispatched"}])
    proc = drain(rd, roots=bin_dir)
    combined = proc.stdout + proc.stderr
    assert secret.encode() not in combined
    assert len(combined) < 2048
    assert proc.returncode == 1  # junk.raw splits to nothing
    # the spoofed block is kept as written, named by cause only
    assert "reviewer_tag_mismatch" in output(proc)
    assert (rd / "spoof.finding-F01.md").exists()


def test_output_stays_under_two_kib_however_many_entries_fail(rd: Path) -> None:
    write_manifest(rd, [{"tag": "../" + "x" * 200 + str(i)} for i in range(300)])
    proc = drain(rd)
    combined = proc.stdout + proc.stderr
    assert proc.returncode == 1 and len(combined) < 2048
    assert "entry 1 tag" in output(proc) and "more problems not shown" in output(proc)
    assert statuses(rd) == ["failed"] * 300


# -- tags ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tag", ["../x", "*", "[a-z]*", "Quality", "", "a/b", "-x", 7, None])
def test_a_tag_off_the_grammar_is_refused_before_any_path_or_glob_is_built(
        rd: Path, bin_dir: Path, tmp_path: Path, tag: object) -> None:
    ran = tmp_path / "ran"
    a = stub(bin_dir, "await.sh", f'touch "{ran}"')
    # what `.dispatch/<tag>.raw` and `<tag>.finding-F*.md` would reach with the bad tag
    (rd / "x.raw").write_text(FINDING_RAW.format(tag="x"))
    (rd / "quality-claude.finding-F01.md").write_text("other reviewer's finding\n")
    entry = pending("t", str(a))
    entry["tag"] = tag
    before = sorted(p.name for p in tmp_path.iterdir())
    write_manifest(rd, [entry])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1 and "refused" in output(proc)
    assert not ran.exists()  # its commands never ran
    assert statuses(rd) == ["failed"]
    assert summary(rd)["with_findings"] == 0 and summary(rd)["clean"] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written outside
    assert sorted(p.name for p in rd.iterdir()) == [
        ".dispatch", ".dispatch-manifest.json", ".round-complete.json",
        "quality-claude.finding-F01.md", "x.raw"]


# -- the manifest -------------------------------------------------------------------------

@pytest.mark.parametrize("content, words", [
    (b'{"tag": "x", "mode": "background"}', "not an object"),
    (b'"just a string"', "not a string"),
    (b'[{"tag": ', "not valid JSON"),
    (b"", "not valid JSON"),
    (b'["\xff"]', "not UTF-8"),
    (b"[" + b"1" * 5000 + b"]", "more than 1000 digits"),
    (b"[" * 100000, "nested more than 64 levels deep"),
])
def test_a_manifest_that_is_not_a_json_array_is_named_and_left_byte_for_byte(
        rd: Path, content: bytes, words: str) -> None:
    path = rd / ".dispatch-manifest.json"
    path.write_bytes(content)
    (rd / ".dispatch" / "x.raw").write_text("NO_FINDINGS")
    proc = drain(rd)
    assert proc.returncode == 1
    assert words in proc.stderr.decode() and len(proc.stderr.splitlines()) == 1
    assert b"Traceback" not in proc.stderr
    assert path.read_bytes() == content
    assert not (rd / ".round-complete.json").exists()
    assert (rd / ".dispatch" / "x.raw").exists()


def test_a_fifo_where_the_manifest_belongs_is_named_never_waited_on(rd: Path) -> None:
    os.mkfifo(rd / ".dispatch-manifest.json")
    proc = run_cli("await", "--round-dir", str(rd), timeout=30)  # no writer: must not block
    assert proc.returncode == 1 and b"not a regular file" in proc.stderr
    assert stat.S_ISFIFO(os.lstat(rd / ".dispatch-manifest.json").st_mode)


def test_no_manifest_writes_the_empty_summary_and_exits_0(rd: Path) -> None:
    proc = drain(rd)
    assert proc.returncode == 0
    assert (rd / ".round-complete.json").read_bytes() == \
        b'{"awaited":0,"with_findings":0,"clean":0,"entries":[]}\n'
    assert not (rd / ".dispatch").exists()


def test_no_manifest_keeps_a_dispatch_directory_holding_raw_captures(rd: Path) -> None:
    (rd / ".dispatch" / "quality-codex.raw").write_text("NO_FINDINGS")
    proc = drain(rd)
    assert proc.returncode == 0 and "kept" in output(proc)
    assert (rd / ".dispatch" / "quality-codex.raw").exists()


def test_zero_entries_drain_and_remove_dispatch(rd: Path) -> None:
    write_manifest(rd, [])
    proc = drain(rd)
    assert proc.returncode == 0 and summary(rd)["entries"] == []
    assert not (rd / ".dispatch").exists()


def test_statuses_are_written_back_atomically_and_a_rerun_changes_nothing(
        rd: Path, bin_dir: Path) -> None:
    a = stub(bin_dir, "ok.sh", f'printf "NO_FINDINGS" > "{rd}/.dispatch/scope-x.raw"')
    write_manifest(rd, [pending("scope-x", str(a)),
                        {"tag": "gone", "mode": "background", "status": "failed"}])
    assert drain(rd, roots=bin_dir).returncode == 1
    assert statuses(rd) == ["complete-clean", "failed"]
    names = sorted(p.name for p in rd.iterdir())
    assert not [n for n in names if n.endswith(".tmp")]
    manifest = (rd / ".dispatch-manifest.json").read_bytes()
    clean = (rd / "scope-x.clean.md").read_bytes()
    assert drain(rd, roots=bin_dir).returncode == 1  # the failed entry still fails
    assert (rd / ".dispatch-manifest.json").read_bytes() == manifest
    assert (rd / "scope-x.clean.md").read_bytes() == clean
    assert sorted(p.name for p in rd.iterdir()) == names


# -- the fallback split ---------------------------------------------------------------------

def test_a_first_party_raw_capture_is_split_into_finding_files(rd: Path) -> None:
    (rd / ".dispatch" / "quality-claude.raw").write_text(FINDING_RAW.format(tag="quality-claude"))
    write_manifest(rd, [{"tag": "quality-claude", "mode": "first_party", "status": "dispatched"}])
    proc = drain(rd)
    assert proc.returncode == 0, output(proc)
    assert (rd / "quality-claude.finding-F02.md").read_text().endswith("Second finding body.\n")
    assert summary(rd)["with_findings"] == 1
    assert statuses(rd) == ["complete-with-findings"]
    # kept although not contract-valid (no finding_id): named by cause, judged later
    assert "missing_finding_id" in output(proc)


def test_a_no_findings_capture_becomes_the_clean_sentinel(rd: Path) -> None:
    (rd / ".dispatch" / "quality-codex.raw").write_text("NO_FINDINGS")
    write_manifest(rd, [{"tag": "quality-codex", "mode": "first_party", "status": "dispatched"}])
    assert drain(rd).returncode == 0
    assert (rd / "quality-codex.clean.md").exists() and summary(rd)["clean"] == 1
    assert statuses(rd) == ["complete-clean"]


def test_existing_finding_files_are_never_resplit(rd: Path) -> None:
    (rd / "quality-claude.finding-F01.md").write_text("pre-existing\n")
    (rd / ".dispatch" / "quality-claude.raw").write_text(FINDING_RAW.format(tag="quality-claude"))
    write_manifest(rd, [{"tag": "quality-claude", "mode": "first_party", "status": "dispatched"}])
    assert drain(rd).returncode == 0
    assert (rd / "quality-claude.finding-F01.md").read_text() == "pre-existing\n"
    assert not (rd / "quality-claude.finding-F02.md").exists()


def test_a_capture_that_splits_to_nothing_fails_its_entry(rd: Path) -> None:
    (rd / ".dispatch" / "q.raw").write_text("no boundary here\n")
    write_manifest(rd, [{"tag": "q", "mode": "first_party", "status": "dispatched"}])
    proc = drain(rd)
    assert proc.returncode == 1 and "fallback split" in output(proc)
    assert statuses(rd) == ["failed"] and summary(rd)["clean"] == 0
    assert (rd / ".dispatch" / "q.raw").exists()


def test_a_capture_that_is_a_fifo_fails_its_entry_without_waiting(rd: Path) -> None:
    os.mkfifo(rd / ".dispatch" / "q.raw")
    write_manifest(rd, [{"tag": "q", "mode": "first_party", "status": "dispatched"}])
    proc = run_cli("await", "--round-dir", str(rd), timeout=30)
    assert proc.returncode == 1 and b"not a regular file" in proc.stderr


def test_a_failed_entry_stays_failed_unless_its_capture_rescues_it(rd: Path) -> None:
    (rd / ".dispatch" / "rescued.raw").write_text(FINDING_RAW.format(tag="rescued"))
    (rd / "stale.finding-F01.md").write_text("from an earlier attempt\n")
    write_manifest(rd, [{"tag": "broken", "mode": "background", "status": "failed"},
                        {"tag": "stale", "mode": "background", "status": "failed"},
                        {"tag": "rescued", "mode": "background", "status": "failed"}])
    proc = drain(rd)
    assert proc.returncode == 1
    assert statuses(rd) == ["failed", "failed", "complete-with-findings"]
    assert summary(rd)["with_findings"] == 1 and summary(rd)["clean"] == 0


def test_a_background_entry_whose_split_cmd_wrote_nothing_is_rescued_from_its_capture(
        rd: Path, bin_dir: Path) -> None:
    raw = FINDING_RAW.format(tag="codex-quality").replace("'", "")
    a = stub(bin_dir, "await.sh", f"cat > \"{rd}/.dispatch/codex-quality.raw\" <<'RAW'\n{raw}RAW")
    s = stub(bin_dir, "noop.sh", "exit 0")
    write_manifest(rd, [pending("codex-quality", str(a), str(s))])
    assert drain(rd, roots=bin_dir).returncode == 0
    assert (rd / "codex-quality.finding-F01.md").exists()


def test_a_first_party_entry_with_nothing_is_counted_clean_and_said(rd: Path) -> None:
    write_manifest(rd, [{"tag": "quality-claude", "mode": "first_party", "status": "dispatched"}])
    proc = drain(rd)
    assert proc.returncode == 0 and summary(rd)["clean"] == 1
    assert "no finding files, no clean sentinel" in output(proc)


# -- arguments ----------------------------------------------------------------------------

@pytest.mark.parametrize("args, named", [
    ((), "--round-dir"),
    (("--round-dir",), "--round-dir"),
    (("--round-dir", "{missing}"), "--round-dir"),
    (("--round-dir", "{file}"), "--round-dir"),
    (("--round-dir", "{rd}", "--bogus"), "--bogus"),
    (("--round-dir", "{rd}", "extra"), "extra"),
    (("--round-dir", "{rd}", "--timeout", "soon"), "--timeout"),
    (("--round-dir", "{rd}", "--timeout", "0"), "--timeout"),
    (("--round-dir", "{rd}", "--timeout", "inf"), "--timeout"),
    (("--round-dir", "{rd}", "--timeout", "9" * 400), "--timeout"),
])
def test_bad_arguments_exit_1_with_one_line_naming_the_argument(
        rd: Path, tmp_path: Path, args: tuple[str, ...], named: str) -> None:
    (tmp_path / "file").write_text("")
    values = {"missing": str(tmp_path / "missing"), "file": str(tmp_path / "file"),
              "rd": str(rd)}
    proc = run_main("await", *(a.format(**values) for a in args))
    assert proc.returncode == 1, output(proc)
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and named in lines[0] and len(lines[0]) < 400
    assert not (rd / ".round-complete.json").exists()


def test_help_documents_the_options() -> None:
    proc = run_main("await", "--help")
    assert proc.returncode == 0
    assert b"--round-dir" in proc.stdout and b"--timeout" in proc.stdout


# -- the round's status file -------------------------------------------------------------------

def test_a_round_of_a_run_gets_its_status_file_as_check_writes_it(run: Run) -> None:
    rd = run.round_dir("design", 1)
    (rd / ".dispatch").mkdir()
    (rd / ".dispatch" / "quality-claude.raw").write_text(FINDING_RAW.format(tag="quality-claude"))
    write_manifest(rd, [{"tag": "quality-claude", "mode": "first_party", "status": "dispatched"}])
    assert drain(rd).returncode == 0
    status_file = rd.parent / "round-01-guard.json"
    mine = json.loads(status_file.read_text())
    assert mine["status"] == "halt"
    assert "missing_finding_id" in {h["cause"] for h in mine["halts"]}
    status_file.unlink()
    assert run_main("check", "--write-status", str(rd)).returncode == 1
    theirs = json.loads(status_file.read_text())
    mine.pop("checked_at")
    theirs.pop("checked_at")
    assert mine == theirs


def test_a_directory_outside_the_layout_gets_no_status_file(rd: Path) -> None:
    (rd / ".dispatch" / "quality-claude.raw").write_text("NO_FINDINGS")
    write_manifest(rd, [{"tag": "quality-claude", "mode": "first_party", "status": "dispatched"}])
    assert drain(rd).returncode == 0
    assert sorted(p.name for p in rd.parent.iterdir()) == ["round-01"]


def test_a_dispatch_link_out_of_the_round_is_never_followed(rd: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.raw").write_text("NO_FINDINGS")
    (rd / ".dispatch").rmdir()
    (rd / ".dispatch").symlink_to(elsewhere)
    write_manifest(rd, [{"tag": "x", "mode": "first_party", "status": "dispatched"},
                        pending("y", "codex")])
    proc = drain(rd)
    assert proc.returncode == 1 and "cannot use .dispatch/: not a directory" in output(proc)
    assert not (rd / "x.clean.md").exists()  # the capture behind the link is not read
    assert sorted(p.name for p in elsewhere.iterdir()) == ["x.raw"]
    assert (rd / ".dispatch").is_symlink()


def test_awaited_counts_every_pending_background_entry_as_upstream_does(rd: Path) -> None:
    write_manifest(rd, [pending("../x", "codex"), pending("ok", "--bad"),
                        {"tag": "fp", "mode": "first_party", "status": "dispatched"}])
    drain(rd)
    assert summary(rd)["awaited"] == 2


def test_a_split_cmd_failing_after_a_complete_capture_is_rescued_by_the_fallback(
        rd: Path, bin_dir: Path) -> None:
    a = stub(bin_dir, "await.sh", f'printf "NO_FINDINGS" > "{rd}/.dispatch/q.raw"')
    s = stub(bin_dir, "broken-split.sh", "exit 4")
    write_manifest(rd, [pending("q", str(a), str(s))])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 0, output(proc)
    assert statuses(rd) == ["complete-clean"] and (rd / "q.clean.md").exists()
    assert "split_cmd failed (exit 4); the fallback split of its capture rescued it" \
        in output(proc)


def test_a_split_cmd_failing_with_no_capture_to_rescue_fails_its_entry(rd: Path,
                                                                     bin_dir: Path) -> None:
    a = stub(bin_dir, "await.sh", "exit 0")
    s = stub(bin_dir, "broken-split.sh", "exit 4")
    write_manifest(rd, [pending("q", str(a), str(s))])
    proc = drain(rd, roots=bin_dir)
    assert proc.returncode == 1 and "split_cmd failed (exit 4); marked failed" in output(proc)


def test_a_failed_await_cmd_is_never_rescued_in_the_same_run(rd: Path, bin_dir: Path) -> None:
    a = stub(bin_dir, "await.sh", f'printf "NO_FINDINGS" > "{rd}/.dispatch/q.raw"; exit 2')
    write_manifest(rd, [pending("q", str(a))])
    assert drain(rd, roots=bin_dir).returncode == 1
    assert statuses(rd) == ["failed"] and not (rd / "q.clean.md").exists()


def test_a_round_path_that_is_not_utf8_is_escaped_never_a_traceback(tmp_path: Path) -> None:
    parent = os.path.join(os.fsencode(tmp_path), b"run-\xff")
    rd = os.path.join(parent, b"round-01")
    os.makedirs(os.path.join(rd, b".dispatch"))
    with open(os.path.join(rd, b".dispatch-manifest.json"), "w") as fh:
        fh.write('[{"tag": "../x"}, {"tag": "q", "mode": "first_party"}]')
    proc = run_main("await", "--round-dir", rd)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    assert b"\xff" not in proc.stderr + proc.stdout
    assert os.path.exists(os.path.join(rd, b".round-complete.json"))


def test_the_default_timeout_is_an_hour() -> None:
    from qrspi_guard.loop.awaiting import DEFAULT_TIMEOUT

    assert DEFAULT_TIMEOUT == 3600
    assert b"default 3600" in b" ".join(run_main("await", "--help").stdout.split())
