"""generations.md §3: the fan-in's outputs inside the round, against its own recount.

Hand-computed audits for tricky rounds (self-contained) and hostile audit files; the
differential test against the real `verifier-fan-in.sh` is in
test_generations_fanin_upstream.py.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.genkit import (
    AUDIT,
    KEPT,
    audit_json,
    causes,
    check,
    fanin_round,
    finding_text,
    kept_txt,
    new_run,
    of,
    one,
    put,
    sidecar_md,
)
from tests.support import run_main

Q = "quality-claude"
S = "scope-claude"
MISMATCH = {"fanin_audit_mismatch", "kept_findings_mismatch", "fanin_audit_malformed"}


def name(tag: str, n: int) -> str:
    return f"{tag}.finding-F{n:02d}.md"


def verified(run, d: Path, scored: int, kept: list[str] | None, dropped: int,
             halts: list[tuple[str, str]] = (), kept_n: int | None = None,
             **kw: object) -> None:
    """Write the audit (kept = the number of *kept* names unless *kept_n* is given) and,
    unless *kept* is None, kept-findings.txt naming *kept*."""
    count = kept_n if kept_n is not None else len(kept or [])
    put(d, AUDIT, audit_json(scored, count, dropped, halts, **kw))
    if kept is not None:
        put(d, KEPT, kept_txt(d, kept))
    elif (d / KEPT).exists():
        (d / KEPT).unlink()


def kept_rule(root: Path) -> list[str]:
    """The causes with the audit's mismatch ignored: a kept list stale with its audit is
    one defect, reported as the audit's (rules/consequences.py), so the kept list's own
    rule is seen where the audit's is not reported."""
    proc = run_main("check", "--format", "json", "--ignore", "fanin_audit_mismatch", str(root))
    return sorted(d["cause"] for d in json.loads(proc.stdout)["diagnostics"])


# -- hand-computed rounds whose audit is right ----------------------------------------


def test_score_0_drops_even_scope_and_intent(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "scope", 0), (Q, 2, "intent", 0),
                                       (Q, 3, "intent", 1), (S, 1, "scope", 100)])
    verified(run, d, 4, [name(Q, 3), name(S, 1)], 2)
    assert not MISMATCH & set(causes(check(run.root)))
    # the audit a guard that kept scope at 0 would accept is refused
    verified(run, d, 4, [name(Q, 1), name(Q, 2), name(Q, 3), name(S, 1)], 0)
    got = causes(check(run.root))
    assert "fanin_audit_mismatch" in got and "kept_findings_mismatch" not in got  # one run
    assert "kept_findings_mismatch" in kept_rule(run.root)


def test_thresholds_keep_at_or_above_and_drop_below(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [
        (Q, 1, "correctness", 70), (Q, 2, "correctness", 69), (Q, 3, "style", 80),
        (Q, 4, "style", 79), (Q, 5, "clarity", 80), (Q, 6, "clarity", 79),
        (Q, 7, "correctness", 100), (Q, 8, "scope", 5)], cleans=[S])
    verified(run, d, 8, [name(Q, n) for n in (1, 3, 5, 7, 8)], 3)
    assert not MISMATCH & set(causes(check(run.root)))


def test_correctness_at_exactly_70_is_kept_though_apply_fix_v07_dropped_it(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 70)], cleans=[S])
    verified(run, d, 1, [], 1)  # the v0.7 reading (correctness 80): dropped
    result = check(run.root)
    m = one(result, "fanin_audit_mismatch").message
    assert "kept says 0, recount 1" in m and "dropped says 1, recount 0" in m
    assert "kept_findings_mismatch" in kept_rule(run.root)


def test_the_mismatch_message_names_each_wrong_total_as_written_and_recounted(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90), (Q, 2, "style", 10)],
                    cleans=[S])
    put(d, AUDIT, audit_json(3, 2, 0))
    m = one(check(run.root), "fanin_audit_mismatch").message
    assert "scored says 3, recount 2" in m and "kept says 2, recount 1" in m
    assert "dropped says 0, recount 1" in m


