"""`qrspi-guard fan-in ROUND_DIR` (loop.md "fan-in" and the common rules): upstream's
recount, outputs and halts, the contract's halts, judging as `check` does, bad
arguments and hostile inputs. Kills, locks and concurrent runs:
tests/test_loop_fanin_reliability.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.genkit import AUDIT, KEPT, audit_json, check, fanin_round, finding_text, new_run, put
from tests.genkit import sidecar_md as side
from tests.support import Run, run_main

Q = "quality-claude"
S = "scope-claude"


def fan_in(*args: str | Path) -> tuple[int, str]:
    proc = run_main("fan-in", *[str(a) for a in args])
    assert b"Traceback" not in proc.stderr and proc.stdout == b""
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def audit(d: Path) -> dict[str, object]:
    doc = json.loads((d / AUDIT).read_text())
    assert isinstance(doc, dict)
    return doc


def kept(d: Path) -> list[str]:
    lines = (d / KEPT).read_bytes().splitlines()
    assert all(os.path.isabs(x) for x in lines)
    return [os.path.basename(os.fsdecode(x)) for x in lines]


def halts(d: Path) -> list[tuple[str, str]]:
    return [(h["finding_id"], h["cause"]) for h in audit(d)["halts"]]  # type: ignore[attr-defined]


def name(tag: str, n: int) -> str:
    return f"{tag}.finding-F{n:02d}.md"


def valid(tmp_path: Path, findings: list[tuple[str, int, str, object]]) -> Path:
    """A contract-valid verified design round in a run's layout (scope-claude clean)."""
    return fanin_round(new_run(tmp_path), "design", 1, findings, cleans=[S])


def bare(tmp_path: Path, dirname: str = "round-NN") -> Path:
    """Upstream's suite shape: a directory outside any run, findings that are not
    contract-valid (tag `qc`, `finding_id: F01`, no severity)."""
    d = tmp_path / dirname
    d.mkdir()
    return d


def qc(d: Path, n: int, change_type: str | None = "style", score: object = 90,
       fid: str | None = None) -> Path:
    ct = f"change_type: {change_type}\n" if change_type is not None else ""
    f = put(d, f"qc.finding-F{n:02d}.md", f"---\nfinding_id: {fid or f'F{n:02d}'}\n{ct}"
            f"artifact: goals\nround: 1\nreviewer: qc\n---\n\nBody of finding.\n")
    if score is not None:
        put(d, f"qc.finding-F{n:02d}.score.md", f"---\nscore: {score}\n---\n\nWhy.\n")
    return f


# -- bad arguments: exit 2, one line naming the argument ------------------------------


@pytest.mark.parametrize(("args", "said"), [
    ((), "usage"),
    (("--output", "foo"), "must not begin with '-' (got: --output)"),
    (("-x",), "must not begin with '-' (got: -x)"),
    (("/no/such/round-dir",), "round-dir does not exist: /no/such/round-dir"),
    (("--halt-on", "bogus", "."), "--halt-on"),
])
def test_bad_arguments_exit_2_with_one_line_naming_the_argument(
        args: tuple[str, ...], said: str) -> None:
    code, err = fan_in(*args)
    assert code == 2
    assert err.count("\n") == 1 and said in err


def test_a_file_where_the_round_directory_belongs_and_a_second_positional_exit_2(
        tmp_path: Path) -> None:
    f = put(tmp_path, "round-01", "not a directory\n")
    code, err = fan_in(f)
    assert (code, err.count("\n")) == (2, 1) and "is not a directory" in err
    code, err = fan_in(tmp_path, tmp_path)
    assert code == 2 and "unexpected argument" in err


def test_a_round_dir_name_that_is_not_utf8_is_named_escaped(tmp_path: Path) -> None:
    proc = run_main("fan-in", os.fsencode(str(tmp_path)) + b"/r\xff\x1b[31m")
    assert proc.returncode == 2
    assert b"\xff" not in proc.stderr and b"\x1b" not in proc.stderr
    assert b"does not exist" in proc.stderr and b"\\x1b" in proc.stderr


# -- upstream's recount and outputs ---------------------------------------------------


def test_a_clean_round_writes_upstreams_audit_bytes_and_the_kept_list_by_threshold(
        tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "style", 79), (Q, 2, "style", 80), (Q, 3, "clarity", 79),
                         (Q, 4, "clarity", 80), (Q, 5, "correctness", 69),
                         (Q, 6, "correctness", 70), (Q, 7, "scope", 1), (Q, 8, "intent", 0),
                         (Q, 9, "style", "089"), (Q, 10, "correctness", "070")])
    assert fan_in(d) == (0, "")
    assert (d / AUDIT).read_text() == audit_json(10, 6, 4)
    assert kept(d) == [name(Q, n) for n in (2, 4, 6, 7, 9, 10)]
    assert (d / KEPT).read_bytes().startswith(os.fsencode(os.path.realpath(d)) + b"/")


