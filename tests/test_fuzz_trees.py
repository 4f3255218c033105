"""Issue 12's fuzz suite: random round trees through ``check``, in-process.

Hypothesis builds artifact directories with random names (valid, near-valid, hostile,
not UTF-8), random bytes and shapes (mutated findings and sidecars, huge numbers, deep
nesting, verifier outputs, manifests, bookkeeping files), special files (FIFOs,
symbolic links, directories named like files) and nesting. For every tree: no
exception escapes, every diagnostic is a catalogue cause with one safe line, the result
is byte-identical with the fast path on and off, and the run ends (a generous bound per
file catches a hang; speed itself is measured in benchmarks/).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine import check_paths
from qrspi_guard.output import ReportOptions
from qrspi_guard.output.json_format import document
from qrspi_guard.parse import frontmatter as fm

BIG = "9" * 5000
FINDING = ("---\nfinding_id: R{r}-F{n}\nseverity: {sev}\nchange_type: {ct}\n"
           "referenced_files: [{ref}]\nartifact: {art}\nround: {r}\nreviewer: {tag}\n"
           "actual_model: unknown\n---\n\n{body}\n")
VALUES = {
    "r": ["1", "01", "2", "0", BIG, "x", "'1'"],
    "n": ["01", "02", "1", BIG, "F"],
    "sev": ["high", "medium", "low", "0777" + "7" * 4990, "[a]", ""],
    "ct": ["correctness", "style", "scope", "intent", "clarity", "corectness", '"style"',
           "style # why"],
    "ref": ["design.md:L1-L2", "feedback/x.md", "../x", "a b", ""],
    "art": ["design", "goals", "task-01", "no"],
    "tag": ["quality-claude", "spec-gpt55", "scope-codex", "Q"],
    "body": ["The design contradicts goal G2.", "", "finding_id: R1-F02",
             "<<<FINDING-BOUNDARY>>>", "::error file=x::pwned \x1b[31m\u202e"],
}
SIDECAR_MD = ("---\nverifier_status: {st}\nscore: {score}\nactual_model: unknown\n"
              "defect_class: x\n---\nprose\n")
SIDECAR_YML = "score: {score}\nreason: {reason}\n"
SCORES = ["0", "70", "089", "100", "101", "-1", BIG, "VERIFY_FAILED", '"80"', ""]

TAGS = ["quality-claude", "scope-claude", "quality-codex", "spec-gpt55", "bad_tag",
        "visual-fidelity-claude"]
NAME_SUFFIXES = [".finding-F01.md", ".finding-F02.md", ".finding-F01.score.md",
                 ".finding-F01.score.yml", ".finding-F01.score.json", ".clean.md",
                 ".NO_FINDINGS", ".finding-F2.md", ".R1-F01.score.md",
                 ".finding-F" + "9" * 30 + ".md", ".skipped.md", ".bypass-attempt-01.md"]
ODD_NAMES = ["kept-findings.txt", ".verifier-fan-in-audit.json", ".dispatch-manifest.json",
             "round-01.diff", "round-01-verifier-disabled.md", "notes.md", "::error x",
             ".hidden", "é.finding-F01.md", "apply-fix-log.md",
             ".qrspi-split.0123456789ab.new.quality-codex.finding-F01.md"]
STEPS = ["goals", "design", "plan", "integration", "tasks/task-01", "integration-wave-2",
         "telemetry", "research"]
ROUNDS = ["round-01", "round-02", "round-1", "round-05-fanout", "round-" + "9" * 40]
JSONS = ['{"scored": 1, "kept": 1, "dropped": 0, "halts": []}', '{"scored": ' + BIG + '}',
         "[" * 10000 + "]" * 10000, '[{"tag": "spec-gpt55"}]', "{}", "not json", ""]
SIDE_SUFFIXES = ["-verified.md", "-commit.txt", "-scope-set.txt", "-verifier-disabled.md",
                 "-results.md", "-claude.md"]
SIDE_TEXT = ["---\nscored: 1\nkept: 1\ndropped: 0\nfailed: 0\nclean: 1\n---\n",
             "a" * 40 + "\n", "3592b07\n", "HEAD\n", "# c\n## Tags\n  padded\n", "\n\n",
             "---\nreason: r\nround: 1\ncreated_by: u\n---\n", ""]

text_of = st.one_of(
    st.builds(lambda d: FINDING.format(**d), st.fixed_dictionaries(
        {k: st.sampled_from(v) for k, v in VALUES.items()})),
    st.builds(lambda s, c: SIDECAR_MD.format(st=s, score=c),
              st.sampled_from(["passed", "failed", "maybe"]), st.sampled_from(SCORES)),
    st.builds(lambda c, r: SIDECAR_YML.format(score=c, reason=r), st.sampled_from(SCORES),
              st.sampled_from(["fine", "a: b", ""])),
    st.sampled_from(JSONS + SIDE_TEXT + ["---\nreviewer: quality-claude\nfindings: 0\n---\n",
                                         "---\nskip_reason: path_filtered\n---\n"]),
)
content = st.one_of(text_of.map(str.encode), st.binary(max_size=300),
                    text_of.map(lambda t: t.replace("\n", "\r\n").encode()),
                    st.just(b"\xef\xbb\xbf---\n---\n"), st.just(b"\xff\xfe\x00"))
name = st.one_of(st.builds(lambda t, s: t + s, st.sampled_from(TAGS),
                           st.sampled_from(NAME_SUFFIXES)),
                 st.sampled_from(ODD_NAMES),
                 st.binary(min_size=1, max_size=12).map(os.fsdecode).filter(
                     lambda n: "/" not in n and "\x00" not in n and n not in (".", "..")))
entry = st.tuples(name, st.one_of(content, st.sampled_from(["FIFO", "LINK", "DIR"])))
round_tree = st.tuples(st.sampled_from(STEPS), st.sampled_from(ROUNDS),
                       st.lists(entry, max_size=8),
                       st.lists(st.tuples(st.sampled_from(SIDE_SUFFIXES),
                                          st.sampled_from(SIDE_TEXT)), max_size=3))
tree = st.tuples(st.one_of(st.sampled_from(["second_reviewer: true\nverifier_enabled: true\n",
                                             "codex_reviews: " + BIG + "\n", "route: [x\n"]),
                           st.sampled_from(["FIFO", "NONE"])),
                 st.lists(round_tree, min_size=1, max_size=4))


def _make(root: Path, spec: tuple[Any, list[Any]]) -> int:
    config, rounds = spec
    root.mkdir()
    if config == "FIFO":
        os.mkfifo(root / "config.md")
    elif config != "NONE":
        (root / "config.md").write_text(f"---\n{config}---\n")
    files = 0
    for step, rnd, entries, sides in rounds:
        d = root / "reviews" / step / rnd
        d.mkdir(parents=True, exist_ok=True)
        for suffix, text in sides:
            (d.parent / f"round-01{suffix}").write_text(text)
        for entry_name, data in entries:
            p = d / entry_name
            if p.exists() or p.is_symlink():
                continue
            files += 1
            if data == "FIFO":
                os.mkfifo(p)
            elif data == "LINK":
                p.symlink_to("/etc/hostname")
            elif data == "DIR":
                p.mkdir()
            else:
                p.write_bytes(data)
    return files


def _judge(path: Path) -> str:
    result = check_paths([str(path)], Overrides())
    return json.dumps(document(result, ReportOptions()), sort_keys=True)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(spec=tree)
def test_random_round_trees_never_raise_and_read_the_same_fast_or_slow(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: tuple[Any, list[Any]]) -> None:
    root = tmp_path / "art"
    shutil.rmtree(root, ignore_errors=True)
    files = _make(root, spec)
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "1")
    start = time.monotonic()
    monkeypatch.setattr(fm, "FASTPATH", True)
    fast = _judge(root)
    monkeypatch.setattr(fm, "FASTPATH", False)
    slow = _judge(root)
    # a hang detector, not a speed target (benchmarks/ measures speed)
    assert time.monotonic() - start < 30 + 2 * files
    assert fast == slow
    for d in json.loads(fast)["diagnostics"]:
        assert d["cause"] in CATALOGUE
        for text in (d["message"], d.get("value", "")):
            assert "\n" not in text and "\r" not in text and "\x1b" not in text