def test_halted_findings_are_counted_in_scored_and_neither_kept_nor_dropped(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 2, "correctness", 90), (Q, 3, "style", 10)],
                    cleans=[S])
    put(d, name(Q, 1), finding_text(Q, 1, None))  # no change_type: halts
    put(d, f"{Q}.finding-F01.score.md", sidecar_md(95))
    put(d, name(Q, 4), finding_text(Q, 4, "corectness"))  # out of enum: halts
    put(d, f"{Q}.finding-F04.score.md", sidecar_md(95))
    put(d, name(Q, 5), finding_text(Q, 5))  # no sidecar: halts
    put(d, name(Q, 6), finding_text(Q, 6))  # wrong extension: halts
    put(d, f"{Q}.finding-F06.score.yml", "score: 95\nreason: r\n")
    put(d, name(Q, 7), finding_text(Q, 7))  # unreadable score: halts
    put(d, f"{Q}.finding-F07.score.md", sidecar_md("high"))
    put(d, name(Q, 8), finding_text(Q, 8))  # failed: no score, halts
    put(d, f"{Q}.finding-F08.score.md", sidecar_md(None, "failed",
                                                   "failure_reason: timed out\n"))
    halts = [("R1-F01", "missing_change_type"), ("R1-F04", "change_type_out_of_enum"),
             ("R1-F05", "missing_sidecar"), ("R1-F06", "sidecar_wrong_extension"),
             ("R1-F07", "score_unparseable"), ("R1-F08", "score_unparseable")]
    verified(run, d, 8, None, 1, halts, kept_n=1)
    assert not MISMATCH & set(causes(check(run.root)))
    verified(run, d, 2, None, 1, halts, kept_n=1)  # halted ones left out of scored
    assert "scored says 2, recount 8" in one(check(run.root), "fanin_audit_mismatch").message


def test_the_score_is_used_whatever_verifier_status_says(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[S])
    for n, status in ((1, "failed"), (2, "weird"), (3, None)):
        put(d, name(Q, n), finding_text(Q, n, "correctness"))
        extra = "failure_reason: timed out\n" if status == "failed" else ""
        put(d, f"{Q}.finding-F{n:02d}.score.md", sidecar_md(90, status, extra))
    verified(run, d, 3, [name(Q, n) for n in (1, 2, 3)], 0)
    assert not MISMATCH & set(causes(check(run.root)))


def test_escalation_plays_no_part_in_the_fan_in_recount(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[S])
    text = finding_text(Q, 1, "correctness").replace("[design.md:L10-L20]",
                                                     "[feedback/round-2-decisions.md]")
    put(d, name(Q, 1), text)
    put(d, f"{Q}.finding-F01.score.md", sidecar_md(40))
    verified(run, d, 1, [], 1)
    result = check(run.root)
    assert "escalation_required" in causes(result)
    assert not MISMATCH & set(causes(result))


@pytest.mark.parametrize("line, kept", [
    ('change_type: "scope"', True), ("change_type: 'scope'", True),
    ("  change_type: scope", True), ("change_type:scope", True),
])
def test_the_change_type_line_is_read_as_the_fan_in_reads_it(tmp_path: Path, line: str,
                                                              kept: bool) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[S])
    put(d, name(Q, 1), finding_text(Q, 1, "scope", change_type_line=line))
    put(d, f"{Q}.finding-F01.score.md", sidecar_md(20))
    verified(run, d, 1, [name(Q, 1)], 0)
    assert not MISMATCH & set(causes(check(run.root)))


@pytest.mark.parametrize("line, cause", [
    ("change_type: scope # intent", "change_type_out_of_enum"),
    ("change_type: Scope", "change_type_out_of_enum"),
    ('change_type: ""', "missing_change_type"), ("category: scope", "missing_change_type"),
])
def test_a_change_type_the_fan_in_cannot_read_halts_the_finding(tmp_path: Path, line: str,
                                                                 cause: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[S])
    put(d, name(Q, 1), finding_text(Q, 1, "scope", change_type_line=line))
    put(d, f"{Q}.finding-F01.score.md", sidecar_md(20))
    verified(run, d, 1, None, 0, [("R1-F01", cause)], kept_n=0)
    assert not MISMATCH & set(causes(check(run.root)))
    put(d, KEPT, "")  # kept-findings.txt present although the round halted
    assert "kept_findings_mismatch" in causes(check(run.root))


