"""The split core: the input grammar, numbering, validation, the mixing rule, and the
all-or-nothing writer (split.md). Every row of split.md's tables has a case here;
the end-to-end cases are in test_split_cli.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qrspi_guard.discover import RoundRef, round_of_dir
from qrspi_guard.split import (
    EXIT_OK,
    EXIT_REFUSED,
    InputKind,
    Write,
    clean_sentinel,
    earlier_output,
    finding_name,
    parse_stdout,
    plan_split,
)
from qrspi_guard.splitio import SplitIOError, execute

B = b"<<<FINDING-BOUNDARY>>>"
TAG = "quality-codex"


def finding(n: int, tag: str = TAG, rnd: int = 3, body: str = "The message.",
            **fields: str) -> bytes:
    values = {"finding_id": f"R{rnd}-F{n:02d}", "severity": "medium",
              "change_type": "correctness", "referenced_files": "[design.md:L1-L2]",
              "artifact": "design", "round": str(rnd), "reviewer": tag}
    values.update(fields)
    front = "".join(f"{k}: {v}\n" for k, v in values.items() if v is not None)
    return f"---\n{front}---\n\n{body}\n".encode()


def stdout_of(*blocks: bytes, preamble: bytes = b"") -> bytes:
    return preamble + b"".join(B + b"\n" + block for block in blocks)


def ref(root: Path, step: str = "design", rnd: str = "round-03") -> RoundRef:
    path = root / "reviews" / step / rnd
    path.mkdir(parents=True, exist_ok=True)
    got = round_of_dir(str(path))
    assert got is not None
    return got


def causes(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.cause for d in plan.diagnostics]


# -- the input grammar --------------------------------------------------------------

GRAMMAR = [
    # (id, stdout, kind, number of blocks)
    ("sentinel-bare", b"NO_FINDINGS", InputKind.NO_FINDINGS, 0),
    ("sentinel-lf", b"NO_FINDINGS\n", InputKind.NO_FINDINGS, 0),
    ("sentinel-two-lf-is-not", b"NO_FINDINGS\n\n", InputKind.NO_BOUNDARY, 0),
    ("sentinel-trailing-space-is-not", b"NO_FINDINGS ", InputKind.NO_BOUNDARY, 0),
    ("sentinel-crlf-is-not", b"NO_FINDINGS\r\n", InputKind.NO_BOUNDARY, 0),
    ("sentinel-leading-space-is-not", b" NO_FINDINGS", InputKind.NO_BOUNDARY, 0),
    ("empty", b"", InputKind.EMPTY, 0),
    ("lone-newline", b"\n", InputKind.EMPTY, 0),
    ("blank-lines-only", b"\n\n  \n", InputKind.NO_BOUNDARY, 0),
    ("prose-no-boundary", b"I found nothing worth reporting.\n", InputKind.NO_BOUNDARY, 0),
    ("indented-boundary", b" " + B + b"\n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("tab-indented-boundary", b"\t" + B + b"\n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("crlf-boundary", B + b"\r\n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("boundary-trailing-space", B + b" \n" + finding(1), InputKind.NO_BOUNDARY, 0),
    ("one-finding", stdout_of(finding(1)), InputKind.FINDINGS, 1),
    ("boundary-no-final-newline", B + b"\n" + finding(1).rstrip(b"\n"),
     InputKind.FINDINGS, 1),
    ("last-line-is-boundary-without-lf", finding(1) + B, InputKind.FINDINGS, 0),
    ("two-findings-with-preamble", stdout_of(finding(1), finding(2), preamble=b"Hi.\n"),
     InputKind.FINDINGS, 2),
    ("boundary-then-nothing", B + b"\n", InputKind.FINDINGS, 0),
    ("boundary-then-blank-lines", B + b"\n\n \t\n\n", InputKind.FINDINGS, 0),
    ("blank-block-between", stdout_of(finding(1), b"\n\n", finding(2)), InputKind.FINDINGS, 2),
    ("trailing-empty-boundary", stdout_of(finding(1), b""), InputKind.FINDINGS, 1),
    ("sentinel-with-boundaries-is-preamble", b"NO_FINDINGS\n" + stdout_of(finding(1)),
     InputKind.FINDINGS, 1),
]


@pytest.mark.parametrize("data,kind,blocks", [r[1:] for r in GRAMMAR],
                         ids=[r[0] for r in GRAMMAR])
def test_grammar_classifies_stdout(data: bytes, kind: InputKind, blocks: int) -> None:
    parsed = parse_stdout(data)
    assert parsed.kind is kind
    assert len(parsed.blocks) == blocks


def test_near_miss_boundary_is_named_in_the_hint() -> None:
    assert "indented" in (parse_stdout(b"  " + B + b"\nx\n").hint or "")
    assert "CR" in (parse_stdout(B + b"\r\nx\n").hint or "")
    assert "byte-exact" in (parse_stdout(b"NO_FINDINGS\r\n").hint or "")


def test_preamble_is_dropped_and_blocks_keep_their_bytes() -> None:
    parsed = parse_stdout(stdout_of(finding(1), preamble=b"Reviewing...\nsecond line\n"))
    assert parsed.blocks == (finding(1),)


BLOCK_SHAPES = [
    ("leading-blank-lines", b"\n\n  \n" + finding(1), finding(1)),
    ("trailing-blank-lines", finding(1) + b"\n\n \t\n", finding(1)),
    ("both", b"\n" + finding(1) + b"\n\n", finding(1)),
    ("no-final-newline", finding(1).rstrip(b"\n"), finding(1)),
    ("inner-blank-lines-kept", b"---\na: 1\n---\n\n\npara\n\n\npara2\n",
     b"---\na: 1\n---\n\n\npara\n\n\npara2\n"),
    ("trailing-spaces-on-text-kept", b"text  \n\n", b"text  \n"),
    ("lone-cr-line-is-not-blank", b"\r\ntext\n", b"\r\ntext\n"),
]


@pytest.mark.parametrize("block,expected", [r[1:] for r in BLOCK_SHAPES],
                         ids=[r[0] for r in BLOCK_SHAPES])
def test_block_is_stripped_of_blank_lines_and_ends_in_one_newline(block: bytes,
                                                                  expected: bytes) -> None:
    (got,) = parse_stdout(B + b"\n" + block).blocks
    assert got == expected
    assert got.endswith(b"\n") and not got.endswith(b"\n\n")


# -- split.md table 1: the behaviour the reference has ------------------------------


def test_findings_are_numbered_in_order_zero_padded(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(stdout_of(finding(1), finding(2)), r, TAG, [])
    assert plan.exit_code == EXIT_OK, plan.diagnostics
    assert [w.name for w in plan.writes] == ["quality-codex.finding-F01.md",
                                             "quality-codex.finding-F02.md"]
    assert [w.data for w in plan.writes] == [finding(1), finding(2)]


def test_f100_follows_f99(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(stdout_of(*(finding(n) for n in range(1, 151))), r, TAG, [])
    assert plan.exit_code == EXIT_OK, plan.diagnostics[:3]
    names = [w.name for w in plan.writes]
    assert names[98:101] == [finding_name(TAG, 99), "quality-codex.finding-F100.md",
                             "quality-codex.finding-F101.md"]
    assert len(names) == 150 and names[0] == "quality-codex.finding-F01.md"


def test_no_findings_sentinel_plans_the_reference_clean_file(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(b"NO_FINDINGS\n", r, TAG, [])
    assert plan.exit_code == EXIT_OK and plan.diagnostics == []
    assert plan.writes == [Write("quality-codex.clean.md",
                                 b"---\nreviewer: quality-codex\nround: 03\nfindings: 0\n---\n")]


def test_clean_sentinel_spells_the_round_as_the_directory(tmp_path: Path) -> None:
    assert clean_sentinel("a-claude", "110") == b"---\nreviewer: a-claude\nround: 110\n" \
                                                 b"findings: 0\n---\n"
    plan = plan_split(b"NO_FINDINGS", ref(tmp_path, rnd="round-110"), TAG, [])
    assert b"round: 110\n" in plan.writes[0].data and plan.exit_code == EXIT_OK


MALFORMED = [
    ("empty", b"", "empty"),
    ("lone-newline", b"\n", "empty"),
    ("no-boundary-no-sentinel", b"All good, nothing to report.\n", "no <<<FINDING-BOUNDARY>>>"),
    ("crlf-boundaries", stdout_of(finding(1)).replace(b"\n", b"\r\n"),
     "no <<<FINDING-BOUNDARY>>>"),
    ("only-blank-blocks", B + b"\n\n" + B + b"\n", "every block is blank"),
]


@pytest.mark.parametrize("data,said", [r[1:] for r in MALFORMED], ids=[r[0] for r in MALFORMED])
def test_malformed_stdout_exits_1_and_writes_nothing(tmp_path: Path, data: bytes,
                                                     said: str) -> None:
    plan = plan_split(data, ref(tmp_path), TAG, [])
    assert plan.exit_code == EXIT_REFUSED
    assert plan.writes == [] and plan.removals == []
    assert len(plan.problems) == 1 and said in plan.problems[0]


# -- split.md table 2: what split adds ----------------------------------------------


def test_a_blank_block_burns_no_number(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1), b"\n \n", finding(2)), ref(tmp_path), TAG, [])
    assert [w.name for w in plan.writes] == [finding_name(TAG, 1), finding_name(TAG, 2)]
    assert plan.exit_code == EXIT_OK


VALIDATION = [
    # (id, block, the cause the block must raise)
    ("impersonation", finding(1, reviewer="scope-codex"), "reviewer_tag_mismatch"),
    ("claude-posing", finding(1, reviewer="quality-claude"), "reviewer_tag_mismatch"),
    ("round-field-differs", finding(1, round="4"), "round_mismatch"),
    ("finding-id-round-differs", finding(1, finding_id="R2-F01"), "round_mismatch"),
    ("severity-enum", finding(1, severity="critical"), "severity_out_of_enum"),
    ("change-type-enum", finding(1, change_type="bug"), "change_type_out_of_enum"),
    ("category-not-alias", finding(1, change_type=None, category="style"), "missing_change_type"),
    ("missing-reviewer", finding(1, reviewer=None), "missing_reviewer"),
    ("missing-message", finding(1, body=""), "missing_message"),
    ("no-frontmatter", b"Just prose, no fences.\n", "no_frontmatter"),
    ("bad-yaml", b"---\nseverity: [unclosed\n---\nbody\n", "malformed_yaml"),
    ("crlf-content", finding(1).replace(b"\n", b"\r\n"), "crlf_line_endings"),
    ("combined", finding(1) + b"finding_id: R3-F02\n", "combined_findings"),
]


@pytest.mark.parametrize("block,cause", [r[1:] for r in VALIDATION], ids=[r[0] for r in VALIDATION])
def test_a_failing_block_is_written_by_default_and_exits_1(tmp_path: Path, block: bytes,
                                                           cause: str) -> None:
    plan = plan_split(stdout_of(finding(1), block), ref(tmp_path), TAG, [])
    assert cause in causes(plan)
    assert all(d.file == finding_name(TAG, 2) for d in plan.errors)
    assert plan.exit_code == EXIT_REFUSED
    assert [w.name for w in plan.writes] == [finding_name(TAG, 1), finding_name(TAG, 2)]


@pytest.mark.parametrize("block,cause", [r[1:] for r in VALIDATION], ids=[r[0] for r in VALIDATION])
def test_reject_invalid_plans_no_write_at_all(tmp_path: Path, block: bytes, cause: str) -> None:
    plan = plan_split(stdout_of(finding(1), block), ref(tmp_path), TAG, [], reject_invalid=True)
    assert cause in causes(plan)
    assert plan.exit_code == EXIT_REFUSED and plan.writes == []


def test_duplicate_ids_within_the_new_attempt_are_caught(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1), finding(1)), ref(tmp_path), TAG, [])
    assert "duplicate_finding_id" in causes(plan) and plan.exit_code == EXIT_REFUSED


def test_warnings_are_reported_but_do_not_fail(tmp_path: Path) -> None:
    plan = plan_split(stdout_of(finding(1, artifact="plan")), ref(tmp_path), TAG, [])
    assert causes(plan) == ["artifact_step_mismatch"]
    assert plan.exit_code == EXIT_OK and len(plan.writes) == 1


def test_validation_uses_the_directory_round_and_the_task_place(tmp_path: Path) -> None:
    r = ref(tmp_path / "x", step="tasks/task-07", rnd="round-02")
    assert r.is_task and r.round == 2
    plan = plan_split(stdout_of(finding(1, rnd=2, artifact="task-07")), r, TAG, [])
    assert plan.diagnostics == [] and plan.exit_code == EXIT_OK


MIXING = [
    # (id, existing names, mixes)
    ("finding", ["quality-codex.finding-F01.md"], True),
    ("clean", ["quality-codex.clean.md"], True),
    ("sidecar-alone", ["quality-codex.finding-F03.score.yml"], True),
    ("other-tag", ["quality-claude.finding-F01.md", "scope-codex.clean.md"], False),
    ("hidden-temp", [".quality-codex.split-abc.tmp"], False),
    ("orchestrator", ["round-03-verifier-disabled.md"], False),
]


@pytest.mark.parametrize("names,mixes", [r[1:] for r in MIXING], ids=[r[0] for r in MIXING])
@pytest.mark.parametrize("stdout", [b"NO_FINDINGS\n", stdout_of(finding(1))],
                         ids=["sentinel", "findings"])
def test_earlier_output_of_the_tag_refuses_without_replace(tmp_path: Path, names: list[str],
                                                           mixes: bool, stdout: bytes) -> None:
    plan = plan_split(stdout, ref(tmp_path), TAG, names)
    assert ("split_would_mix_attempts" in causes(plan)) is mixes
    if mixes:
        assert plan.exit_code == EXIT_REFUSED and plan.writes == [] and plan.removals == []
    else:
        assert plan.exit_code == EXIT_OK and plan.writes and plan.removals == []


def test_replace_plans_removal_of_findings_sidecars_and_clean(tmp_path: Path) -> None:
    names = ["quality-codex.finding-F01.md", "quality-codex.finding-F01.score.yml",
             "quality-codex.finding-F07.md", "quality-codex.clean.md",
             "quality-claude.finding-F01.md"]
    plan = plan_split(stdout_of(finding(1)), ref(tmp_path), TAG, names, replace=True)
    assert plan.exit_code == EXIT_OK
    assert plan.removals == sorted(names[:4])
    assert earlier_output(TAG, names) == sorted(names[:4])


# -- all or nothing -----------------------------------------------------------------


def listing(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def stale_round(tmp_path: Path) -> tuple[RoundRef, Path]:
    r = ref(tmp_path)
    d = Path(r.round_dir)
    (d / "quality-codex.finding-F01.md").write_bytes(finding(1, body="Old attempt."))
    (d / "quality-codex.finding-F01.score.yml").write_bytes(b"score: 90\nreason: ok\n")
    (d / "quality-codex.finding-F02.md").write_bytes(finding(2, body="Old attempt."))
    (d / "scope-codex.clean.md").write_bytes(b"---\nreviewer: scope-codex\nround: 3\n"
                                             b"findings: 0\n---\n")
    return r, d


def test_execute_writes_every_file_and_leaves_no_temp(tmp_path: Path) -> None:
    r = ref(tmp_path)
    plan = plan_split(stdout_of(finding(1), finding(2)), r, TAG, os.listdir(r.round_dir))
    assert execute(plan) == []
    assert listing(Path(r.round_dir)) == {w.name: w.data for w in plan.writes}
    assert all(oct(os.stat(Path(r.round_dir) / w.name).st_mode & 0o777) == "0o644"
               for w in plan.writes)


def test_replace_swaps_the_stale_attempt_in_one_step(tmp_path: Path) -> None:
    r, d = stale_round(tmp_path)
    plan = plan_split(b"NO_FINDINGS", r, TAG, os.listdir(d), replace=True)
    execute(plan)
    assert sorted(listing(d)) == ["quality-codex.clean.md", "scope-codex.clean.md"]


FAULTS = [("write", finding_name(TAG, 1)), ("write", finding_name(TAG, 3)),
          ("aside", "quality-codex.finding-F01.score.yml"),
          ("aside", "quality-codex.finding-F02.md"),
          ("rename", finding_name(TAG, 1)), ("rename", finding_name(TAG, 2)),
          ("rename", finding_name(TAG, 3)), ("sync", "")]


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), RuntimeError("boom")],
                         ids=["enospc", "exception"])
@pytest.mark.parametrize("at", FAULTS, ids=[f"{s}-{n or 'dir'}" for s, n in FAULTS])
def test_a_failure_at_any_step_leaves_the_directory_exactly_as_it_was(
        tmp_path: Path, at: tuple[str, str], exc: Exception) -> None:
    r, d = stale_round(tmp_path)
    before = listing(d)
    plan = plan_split(stdout_of(finding(1), finding(2), finding(3)), r, TAG, os.listdir(d),
                      replace=True)

    def fault(step: str, name: str) -> None:
        if (step, name) == at:
            raise exc

    with pytest.raises(SplitIOError) as info:
        execute(plan, fault)
    assert info.value.restored and "nothing was changed" in str(info.value)
    assert listing(d) == before


def test_an_interrupt_mid_rename_is_undone_and_propagates(tmp_path: Path) -> None:
    r, d = stale_round(tmp_path)
    before = listing(d)
    plan = plan_split(stdout_of(finding(1), finding(2)), r, TAG, os.listdir(d), replace=True)

    def fault(step: str, name: str) -> None:
        if step == "rename" and name == finding_name(TAG, 2):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        execute(plan, fault)
    assert listing(d) == before


def test_a_real_os_failure_mid_rename_is_undone(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    r, d = stale_round(tmp_path)
    before = listing(d)
    plan = plan_split(stdout_of(finding(1), finding(2)), r, TAG, os.listdir(d), replace=True)
    real = os.replace
    calls = []

    def flaky(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(SplitIOError, match="Input/output error"):
        execute(plan)
    assert listing(d) == before


def test_replace_refuses_to_remove_a_directory_named_like_output(tmp_path: Path) -> None:
    r, d = stale_round(tmp_path)
    (d / "quality-codex.finding-F09.md").mkdir()
    before = sorted(os.listdir(d))
    plan = plan_split(stdout_of(finding(1)), r, TAG, os.listdir(d), replace=True)
    with pytest.raises(SplitIOError, match="is a directory"):
        execute(plan)
    assert sorted(os.listdir(d)) == before


def test_sigterm_turned_exit_mid_write_is_undone_and_propagates(tmp_path: Path) -> None:
    r, d = stale_round(tmp_path)
    before = listing(d)
    plan = plan_split(stdout_of(finding(1), finding(2)), r, TAG, os.listdir(d), replace=True)

    def fault(step: str, name: str) -> None:
        if step == "write" and name == finding_name(TAG, 2):
            raise SystemExit(143)  # what the CLI's SIGTERM handler raises

    with pytest.raises(SystemExit):
        execute(plan, fault)
    assert listing(d) == before
