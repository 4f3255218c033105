"""generations.md §3 against the real `verifier-fan-in.sh`: a differential test.

Runs only where a saved reference copy of the script exists (it is reference material
and is never committed, so CI skips these): random fan-in rounds are run through the
script, and `check` must accept the audit and kept list it writes, and notice a total
tampered with afterwards.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.genkit import AUDIT, KEPT, audit_json, check, fanin_round, finding_text, new_run, put

Q = "quality-claude"
S = "scope-claude"
MISMATCH = {"fanin_audit_mismatch", "kept_findings_mismatch", "fanin_audit_malformed"}


def name(tag: str, n: int) -> str:
    return f"{tag}.finding-F{n:02d}.md"


# -- differential: the real verifier-fan-in.sh (local reference copy only) ------------

SCRIPT = Path("/work/scratch/upstream/scripts/verifier-fan-in.sh")
needs_script = pytest.mark.skipif(
    not SCRIPT.is_file() or not all(shutil.which(t) for t in ("bash", "jq", "awk")),
    reason="the reference verifier-fan-in.sh (never committed) or bash/jq/awk is absent")

CT_LINES = [
    "change_type: style", "change_type: clarity", "change_type: correctness",
    "change_type: scope", "change_type: intent", "", "change_type: corectness",
    'change_type: "style"', "change_type: 'scope'", "change_type: style # c",
    "  change_type: correctness", "change_type:", "change_type : clarity",
    "category: style", "change_type: Style", 'change_type: ""', "change_type: scope\r",
]
SCORES = ["0", "1", "50", "69", "70", "79", "80", "100", "089", "007", "101", "1000", "abc",
          '"90"', "'75'", "", "90 # x", "+5", " 80", "-0", "1e2"]


def _sidecar(rng: random.Random) -> str:
    s = rng.choice(SCORES)
    return rng.choice([
        f"---\nverifier_status: passed\nscore: {s}\ndefect_class: x\n---\n\nProse score: 5\n",
        f"---\nscore: {s}\n---\n",
        "---\nverifier_status: failed\nfailure_reason: timed out\n---\n",
        f"---\nverifier_status: failed\nfailure_reason: x\nscore: {s}\n---\n",
        f"score: {s}\nreason: r\n",
        f"---\nverified_score: {s}\nverdict: keep\n---\n",
        f"---\nverifier_status: weird\nscore: {s}\n---\n",
        f"---\nscore: {s}\nscore: 10\n---\n",
        f"preamble\n---\nscore: {s}\n---\n",
        f'---\nreason: "a: b"\nscore: {s}\n---\nbody\n',
        f"---\nverifier_status: passed\n  score:{s}\n---\n",
    ])


def _random_round(rng: random.Random, d: Path, bad_names: bool) -> None:
    for tag in rng.sample([Q, S, "quality-codex"], rng.randint(0, 3)):
        count = rng.randint(0, 4)
        if count == 0:
            put(d, f"{tag}.clean.md", f"---\nreviewer: {tag}\nround: 1\nfindings: 0\n---\n")
        for n in range(1, count + 1):
            stem = f"{tag}.finding-F{n:02d}"
            if bad_names:
                stem = rng.choice([f"{tag}.finding-F{n}", f"Q{stem}", f"{tag}.finding-Fx{n}",
                                   stem])
            text = finding_text(tag, n, change_type_line=rng.choice(CT_LINES))
            shape = rng.random()
            if shape < 0.04:
                text = "\ufeff" + text  # awk sees no fence on the BOM line
            elif shape < 0.08:
                text = text.replace("\n", "\r\n")
            elif shape < 0.12:
                text = "Preamble before the fence.\n" + text
            elif shape < 0.15:
                text = text.replace("---\n", "", 1)  # no opening fence
            put(d, f"{stem}.md", text)
            k = rng.random()
            if k < 0.75:
                put(d, f"{stem}.score.md", _sidecar(rng))
            elif k < 0.82:
                put(d, f"{stem}.score.yml", "score: 90\nreason: r\n")
            elif k < 0.86:
                put(d, f"{stem}.score.md", _sidecar(rng))
                put(d, f"{stem}.score.yml", "score: 90\nreason: r\n")
            elif k < 0.89:
                put(d, f"{stem}.score.txt", "score: 90\n")


def _run_script(d: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, LC_ALL="C")
    return subprocess.run(["bash", str(SCRIPT), str(d)], capture_output=True, env=env,
                          timeout=120)


def _differential(tmp_path: Path, seeds: range, bad_names: bool) -> list[str]:
    problems = []
    for seed in seeds:
        rng = random.Random(seed)
        run = new_run(tmp_path / f"s{seed}")
        d = run.round_dir("design", 1)
        _random_round(rng, d, bad_names)
        proc = _run_script(d)
        assert proc.returncode in (0, 1), proc.stderr
        assert (d / AUDIT).is_file() and (d / KEPT).exists() == (proc.returncode == 0)
        got = [x for x in check(d).diagnostics if x.cause in MISMATCH]
        if got:
            problems.append(f"seed {seed}: " + "; ".join(x.message for x in got))
            continue
        # one total tampered: the recount must notice
        doc = json.loads((d / AUDIT).read_text())
        key = rng.choice(["scored", "kept", "dropped"])
        doc[key] += 1
        put(d, AUDIT, json.dumps(doc, indent=2) + "\n")
        tampered = [x for x in check(d).diagnostics if x.cause == "fanin_audit_mismatch"]
        if len(tampered) != 1 or f"{key} says {doc[key]}" not in tampered[0].message:
            problems.append(f"seed {seed}: tampered {key} not reported")
    return problems


@pytest.mark.slow
@needs_script
def test_check_accepts_what_the_real_fan_in_writes_and_notices_a_tampered_total(
        tmp_path: Path) -> None:
    assert _differential(tmp_path, range(60), bad_names=False) == []


@pytest.mark.slow
@needs_script
def test_check_accepts_what_the_real_fan_in_writes_for_badly_named_findings(
        tmp_path: Path) -> None:
    assert _differential(tmp_path, range(30), bad_names=True) == []


@pytest.mark.slow
@needs_script
def test_the_hand_computed_rounds_agree_with_the_real_fan_in(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    d = fanin_round(run, "design", 1, [
        (Q, 1, "scope", 0), (Q, 2, "intent", 1), (Q, 3, "correctness", 70),
        (Q, 4, "correctness", 69), (Q, 5, "style", 80), (Q, 6, "clarity", 79)])
    assert _run_script(d).returncode == 0
    assert json.loads((d / AUDIT).read_text()) == json.loads(audit_json(6, 3, 3))
    kept = sorted(Path(p).name for p in (d / KEPT).read_text().splitlines())
    assert kept == [name(Q, 2), name(Q, 3), name(Q, 5)]