def test_the_first_change_type_line_wins(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[S])
    text = finding_text(Q, 1, "scope").replace("change_type: scope\n",
                                               "change_type: scope\nchange_type: style\n")
    put(d, name(Q, 1), text)
    put(d, f"{Q}.finding-F01.score.md", sidecar_md(20))
    verified(run, d, 1, [name(Q, 1)], 0)
    assert not MISMATCH & set(causes(check(run.root)))


def test_names_outside_the_fan_ins_glob_are_not_counted(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "scope", 90)], cleans=[S])
    put(d, f"{Q}.R1-F02.md", finding_text(Q, 2))  # bad_finding_filename, not globbed
    put(d, f"{Q}.F03.md", finding_text(Q, 3))
    verified(run, d, 1, [name(Q, 1)], 0)
    result = check(run.root)
    assert len(of(result, "bad_finding_filename")) + len(
        of(result, "unknown_file_in_round_dir")) == 2
    assert not MISMATCH & set(causes(result))


@pytest.mark.parametrize("stem", [f"{Q}.finding-F1", f"Q{Q}.finding-F01",
                                  f"{Q}.finding-Fx1", f"{Q}.finding-F01-extra"])
def test_a_badly_named_finding_the_fan_in_globs_is_scored_from_its_sidecar(
        tmp_path: Path, stem: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [], cleans=[S])
    put(d, f"{stem}.md", finding_text(Q, 1, "scope"))
    put(d, f"{stem}.score.md", sidecar_md(90))
    verified(run, d, 1, [f"{stem}.md"], 0)  # what verifier-fan-in.sh writes (ran)
    result = check(run.root)
    assert causes(result, f"{stem}.md") in (["bad_finding_filename"], ["bad_tag_name"])
    assert not MISMATCH & set(causes(result))


@pytest.mark.parametrize("label, sidecar, kept, cause", [
    ("not UTF-8 in the reason",
     b"---\nverifier_status: passed\nscore: 90\nreason: caf\xe9\n---\n", True, "not_utf8"),
    ("over 1 MiB of prose",
     b"---\nverifier_status: passed\nscore: 90\n---\n\n" + b"prose\n" * 200_000, True,
     "file_too_large"),
    # awk sees no fence on the BOM line: its frontmatter is the body, whose score is 5
    ("a byte-order mark",
     b"\xef\xbb\xbf---\nverifier_status: passed\nscore: 90\n---\nscore: 5\n---\n", False,
     "utf8_bom"),
])
def test_a_sidecar_flagged_per_file_is_still_recounted_as_the_fan_in_reads_it(
        tmp_path: Path, label: str, sidecar: bytes, kept: bool, cause: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", None)], cleans=[S])
    put(d, f"{Q}.finding-F01.score.md", sidecar)
    verified(run, d, 1, [name(Q, 1)] if kept else [], 0 if kept else 1)
    result = check(run.root)
    assert cause in causes(result, f"{Q}.finding-F01.score.md"), label
    assert not MISMATCH & set(causes(result)), label


# -- kept-findings.txt ---------------------------------------------------------------


def test_kept_findings_txt_is_compared_by_file_name_and_may_be_empty(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 10)], cleans=[S])
    verified(run, d, 1, [], 1)
    assert (d / KEPT).read_bytes() == b""
    assert not MISMATCH & set(causes(check(run.root)))
    d2 = fanin_round(run, "design", 2, [(Q, 1, "style", 90), (Q, 2, "scope", 50)],
                     cleans=[S])
    put(d2, AUDIT, audit_json(2, 2, 0))
    put(d2, KEPT, f"/Users/dfrysinger/code/x/round-02/{name(Q, 2)}\n/home/ci/{name(Q, 1)}\n")
    assert not MISMATCH & set(causes(check(d2)))


def test_a_kept_list_naming_a_file_not_in_the_round_is_a_mismatch(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90)], cleans=[S])
    verified(run, d, 1, [name(Q, 1), "quality-claude.finding-F09.md"], 0, kept_n=1)
    m = one(check(run.root), "kept_findings_mismatch").message
    assert "quality-claude.finding-F09.md" in m


