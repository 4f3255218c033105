"""`fan-in` on two of upstream's committed fan-in rounds (dfrysinger/qrspi-plus, MIT:
`docs/qrspi/2026-06-04-v073-release/reviews/design/round-04/` and `round-11/`, whose
audits upstream's `verifier-fan-in.sh` wrote). The frontmatter of every finding and
sidecar, the config and the committed audits and kept lists are transcribed; the prose
bodies are shortened (the fan-in never reads them), keeping each file's final newlines.

`--halt-on upstream` must write the committed audit's upstream keys and the same kept
list (by file name: the committed paths are from upstream's machine); `--halt-on all`
adds the guard's errors on those rounds.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.genkit import AUDIT, KEPT, put
from tests.support import run_main

RUN = "docs/qrspi/2026-06-04-v073-release"
CONFIG = ("---\ncreated: 2026-06-04\npipeline: full\nsecond_reviewer: true\nroute:\n"
          + "".join(f"  - {s}\n" for s in ("goals", "questions", "research", "design",
                                            "phasing", "structure", "plan", "parallelize",
                                            "implement", "integrate", "test"))
          + "verifier_enabled: true\nscope_tagger_enabled: true\n"
          "visual_fidelity_required: false\n---\n")
UPSTREAM_KEYS = ("scored", "kept", "dropped", "halts", "thresholds")


def committed(scored: int, kept: int, dropped: int) -> str:
    return (f'{{\n  "scored": {scored},\n  "kept": {kept},\n  "dropped": {dropped},\n'
            '  "halts": [],\n  "thresholds": {\n    "style": 80,\n    "clarity": 80,\n'
            '    "correctness": 70\n  }\n}\n')


def finding(fid: str, severity: str, change_type: str, refs: str, tag: str,
            end: str = "\n") -> str:
    return (f"---\nfinding_id: {fid}\nseverity: {severity}\nchange_type: {change_type}\n"
            f"referenced_files: {refs}\nartifact: design\nround: 4\nreviewer: {tag}\n---\n\n"
            f"Shortened body.{end}")


def sidecar(score: int, defect_class: str, model: bool = True, blank: bool = True) -> str:
    return ("---\nverifier_status: passed\n" f"score: {score}\n"
            + ("actual_model: unknown\n" if model else "")
            + f"defect_class: {defect_class}\n---\n" + ("\n" if blank else "")
            + "Shortened reasoning.\n")


def round_04(root: Path) -> Path:
    put(root / RUN, "config.md", CONFIG)
    d = root / RUN / "reviews" / "design" / "round-04"
    design = '["docs/qrspi/2026-06-04-v073-release/design.md"]'
    q, s = "quality-claude", "scope-codex"
    put(d, f"{q}.finding-F01.md", finding("R4-F01", "medium", "correctness", design, q, "\n\n"))
    put(d, f"{q}.finding-F01.score.md", sidecar(15, "fabricated-requirement", blank=False))
    put(d, f"{q}.finding-F02.md", finding(
        "R4-F02", "medium", "correctness",
        '["docs/qrspi/2026-06-04-v073-release/design.md:L279-L309"]', q, "\n\n"))
    put(d, f"{q}.finding-F02.score.md", sidecar(75, "malformed-fence"))
    put(d, f"{q}.finding-F03.md", finding("R4-F03", "low", "clarity", design, q))
    put(d, f"{q}.finding-F03.score.md", sidecar(20, "missing-section", blank=False))
    put(d, "quality-codex.clean.md", "---\nreviewer: quality-codex\nfindings: 0\n---\n")
    put(d, f"{s}.finding-F01.md", finding(
        "R4-F01", "medium", "scope", "[docs/qrspi/2026-06-04-v073-release/design.md:L9-L49, "
        "docs/qrspi/2026-06-04-v073-release/design.md:L130-L236]", s))
    put(d, f"{s}.finding-F01.score.md", sidecar(25, "altitude-mismatch"))
    put(d, f"{s}.finding-F02.md", finding(
        "R4-F02", "medium", "scope", "[docs/qrspi/2026-06-04-v073-release/design.md:L281-L385]",
        s))
    put(d, f"{s}.finding-F02.score.md", sidecar(25, "scope-boundary-drift", model=False))
    put(d, "round-04.diff", "")
    return d


def round_11(root: Path) -> Path:
    put(root / RUN, "config.md", CONFIG)
    d = root / RUN / "reviews" / "design" / "round-11"
    for tag, n, ct, score, model in (("quality-claude", 1, "correctness", 75, True),
                                     ("quality-claude", 2, "clarity", 72, False),
                                     ("quality-codex", 1, "correctness", 75, True)):
        put(d, f"{tag}.finding-F{n:02d}.md",
            f"---\nartifact: design\nreviewer_tag: {tag}\nfinding_id: {tag}-F{n:02d}\n"
            f"change_type: {ct}\n---\n\n# Shortened title\n\nShortened body.\n")
        put(d, f"{tag}.finding-F{n:02d}.score.md",
            f"---\nverifier_status: passed\nscore: {score}\n"
            + ("actual_model: unknown\n" if model else "")
            + "defect_class: internal-inconsistency\n---\n\nShortened reasoning.\n")
    put(d, "scope-claude.clean.md", "# scope-claude round-11\n\nClean.\n")
    put(d, "scope-codex.clean.md", "# scope-codex round-11\n\nNo scope findings. Clean.\n")
    put(d, "round-11.diff", "")
    return d


def _fan_in(d: Path, mode: str) -> tuple[int, dict[str, object], list[str] | None]:
    proc = run_main("fan-in", "--halt-on", mode, str(d))
    assert b"Traceback" not in proc.stderr
    doc = json.loads((d / AUDIT).read_text())
    names = (sorted(Path(p).name for p in (d / KEPT).read_text().splitlines())
             if (d / KEPT).exists() else None)
    return proc.returncode, doc, names


def test_round_04_upstream_mode_writes_the_committed_audit_and_kept_list(
        tmp_path: Path) -> None:
    d = round_04(tmp_path)
    code, doc, names = _fan_in(d, "upstream")
    want = json.loads(committed(5, 3, 2))
    assert code == 0
    assert {k: doc[k] for k in UPSTREAM_KEYS} == want
    assert names == ["quality-claude.finding-F02.md", "scope-codex.finding-F01.md",
                     "scope-codex.finding-F02.md"]
    # what the guard adds there: scope-claude, dispatched, wrote no output
    assert doc["guard_errors"] == [{"finding_id": "scope-claude",  # type: ignore[comparison-overlap]
                                    "cause": "expected_tag_no_output",
                                    "message": "Reviewer scope-claude wrote no per-finding files"}]


def test_round_04_halts_under_the_contract_on_the_silent_reviewer_only(tmp_path: Path) -> None:
    d = round_04(tmp_path)
    code, doc, names = _fan_in(d, "all")
    assert code == 1 and names is None
    assert doc["halts"] == [{"finding_id": "scope-claude", "cause": "expected_tag_no_output"}]
    assert (doc["scored"], doc["kept"], doc["dropped"]) == (5, 3, 2)


def test_round_04_with_the_committed_outputs_in_place_rebuilds_them(tmp_path: Path) -> None:
    d = round_04(tmp_path)
    put(d, AUDIT, committed(5, 3, 2))
    put(d, KEPT, "/Users/dfrysinger/code/qrspi-plus-v0.7.2/x/quality-claude.finding-F02.md\n")
    code, doc, _ = _fan_in(d, "upstream")
    assert code == 0 and {k: doc[k] for k in UPSTREAM_KEYS} == json.loads(committed(5, 3, 2))


def test_round_11_upstream_mode_writes_the_committed_audit_and_kept_list(
        tmp_path: Path) -> None:
    d = round_11(tmp_path)
    code, doc, names = _fan_in(d, "upstream")
    assert code == 0
    assert {k: doc[k] for k in UPSTREAM_KEYS} == json.loads(committed(3, 2, 1))
    assert names == ["quality-claude.finding-F01.md", "quality-codex.finding-F01.md"]
    causes = {e["cause"] for e in doc["guard_errors"]}  # type: ignore[attr-defined]
    # an older reviewer emission: no severity, reviewer, round or referenced_files,
    # finding_id `quality-claude-F01`, clean files without frontmatter (the unknown key
    # `reviewer_tag` is a warning: not listed)
    assert {"finding_id_malformed", "missing_severity", "missing_reviewer",
            "missing_round", "no_frontmatter"} <= causes


def test_round_11_halts_under_the_contract_with_every_guard_error(tmp_path: Path) -> None:
    d = round_11(tmp_path)
    code, doc, names = _fan_in(d, "all")
    assert code == 1 and names is None
    upstream, _ = _fan_in(d, "upstream")[1], None
    guard = [{"finding_id": e["finding_id"], "cause": e["cause"]}
             for e in upstream["guard_errors"]]  # type: ignore[attr-defined]
    assert doc["halts"] == guard