def test_nothing_kept_is_an_empty_kept_list(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "scope", 0)])
    assert fan_in(d)[0] == 0
    assert (d / KEPT).read_bytes() == b"" and audit(d)["dropped"] == 1


def _fifo(d: Path, n: str) -> None:
    os.mkfifo(d / n)


@pytest.mark.parametrize(("make", "cause"), [
    (lambda d: qc(d, 1, change_type=None), "missing_change_type"),
    (lambda d: qc(d, 1, change_type="bogus-category"), "change_type_out_of_enum"),
    (lambda d: qc(d, 1, score=None), "missing_sidecar"),
    (lambda d: (qc(d, 1, score=None), put(d, "qc.finding-F01.score.yml", "score: 90\n")),
     "sidecar_wrong_extension"),
    (lambda d: qc(d, 1, score="not-a-number"), "score_unparseable"),
    (lambda d: qc(d, 1, score="18446744073709551706"), "score_unparseable"),
    (lambda d: qc(d, 1, score=101), "score_unparseable"),
    (lambda d: (qc(d, 1, score=None), _fifo(d, "qc.finding-F01.score.md")),
     "sidecar_unreadable"),
    (lambda d: (_fifo(d, "qc.finding-F01.md"), put(d, "qc.finding-F01.score.md", side())),
     "finding_unreadable"),
])
def test_each_of_upstreams_seven_causes_halts_under_halt_on_upstream(
        tmp_path: Path, make: object, cause: str) -> None:
    d = bare(tmp_path)
    put(d, KEPT, "stale/path/finding.md\n")
    make(d)  # type: ignore[operator]
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 1
    assert f"halt: {cause}" in err
    assert not (d / KEPT).exists()
    doc = audit(d)
    assert doc["scored"] == 1 and halts(d)[0][1] == cause
    fid = "qc.finding-F01" if cause == "finding_unreadable" else "F01"
    assert halts(d)[0] == (fid, cause)
    if "unreadable" in cause:
        what = "finding" if cause == "finding_unreadable" else "sidecar"
        assert f"cannot read {what} file: " in err


def test_scored_counts_halted_findings_and_the_first_cause_is_named_first(
        tmp_path: Path) -> None:
    d = bare(tmp_path)
    qc(d, 1, change_type=None, score=None)
    qc(d, 2, score=None)
    qc(d, 3, score=95)
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 1
    assert err.index("halt: missing_change_type") < err.index("missing_sidecar")
    doc = audit(d)
    assert (doc["scored"], doc["kept"], doc["dropped"]) == (3, 1, 0)
    assert halts(d) == [("F01", "missing_change_type"), ("F02", "missing_sidecar")]


def test_upstream_mode_on_upstreams_fixtures_keeps_and_lists_the_guards_errors(
        tmp_path: Path) -> None:
    d = bare(tmp_path)
    qc(d, 1, score=90)
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 0
    assert kept(d) == ["qc.finding-F01.md"]
    doc = audit(d)
    assert list(doc)[:5] == ["scored", "kept", "dropped", "halts", "thresholds"]
    got = {(e["finding_id"], e["cause"]) for e in doc["guard_errors"]}  # type: ignore[attr-defined]
    assert ("qc.finding-F01", "finding_id_malformed") in got
    assert ("qc.finding-F01", "missing_severity") in got
    assert "guard error" in err and "missing_severity" in err
    assert "config_missing" not in err  # outside a run's layout


# -- the contract's halts (--halt-on all, the default) ---------------------------------


def test_a_misnamed_finding_upstream_would_skip_halts_with_the_guards_cause(
        tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    put(d, f"{Q}.finding-1.md", finding_text(Q, 2))
    code, err = fan_in(d)
    assert code == 1 and "halt: bad_finding_filename" in err
    assert (f"{Q}.finding-1", "bad_finding_filename") in halts(d)
    assert not (d / KEPT).exists()
    assert audit(d)["scored"] == 1  # upstream's count: its glob does not see the file


def test_a_finding_under_another_reviewers_tag_halts_after_upstreams_causes(
        tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90), (Q, 2, "style", None)])
    put(d, name(Q, 1), finding_text(Q, 1).replace(f"reviewer: {Q}", "reviewer: other-claude"))
    assert fan_in(d)[0] == 1
    assert halts(d)[:2] == [("R1-F02", "missing_sidecar"), ("R1-F01", "reviewer_tag_mismatch")]