def test_a_kept_list_that_omits_or_adds_a_finding_is_a_mismatch(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90), (Q, 2, "style", 10)],
                    cleans=[S])
    verified(run, d, 2, [name(Q, 2)], 1, kept_n=1)
    m = one(check(run.root), "kept_findings_mismatch").message
    assert name(Q, 1) in m and name(Q, 2) in m
    assert "fanin_audit_mismatch" not in causes(check(run.root))


def test_a_kept_list_although_the_audit_says_halts_is_a_mismatch(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90)], cleans=[S])
    verified(run, d, 1, [name(Q, 1)], 0, [("R1-F01", "missing_sidecar")])
    assert "kept_findings_mismatch" in causes(check(run.root))


def test_the_kept_list_alone_marks_the_round_verified(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90), (Q, 2, "style", None)],
                    cleans=[S])
    put(d, KEPT, kept_txt(d, [name(Q, 1)]))
    result = check(run.root)
    assert one(result, "sidecar_missing").file == name(Q, 2)
    assert one(result, "sidecar_missing").message == \
        "Sidecar missing for finding quality-claude.R1-F02"
    # the recount halts F02, so a kept list there is itself wrong
    assert "kept_findings_mismatch" in causes(result)


# -- the thresholds the audit records --------------------------------------------------


def test_the_thresholds_the_audit_records_drive_the_recount(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 65), (Q, 2, "style", 85),
                                       (Q, 3, "correctness", 62)], cleans=[S])
    low = {"style": 90, "clarity": 80, "correctness": 60}
    verified(run, d, 3, [name(Q, 1), name(Q, 3)], 1, thresholds=low)
    assert not MISMATCH & set(causes(check(run.root)))
    # the same totals recorded with the default thresholds: F01 and F03 drop, F02 keeps
    verified(run, d, 3, [name(Q, 1), name(Q, 3)], 1)
    got = check(run.root)
    m = one(got, "fanin_audit_mismatch").message
    assert "style 80, clarity 80, correctness 70" in m
    assert "kept says 2, recount 1" in m and "dropped says 1, recount 2" in m
    assert "kept_findings_mismatch" in kept_rule(run.root)
    verified(run, d, 3, [name(Q, 2)], 2, thresholds=low)  # right only at the defaults
    assert "style 90, clarity 80, correctness 60" in one(check(run.root),
                                                         "fanin_audit_mismatch").message


def test_an_audit_without_thresholds_recounts_at_80_80_70(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 70), (Q, 2, "clarity", 79)],
                    cleans=[S])
    doc = json.loads(audit_json(2, 1, 1))
    del doc["thresholds"]
    put(d, AUDIT, json.dumps(doc))
    put(d, KEPT, kept_txt(d, [name(Q, 1)]))
    assert not MISMATCH & set(causes(check(run.root)))


# -- sidecar_missing in verified fan-in rounds -----------------------------------------


@pytest.mark.parametrize("step, level", [("design", "error"), ("goals", "error"),
                                         ("plan", "warning"), ("integration", "warning"),
                                         ("test", "warning")])
def test_sidecar_missing_levels_follow_the_contract(tmp_path: Path, step: str,
                                                    level: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, step, 1, [(Q, 1, "style", 90), (Q, 2, "style", None)])
    verified(run, d, 2, None, 0, [("R1-F02", "missing_sidecar")], kept_n=1)
    assert one(check(run.root), "sidecar_missing").level == level


def test_an_unverified_fan_in_round_needs_no_sidecars(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90), (Q, 2, "style", None)],
                    cleans=[S])
    assert "sidecar_missing" not in causes(check(run.root))
    assert "sidecar_missing" in causes(check(d, require_sidecars=True))


def test_a_marker_does_not_waive_the_audit_and_kept_list_rules(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90), (Q, 2, "style", None)],
                    cleans=[S])
    put(d, "round-01-verifier-disabled.md",
        "---\nreason: verifier down\nround: 1\ncreated_by: implement\n---\n")
    verified(run, d, 5, [name(Q, 1)], 0)
    got = causes(check(run.root))
    assert "sidecar_missing" not in got
    assert "fanin_audit_mismatch" in got
    assert "kept_findings_mismatch" in kept_rule(run.root)


