"""generations.md §2 and §6: fan-in sidecars, and which generation each round is.

Also the fast path under a narrowed contract (the contract is one value, §1). The
other sections are in test_generations_fanin.py (§3), test_generations_layout.py
(§4, §8), test_generations_tags.py (§5) and test_generations_config.py (§7).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qrspi_guard.contract.generations import FindingContract
from qrspi_guard.contract.generations.fan_in import FAN_IN
from qrspi_guard.contract.layout import classify
from qrspi_guard.records import replace
from qrspi_guard.rules.facts import Place
from qrspi_guard.rules.fastjudge import fast_report
from qrspi_guard.rules.filejudge import judge_file
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
F1 = f"{Q}.finding-F01"


def protocols(result) -> dict[int | None, str]:
    return {r.ref.round: r.protocol for r in result.rounds}


# -- §6 rules 1 and 2: a round's own evidence ----------------------------------------


def test_a_score_md_sidecar_makes_the_round_fan_in(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    fanin_round(run, "design", 1, [(Q, 1, "correctness", 90)], cleans=[S])
    assert protocols(check(run.root)) == {1: "fan-in"}


@pytest.mark.parametrize("name, content", [
    (KEPT, ""), (AUDIT, audit_json(0, 0, 0))])
def test_a_fan_in_output_inside_makes_the_round_fan_in(tmp_path: Path, name: str,
                                                        content: str) -> None:
    run = new_run(tmp_path)
    # two apply-fix rounds would make the majority apply-fix: rule 1 decides first
    for n in (1, 2):
        d = run.round_dir("design", n)
        put(d, f"{F1}.md", finding_text(Q, 1, round_no=n))
        put(d, f"{F1}.score.yml", "score: 90\nreason: the cite holds\n")
    d = run.round_dir("design", 3)
    run.clean("design", 3, Q)
    put(d, name, content)
    result = check(run.root)
    assert protocols(result)[3] == "fan-in"
    assert "unknown_file_in_round_dir" not in causes(result)


def test_a_score_yml_sidecar_makes_the_round_apply_fix(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir("design", 1)
    put(d, f"{F1}.md", finding_text(Q, 1))
    put(d, f"{F1}.score.yml", "score: 90\nreason: the cite holds\n")
    result = check(run.root)
    assert protocols(result) == {1: "apply-fix"}
    assert "sidecar_wrong_extension" not in causes(result)


def test_round_verified_md_beside_makes_a_round_without_sidecars_apply_fix(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    run.clean("design", 1, Q)
    run.clean("design", 1, S)
    run.write("reviews/design/round-01-verified.md",
              "---\nscored: 0\nkept: 0\ndropped: 0\nfailed: 0\nclean: 2\n---\n")
    # a fan-in round elsewhere in the run does not outvote the round's own evidence
    fanin_round(run, "goals", 1, [(Q, 1, "correctness", 90)], cleans=[S])
    result = check(run.root)
    assert {r.ref.step: r.protocol for r in result.rounds} == {"design": "apply-fix",
                                                                "goals": "fan-in"}
    assert "verified_totals_mismatch" not in causes(result)


# -- §6 rule 3: the run's majority ------------------------------------------------------


def _applyfix_round(run, step: str, n: int) -> None:
    d = run.round_dir(step, n)
    put(d, f"{F1}.md", finding_text(Q, 1, round_no=n, step=step))
    put(d, f"{F1}.score.yml", "score: 90\nreason: the cite holds\n")
    run.clean(step, n, S)


def _majority_run(tmp_path: Path, applyfix: int, fanin: int):
    run = new_run(tmp_path)
    n = 0
    for _ in range(applyfix):
        n += 1
        _applyfix_round(run, "design", n)
    for _ in range(fanin):
        n += 1
        fanin_round(run, "design", n, [(Q, 1, "correctness", 90)], cleans=[S])
    n += 1
    run.clean("design", n, Q)
    run.clean("design", n, S)
    return run, n


def test_a_round_without_evidence_takes_the_majority_of_the_runs_decided_rounds(
        tmp_path: Path) -> None:
    run, clean_no = _majority_run(tmp_path, applyfix=2, fanin=1)
    assert protocols(check(run.root))[clean_no] == "apply-fix"


def test_the_majority_counts_every_round_on_disk_when_path_names_one_round(
        tmp_path: Path) -> None:
    run, clean_no = _majority_run(tmp_path, applyfix=2, fanin=1)
    round_dir = run.root / "reviews" / "design" / f"round-{clean_no:02d}"
    assert protocols(check(round_dir)) == {clean_no: "apply-fix"}
    assert protocols(check(round_dir / f"{Q}.clean.md")) == {clean_no: "apply-fix"}
    # rounds of other steps count too (the whole run, not the step)
    run2, _ = _majority_run(tmp_path / "two", applyfix=0, fanin=0)
    for n in (1, 2):
        _applyfix_round(run2, "goals", n)
    run2.clean("design", 5, Q)
    assert protocols(check(run2.root / "reviews" / "design" / "round-05")) == {5: "apply-fix"}


@pytest.mark.parametrize("applyfix, fanin", [(1, 1), (0, 0), (2, 2)])
def test_a_tie_or_no_decided_round_gives_fan_in(tmp_path: Path, applyfix: int,
                                                 fanin: int) -> None:
    run, clean_no = _majority_run(tmp_path, applyfix, fanin)
    assert protocols(check(run.root))[clean_no] == "fan-in"


def test_a_bare_round_outside_any_run_without_evidence_is_fan_in(tmp_path: Path) -> None:
    d = tmp_path / "round-02"
    put(d, f"{Q}.clean.md", f"---\nreviewer: {Q}\nround: 2\nfindings: 0\n---\n")
    assert protocols(check(d, step="design", second_reviewer=False)) == {2: "fan-in"}


def test_both_sidecar_kinds_in_one_round_is_fan_in_and_the_yml_is_wrong_extension(
        tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 90)], cleans=[S])
    put(d, f"{Q}.finding-F02.md", finding_text(Q, 2))
    put(d, f"{Q}.finding-F02.score.yml", "score: 90\nreason: the cite holds\n")
    result = check(run.root)
    assert protocols(result) == {1: "fan-in"}
    assert one(result, "sidecar_wrong_extension").file == f"{Q}.finding-F02.score.yml"


def test_protocol_apply_fix_makes_fan_in_files_wrong_or_unknown(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 90)], cleans=[S])
    put(d, KEPT, kept_txt(d, [f"{F1}.md"]))
    put(d, AUDIT, audit_json(1, 1, 0))
    result = check(run.root, protocol="apply-fix")
    assert protocols(result) == {1: "apply-fix"}
    assert one(result, "sidecar_wrong_extension").file == f"{F1}.score.md"
    assert sorted(x.file for x in of(result, "unknown_file_in_round_dir")) == sorted([AUDIT,
                                                                                       KEPT])
    assert check(run.root).rounds[0].protocol == "fan-in"  # auto: as the files say


def test_protocol_fan_in_makes_score_yml_wrong_extension(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = run.round_dir("design", 1)
    put(d, f"{F1}.md", finding_text(Q, 1))
    put(d, f"{F1}.score.yml", "score: 90\nreason: the cite holds\n")
    run.clean("design", 1, S)
    result = check(run.root, protocol="fan-in")
    assert protocols(result) == {1: "fan-in"}
    assert one(result, "sidecar_wrong_extension").file == f"{F1}.score.yml"


def test_protocol_is_in_the_json_rounds_and_in_the_status_file(tmp_path: Path) -> None:
    run, clean_no = _majority_run(tmp_path, applyfix=1, fanin=0)
    proc = run_main("check", "--format", "json", "--write-status", str(run.root))
    doc = json.loads(proc.stdout)
    assert [r["protocol"] for r in doc["rounds"]] == ["apply-fix", "apply-fix"]
    status = json.loads((run.root / "reviews/design/round-01-guard.json").read_text())
    assert status["protocol"] == "apply-fix"
    proc = run_main("check", "--format", "json", "--protocol", "fan-in", str(run.root))
    assert [r["protocol"] for r in json.loads(proc.stdout)["rounds"]] == ["fan-in", "fan-in"]
    proc = run_main("check", "--protocol", "sideways", str(run.root))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


# -- §2 fan-in sidecars ---------------------------------------------------------------


def _sidecar_causes(tmp_path: Path, text: str | bytes, verified: bool = False) -> list[str]:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", None)], cleans=[S])
    put(d, f"{F1}.score.md", text)
    if verified:
        put(d, AUDIT, audit_json(1, 0, 0, [("R1-F01", "score_unparseable")]))
    result = check(run.root)
    assert protocols(result) == {1: "fan-in"}
    return causes(result, f"{F1}.score.md")


@pytest.mark.parametrize("raw, expected", [
    ("90", []), ("0", []), ("100", []), ("089", []), ("007", []), ("090", []),
    ('"90"', []), ("'90'", []), ("90   ", []), ("101", ["score_out_of_range"]),
    ("999", ["score_out_of_range"]), ("1000", ["sidecar_malformed"]),
    ("0089", ["sidecar_malformed"]), ("-1", ["sidecar_malformed"]),
    ("+5", ["sidecar_malformed"]), ("5.0", ["sidecar_malformed"]),
    ("abc", ["sidecar_malformed"]), ("90 # high", ["sidecar_malformed"]),
    ("VERIFY_FAILED", ["sidecar_malformed"]), ('"90', ["sidecar_malformed"]),
    ("'\"90\"'", ["sidecar_malformed"]), ('" 90"', ["sidecar_malformed"]),
    ("", ["sidecar_malformed"]), ("[90]", ["sidecar_malformed"]),
])
def test_the_score_is_read_as_the_fan_in_reads_it(tmp_path: Path, raw: str,
                                                  expected: list[str]) -> None:
    assert _sidecar_causes(tmp_path, sidecar_md(raw)) == expected


@pytest.mark.parametrize("line", ["score:90", "  score: 90", "score : 90", "\tscore:\t90"])
def test_blanks_around_the_score_key_are_read_as_awk_reads_them(tmp_path: Path,
                                                                line: str) -> None:
    text = f"---\nverifier_status: passed\n{line}\n---\n\nProse.\n"
    assert _sidecar_causes(tmp_path, text) == []


@pytest.mark.parametrize("text", [
    "score: 90\nreason: plain lines, no fences\n",  # the apply-fix shape, in a .score.md
    "---\nverifier_status: passed\n---\nscore: 90\n",  # score only in the body
    "---\nverifier_status: passed\nScore: 90\n---\n",  # awk is case-sensitive
    "---\nverifier_status: passed\nscores: 90\n---\n",
    "---\nverified_score: 90\nverdict: keep\n---\n\nOlder experimental shape.\n",
    "---\nverdict: keep\nreason: the cite holds\n---\n",
    "",
])
def test_a_sidecar_the_fan_in_reads_no_score_from_is_malformed(tmp_path: Path,
                                                               text: str) -> None:
    assert _sidecar_causes(tmp_path, text) == ["sidecar_malformed"]


def test_the_first_score_line_of_the_frontmatter_is_the_score(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", None)], cleans=[S])
    put(d, f"{F1}.score.md", "---\nverifier_status: passed\nscore: 90\nscore: 10\n---\n")
    # the fan-in keeps it (90 >= 70), so this audit and kept list are right
    put(d, AUDIT, audit_json(1, 1, 0))
    put(d, KEPT, kept_txt(d, [f"{F1}.md"]))
    result = check(run.root)
    assert not {"fanin_audit_mismatch", "kept_findings_mismatch",
                "sidecar_malformed"} & set(causes(result))


def test_a_valid_score_without_verifier_status_is_accepted(tmp_path: Path) -> None:
    assert _sidecar_causes(tmp_path, sidecar_md(85, status=None)) == []
    assert _sidecar_causes(tmp_path / "2", "---\nscore: 85\n---\n") == []


@pytest.mark.parametrize("status", ["pass", "PASSED", "ok", "skipped", '""'])
def test_a_verifier_status_other_than_passed_or_failed_is_malformed(tmp_path: Path,
                                                                    status: str) -> None:
    assert _sidecar_causes(tmp_path, sidecar_md(90, status=status)) == ["sidecar_malformed"]


@pytest.mark.parametrize("extra", [
    "actual_model: claude-opus-4\n", "defect_class: wrong-cite\n",
    'reason: "HALLUCINATED: the cite: L10 does not exist"\n',
    "reason: HALLUCINATED: the cite: L10 does not exist\n",
    "verifier: qrspi-finding-verifier\n", "notes: [unclosed, yaml\n",
    "reason: {not: valid: yaml\n",
])
def test_other_keys_are_free_and_the_frontmatter_need_not_be_yaml(tmp_path: Path,
                                                                   extra: str) -> None:
    assert _sidecar_causes(tmp_path, sidecar_md(0, extra=extra)) == []


@pytest.mark.parametrize("body", [
    "score: abc\nverifier_status: bogus\n", "---\nscore: 500\n---\n", ": : [ {\n",
    "failure_reason:\n",
])
def test_a_sidecars_body_is_never_read(tmp_path: Path, body: str) -> None:
    assert _sidecar_causes(tmp_path, sidecar_md(75, body=body)) == []


def test_a_failed_sidecar_is_verify_failed_with_the_apply_fix_message(tmp_path: Path) -> None:
    failed = sidecar_md(None, status="failed", extra="failure_reason: the cite timed out\n")
    run = new_run(tmp_path / "fanin")
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", None),
                                       (Q, 2, "correctness", None)], cleans=[S])
    put(d, f"{Q}.finding-F01.score.md", failed)
    put(d, f"{Q}.finding-F02.score.md", failed)
    result = check(run.root)
    fanin_message = one(result, "verify_failed").message
    assert "sidecar_malformed" not in causes(result)
    run2 = new_run(tmp_path / "applyfix")
    d2 = run2.round_dir("design", 1)
    for n in (1, 2):
        put(d2, f"{Q}.finding-F0{n}.md", finding_text(Q, n))
        put(d2, f"{Q}.finding-F0{n}.score.yml", "score: VERIFY_FAILED\nreason: timed out\n")
    run2.clean("design", 1, S)
    applyfix = check(run2.root)
    assert applyfix.rounds[0].protocol == "apply-fix"
    assert fanin_message == one(applyfix, "verify_failed").message \
        == "Verifier returned VERIFY_FAILED for 2 findings"


@pytest.mark.parametrize("extra", ["", "failure_reason:\n", "failure_reason: '  '\n",
                                   "reason: timed out\n"])
def test_a_failed_sidecar_without_a_failure_reason_is_malformed(tmp_path: Path,
                                                                extra: str) -> None:
    got = _sidecar_causes(tmp_path, sidecar_md(None, status="failed", extra=extra))
    assert "sidecar_malformed" in got


# -- §2 sidecar names -----------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "fan-in", "apply-fix"])
def test_both_sidecar_suffixes_are_never_bad_finding_filename(tmp_path: Path,
                                                              protocol: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 90)], cleans=[S])
    put(d, f"{Q}.finding-F02.md", finding_text(Q, 2))
    put(d, f"{Q}.finding-F02.score.yml", "score: 90\nreason: the cite holds\n")
    result = check(run.root, protocol=protocol)
    assert "bad_finding_filename" not in causes(result)
    assert len(of(result, "sidecar_wrong_extension")) == 1


@pytest.mark.parametrize("suffix", [".score.json", ".score.txt", ".score.md.bak",
                                    ".score.yaml", ".score.MD"])
@pytest.mark.parametrize("protocol", ["fan-in", "apply-fix"])
def test_any_other_score_suffix_is_wrong_extension_and_counts_as_no_sidecar(
        tmp_path: Path, suffix: str, protocol: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", None)], cleans=[S])
    put(d, f"{F1}{suffix}", sidecar_md(90))
    put(d, f"{Q}.finding-F02.md", finding_text(Q, 2))
    right = ".score.md" if protocol == "fan-in" else ".score.yml"
    put(d, f"{Q}.finding-F02{right}", sidecar_md(90) if protocol == "fan-in"
        else "score: 90\nreason: the cite holds\n")
    result = check(run.root, protocol=protocol, require_sidecars=True)
    assert one(result, "sidecar_wrong_extension").file == f"{F1}{suffix}"
    assert "bad_finding_filename" not in causes(result)
    # one defect, one diagnostic (generations.md §2): its finding counts as having no
    # sidecar, which is said only where the wrong extension itself is not reported
    assert "sidecar_missing" not in causes(result)
    proc = run_main("check", "--format", "json", "--protocol", protocol, "--require-sidecars",
                    "--ignore", "sidecar_wrong_extension", str(run.root))
    missing = [d for d in json.loads(proc.stdout)["diagnostics"]
               if d["cause"] == "sidecar_missing"]
    assert [d["file"] for d in missing] == [f"{F1}.md"]


@pytest.mark.parametrize("name", [f"{Q}.R1-F01.score.md", f"{Q}.R1-F01.score.yml",
                                  f"{Q}.finding-F1.score.md", f"{Q}.F01.score.md"])
def test_a_score_name_that_is_not_a_finding_stem_is_bad_finding_filename(
        tmp_path: Path, name: str) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "correctness", 90)], cleans=[S])
    put(d, name, sidecar_md(90))
    result = check(run.root)
    assert one(result, "bad_finding_filename").file == name


# -- a well-formed marker waives verify_failed and sidecar_missing (§5, both generations)


MARKER_IMPLEMENT = "---\nreason: verifier unavailable\nround: 1\ncreated_by: implement\n---\n"


@pytest.mark.parametrize("where", ["inside", "beside"])
@pytest.mark.parametrize("gen", ["fan-in", "apply-fix"])
def test_a_marker_waives_verify_failed_and_sidecar_missing(tmp_path: Path, where: str,
                                                           gen: str) -> None:
    run = new_run(tmp_path)
    d = run.round_dir("design", 1)
    for n in (1, 2):
        put(d, f"{Q}.finding-F0{n}.md", finding_text(Q, n))
    if gen == "fan-in":
        put(d, f"{F1}.score.md", sidecar_md(None, status="failed",
                                            extra="failure_reason: timed out\n"))
        put(d, AUDIT, audit_json(2, 0, 0, [("R1-F01", "score_unparseable"),
                                           ("R1-F02", "missing_sidecar")]))
    else:
        put(d, f"{F1}.score.yml", "score: VERIFY_FAILED\nreason: timed out\n")
        run.write("reviews/design/round-01-verified.md",
                  "---\nscored: 0\nkept: 2\ndropped: 0\nfailed: 1\nclean: 1\n---\n")
    run.clean("design", 1, S)
    before = causes(check(run.root))
    assert "verify_failed" in before and "sidecar_missing" in before
    target = d if where == "inside" else d.parent
    put(target, "round-01-verifier-disabled.md", MARKER_IMPLEMENT)
    result = check(run.root)
    assert result.rounds[0].protocol == gen
    assert not {"verify_failed", "sidecar_missing", "verifier_marker_invalid",
                "unknown_file_in_round_dir"} & set(causes(result))


# -- the fast path under a narrowed contract (§1: the contract is one value) ----------


def test_a_narrowed_severity_enum_is_refused_by_the_fast_path_and_the_full_rules() -> None:
    contract = FindingContract(severities=("low", "high"))
    gen = replace(FAN_IN, contract=contract)
    name = "quality-claude.finding-F02.md"
    place = Place(f"reviews/design/round-03/{name}", "design", 3, gen=gen)
    fname = classify(name)
    medium = finding_text(Q, 2, round_no=3).replace("severity: high", "severity: medium")
    assert fast_report(fname, medium.encode(), place) is None
    full = judge_file(fname, medium.encode(), place)
    assert [d.cause for d in full.diagnostics] == ["severity_out_of_enum"]
    assert "low, high" in full.diagnostics[0].message
    # the default contract still takes medium on both paths, and the narrowed one high
    default = Place(place.path, "design", 3)
    assert fast_report(fname, medium.encode(), default) is not None
    assert judge_file(fname, medium.encode(), default).diagnostics == []
    high = finding_text(Q, 2, round_no=3).encode()
    assert fast_report(fname, high, place) is not None


def test_a_narrowed_change_type_enum_is_refused_by_both_paths() -> None:
    gen = replace(FAN_IN, contract=FindingContract(
        change_types=("style", "clarity", "correctness", "scope")))
    name = "quality-claude.finding-F02.md"
    place = Place(f"reviews/design/round-03/{name}", "design", 3, gen=gen)
    intent = finding_text(Q, 2, "intent", round_no=3).encode()
    assert fast_report(classify(name), intent, place) is None
    assert [d.cause for d in judge_file(classify(name), intent, place).diagnostics] == [
        "change_type_out_of_enum"]


def test_a_score_md_sidecar_without_its_finding_is_an_orphan(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [(Q, 1, "scope", 90)], cleans=[S])
    put(d, f"{Q}.finding-F07.score.md", sidecar_md(90))
    got = one(check(run.root), "orphan_sidecar")
    assert got.level == "warning" and got.file == f"{Q}.finding-F07.score.md"


def test_generations_and_recounts_are_the_same_with_forked_workers(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    for n in range(1, 15):
        _applyfix_round(run, "design", n)
    for n in range(1, 11):
        d = fanin_round(run, "goals", n, [(Q, 1, "correctness", 65 + n), (Q, 2, "scope", 0)],
                        cleans=[S])
        kept = [f"{F1}.md"] if 65 + n >= 70 else []
        put(d, AUDIT, audit_json(2, len(kept), 2 - len(kept)))
        put(d, KEPT, kept_txt(d, kept))
    for n in (1, 2):
        run.clean("plan", n, Q)
    docs = []
    for jobs in ("1", "2"):
        proc = run_main("check", "--format", "json", str(run.root),
                       env={"QRSPI_GUARD_JOBS": jobs})
        docs.append(json.loads(proc.stdout))
    assert docs[0] == docs[1]
    rounds = {(r["step"], r["round"]): r["protocol"] for r in docs[0]["rounds"]}
    assert rounds[("plan", 1)] == rounds[("plan", 2)] == "apply-fix"  # 14 against 10
    assert {r["protocol"] for r in docs[0]["rounds"] if r["step"] == "goals"} == {"fan-in"}
    assert not {"fanin_audit_mismatch", "kept_findings_mismatch"} & {
        x["cause"] for x in docs[0]["diagnostics"]}