def test_a_malformed_finding_id_halts_under_the_file_stem(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    put(d, name(Q, 1), finding_text(Q, 1).replace("finding_id: R1-F01", "finding_id: F01"))
    assert fan_in(d)[0] == 1
    assert (f"{Q}.finding-F01", "finding_id_malformed") in halts(d)


@pytest.mark.parametrize(("make", "upstream", "guard"), [
    (lambda d: put(d, "quality-claude.finding-F01.score.md", side(101)),
     "score_unparseable", "score_out_of_range"),
    (lambda d: put(d, "quality-claude.finding-F01.score.md",
                   "---\nverified_score: 90\nverdict: keep\n---\n"),
     "score_unparseable", "sidecar_malformed"),
    (lambda d: os.unlink(d / "quality-claude.finding-F01.score.md"),
     "missing_sidecar", "sidecar_missing"),
])
def test_a_guard_cause_meaning_the_same_as_upstreams_is_reported_once_under_upstreams_name(
        tmp_path: Path, make: object, upstream: str, guard: str) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    put(d, AUDIT, audit_json(1, 1, 0))  # verified: the judge's sidecar rules apply
    make(d)  # type: ignore[operator]
    assert guard in {x.cause for x in check(d).diagnostics}
    assert fan_in(d)[0] == 1
    assert halts(d) == [("R1-F01", upstream)]


def test_the_same_round_under_upstream_mode_keeps_and_names_the_errors(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    put(d, f"{Q}.finding-1.md", finding_text(Q, 2))
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 0 and kept(d) == [name(Q, 1)]
    assert audit(d)["guard_errors"] == [{  # type: ignore[comparison-overlap]
        "finding_id": f"{Q}.finding-1", "cause": "bad_finding_filename",
        "message": next(x.message for x in check(d).diagnostics
                        if x.cause == "bad_finding_filename")}]
    assert "bad_finding_filename" in err and "halt:" not in err


def test_warnings_never_halt(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    put(d, name(Q, 1), finding_text(Q, 1) + "\n")  # trailing_newline is a warning
    assert "trailing_newline" in {x.cause for x in check(d).diagnostics}
    assert fan_in(d) == (0, "")
    assert halts(d) == [] and "guard_errors" not in audit(d)


def test_the_halts_are_the_errors_check_reports_for_the_round(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90), (Q, 2, "style", 85)])
    put(d, name(Q, 2), finding_text(Q, 2, "style").replace("severity: high\n", ""))
    put(d, "notes.txt", "scratch\n")
    assert fan_in(d)[0] == 1
    errors = {x.cause for x in check(d).diagnostics if x.level == "error"}
    assert {c for _, c in halts(d)} == errors == {"missing_severity",
                                                  "unknown_file_in_round_dir"}


# -- judged as the round will stand after this fan-in -----------------------------------


def test_stale_outputs_of_an_earlier_run_are_not_judged_but_replaced(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    put(d, AUDIT, "{not json")
    put(d, KEPT, "/elsewhere/round-01/quality-claude.finding-F09.md\n")
    assert fan_in(d) == (0, "")
    assert (d / AUDIT).read_text() == audit_json(1, 1, 0) and kept(d) == [name(Q, 1)]


def test_a_fifo_where_the_audit_belongs_is_replaced_without_blocking(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    os.mkfifo(d / AUDIT)
    assert fan_in(d) == (0, "")
    assert (d / AUDIT).read_text() == audit_json(1, 1, 0)


def test_in_a_runs_layout_the_status_file_is_what_check_write_status_writes(
        tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90), (Q, 2, "style", 50)])
    assert fan_in(d)[0] == 0
    status = d.parent / "round-01-guard.json"
    ours = json.loads(status.read_text())
    assert run_main("check", "--write-status", str(d)).returncode == 0
    theirs = json.loads(status.read_text())
    ours.pop("checked_at"), theirs.pop("checked_at")
    assert ours == theirs and ours["status"] == "ok"
    mismatch = {"fanin_audit_mismatch", "kept_findings_mismatch", "fanin_audit_malformed"}
    assert not mismatch & {x.cause for x in check(d).diagnostics}


def test_a_halting_round_gets_a_halting_status_file(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", None)])
    assert fan_in(d)[0] == 1
    doc = json.loads((d.parent / "round-01-guard.json").read_text())
    assert doc["status"] == "halt"
    assert "sidecar_missing" in {h["cause"] for h in doc["halts"]}


def test_outside_a_runs_layout_no_status_file_and_no_config_rules(tmp_path: Path) -> None:
    for dirname in ("round-NN", "round-03"):
        d = bare(tmp_path, dirname)
        put(d, name(Q, 1), finding_text(Q, 1, round_no=3 if dirname == "round-03" else 1))
        put(d, f"{Q}.finding-F01.score.md", side(90))
        assert fan_in(d) == (0, "")
        assert kept(d) == [name(Q, 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["round-03", "round-NN"]


# -- hostile inputs -------------------------------------------------------------------


def test_payload_bytes_and_escapes_never_reach_the_output(tmp_path: Path) -> None:
    d = bare(tmp_path)
    put(d, "qc.finding-F01.md", "---\nfinding_id: X\x1b]0;pwn\x07\x7f\nartifact: goals\n---\n\n"
        "SECRET-PAYLOAD \x1b[31m::error::owned\n")
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 1 and "halt: missing_change_type" in err
    assert "\x1b" not in err and "\x07" not in err and "SECRET-PAYLOAD" not in err
    raw = (d / AUDIT).read_bytes()
    assert b"\x1b" not in raw and b"SECRET-PAYLOAD" not in raw
    assert b'"finding_id": "X\\u001b]0;pwn\\u0007\\u007f"' in raw  # as jq writes it


def test_names_that_are_not_utf8_are_counted_and_kept_byte_for_byte(tmp_path: Path) -> None:
    d = bare(tmp_path)
    raw = os.fsencode(str(d)) + b"/qc\xff.finding-F01.md"
    with open(raw, "wb") as fh:
        fh.write(b"---\nchange_type: style\n---\n\nBody.\n")
    with open(raw[:-3] + b".score.md", "wb") as fh:
        fh.write(b"---\nscore: 90\n---\n")
    put(d, "qc.finding-F02.md", "---\nartifact: goals\n---\n")
    with open(raw.replace(b"F01", b"F03"), "wb") as fh:
        fh.write(b"---\nchange_type: style\n---\n")
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 1 and "\xff" not in err
    assert halts(d) == [("qc.finding-F02", "missing_change_type"),
                        ("qc\ufffd.finding-F03", "missing_sidecar")]
    d2 = bare(tmp_path, "round-02")
    os.rename(raw, os.fsencode(str(d2)) + b"/qc\xff.finding-F01.md")
    os.rename(raw[:-3] + b".score.md", os.fsencode(str(d2)) + b"/qc\xff.finding-F01.score.md")
    assert fan_in("--halt-on", "upstream", d2)[0] == 0
    assert (d2 / KEPT).read_bytes() == os.fsencode(os.path.realpath(d2)) + \
        b"/qc\xff.finding-F01.md\n"


def test_huge_numbers_in_names_and_scores_are_named_not_crashes(tmp_path: Path) -> None:
    d = bare(tmp_path)
    put(d, "qc.finding-F" + "9" * 200 + ".md", "---\nchange_type: style\n---\n")
    qc(d, 1, score="9" * 5000)
    code, _ = fan_in("--halt-on", "upstream", d)
    assert code == 1
    assert [c for _, c in halts(d)] == ["score_unparseable", "missing_sidecar"]


def test_an_unreadable_round_directory_is_exit_2(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a mode-000 directory")
    d = bare(tmp_path)
    d.chmod(0)
    try:
        code, err = fan_in(d)
    finally:
        d.chmod(0o755)
    assert code == 2 and err.count("\n") == 1


def test_a_run_with_no_findings_is_clean(run: Run) -> None:
    d = run.round_dir("design", 1)
    run.clean("design", 1, Q), run.clean("design", 1, S)
    assert fan_in(d) == (0, "")
    assert (d / AUDIT).read_text() == audit_json(0, 0, 0) and (d / KEPT).read_bytes() == b""


def test_a_directory_above_rounds_counts_only_what_it_holds_itself(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", None)])  # a halting round below
    step = d.parent
    assert fan_in(step) == (0, "")
    assert (step / AUDIT).read_text() == audit_json(0, 0, 0)
    empty = bare(tmp_path, "scratch")
    assert fan_in(empty) == (0, "") and (empty / KEPT).read_bytes() == b""


def test_an_unreadable_finding_is_one_halt_under_upstreams_name(tmp_path: Path) -> None:
    d = valid(tmp_path, [(Q, 1, "correctness", 90)])
    os.unlink(d / name(Q, 1))
    os.mkfifo(d / name(Q, 1))
    assert "unreadable_file" in {x.cause for x in check(d).diagnostics}
    code, err = fan_in(d)
    assert code == 1 and "cannot read finding file: " in err
    assert halts(d) == [(f"{Q}.finding-F01", "finding_unreadable")]


def test_stderr_stays_bounded_however_many_errors_a_round_has(tmp_path: Path) -> None:
    d = bare(tmp_path)
    for n in range(1, 40):
        qc(d, n)
    code, err = fan_in("--halt-on", "upstream", d)
    assert code == 0
    errors = audit(d)["guard_errors"]
    assert isinstance(errors, list) and len(errors) > 40
    assert err.count("\n") == 11 and "more guard errors" in err
    code, err = fan_in(d)
    assert code == 1 and err.count("\n") == 12 and "more halts" in err