# -- audits that cannot be used -----------------------------------------------------


@pytest.mark.parametrize("content, said", [
    ('{"scored": 1, "kept": 1, "dropped": 0}', "halts"),
    ('{"scored": 1, "kept": 1, "halts": []}', "dropped"),
    ('{"kept": 1, "dropped": 0, "halts": []}', "scored"),
    ("[1, 1, 0, []]", "object"), ('"scored"', "object"), ("null", "object"),
    ("", "JSON"), ("{scored: 1}", "JSON"),
    ('{"scored": "1", "kept": 1, "dropped": 0, "halts": []}', "scored"),
    ('{"scored": true, "kept": 1, "dropped": 0, "halts": []}', "scored"),
    ('{"scored": 1.0, "kept": 1, "dropped": 0, "halts": []}', "scored"),
    ('{"scored": NaN, "kept": 1, "dropped": 0, "halts": []}', "NaN"),
    ('{"scored": 1, "kept": 1, "dropped": 0, "halts": {}}', "halts"),
    ('{"scored": 1, "kept": 1, "dropped": 0, "halts": [], "thresholds": [80]}', "thresholds"),
])
def test_an_audit_that_cannot_be_used_is_fanin_audit_malformed(tmp_path: Path, content: str,
                                                               said: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90)], cleans=[S])
    put(d, AUDIT, content)
    result = check(run.root)
    d0 = one(result, "fanin_audit_malformed")
    assert said in d0.message and d0.file == AUDIT and d0.level == "error"
    assert "fanin_audit_mismatch" not in causes(result)


def _hostile(tmp_path: Path, make) -> tuple[subprocess.CompletedProcess, dict]:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90)], cleans=[S])
    make(d / AUDIT)
    proc = run_main("check", "--format", "json", str(run.root), timeout=30)
    assert b"Traceback" not in proc.stderr and proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    (got,) = [x for x in doc["diagnostics"] if x["cause"] == "fanin_audit_malformed"]
    return proc, got


@pytest.mark.parametrize("label, content, said", [
    ("nested 10,000 deep", b"[" * 10_000 + b"]" * 10_000, "deep"),
    ("objects nested 10,000 deep", b'{"a":' * 10_000 + b"1" + b"}" * 10_000, "deep"),
    ("a 5,000-digit integer", b'{"scored": ' + b"9" * 5000
     + b', "kept": 1, "dropped": 0, "halts": []}', "digits"),
    ("binary bytes", bytes(range(256)) * 4, "UTF-8"),
])
def test_a_hostile_audit_is_a_named_cause_never_a_traceback(tmp_path: Path, label: str,
                                                            content: bytes, said: str) -> None:
    _, got = _hostile(tmp_path, lambda p: p.write_bytes(content))
    assert said in got["message"], label


def test_a_fifo_named_as_the_audit_is_a_named_cause_never_a_hang(tmp_path: Path) -> None:
    _, got = _hostile(tmp_path, lambda p: os.mkfifo(p))
    assert "regular file" in got["message"]


def test_a_2_mib_audit_that_is_not_json_is_a_named_cause(tmp_path: Path) -> None:
    _hostile(tmp_path, lambda p: p.write_bytes(b'{"scored": "' + b"x" * (2 << 20) + b'"}'))


def test_a_2_mib_audit_is_refused_as_too_large(tmp_path: Path) -> None:
    padded = audit_json(1, 1, 0).encode() + b" " * (2 << 20)
    _, got = _hostile(tmp_path, lambda p: p.write_bytes(padded))
    assert "MiB" in got["message"] or "large" in got["message"]


@pytest.mark.parametrize("make", [lambda p: os.mkfifo(p), lambda p: p.write_bytes(b"\xff\n")])
def test_a_kept_list_that_cannot_be_read_is_a_mismatch_never_a_hang(tmp_path: Path,
                                                                    make) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "style", 90)], cleans=[S])
    make(d / KEPT)
    proc = run_main("check", "--format", "json", str(run.root), timeout=30)
    assert b"Traceback" not in proc.stderr
    assert "kept_findings_mismatch" in {x["cause"] for x in
                                        json.loads(proc.stdout)["diagnostics"]}
