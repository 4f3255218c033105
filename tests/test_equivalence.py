"""Target 6: no result changes. `check --format json` is byte-identical with the fast
path on and off (``QRSPI_GUARD_NO_FASTPATH=1``) and with one process or several
(``QRSPI_GUARD_JOBS``), on small versions of the three benchmark corpora, on a tree of
mutated files and on the round fixtures; and every file the fast judge accepts is one
that ``judge_file`` finds nothing wrong with, with the same facts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.contract.layout import classify
from qrspi_guard.parse import frontmatter as fm
from qrspi_guard.rules import fastjudge
from qrspi_guard.rules.facts import Place
from qrspi_guard.rules.filejudge import judge_file
from tests.support import FIXTURES, load_benchmark, run_cli, run_main

corpus = load_benchmark("corpus")

#: (name, environment): the reference first (C loader only, one process).
VARIANTS = [
    ("slow, 1 process", {"QRSPI_GUARD_NO_FASTPATH": "1", "QRSPI_GUARD_JOBS": "1"}),
    ("fast, 1 process", {"QRSPI_GUARD_JOBS": "1"}),
    ("fast, 2 processes", {"QRSPI_GUARD_JOBS": "2"}),
    ("fast, 3 processes", {"QRSPI_GUARD_JOBS": "3"}),
    ("slow, 2 processes", {"QRSPI_GUARD_NO_FASTPATH": "1", "QRSPI_GUARD_JOBS": "2"}),
    ("default", {}),
]


def run_variant(name: str, env: dict[str, str], *args: str, cwd: Path | None = None,
                timeout: float = 300) -> Any:
    """`check` in a variant: through the console script when the variant turns the fast
    path off (read once, at import) and for the default; else in this process, which
    reads ``QRSPI_GUARD_JOBS`` per call and forks its workers the same way."""
    if "QRSPI_GUARD_NO_FASTPATH" in env or name == "default":
        return run_cli("check", *args, env=env, cwd=cwd, timeout=timeout)
    return run_main("check", *args, env=env, cwd=cwd, timeout=timeout)


def assert_identical_outputs(*args: str, variants: list[tuple[str, dict[str, str]]] = VARIANTS,
                             cwd: Path | None = None) -> dict[str, Any]:
    outputs = []
    for name, env in variants:
        proc = run_variant(name, env, *args, "--format", "json", cwd=cwd)
        assert proc.returncode in (0, 1), (name, proc.stderr)
        outputs.append((name, proc.returncode, proc.stdout))
    ref_name, ref_code, ref_out = outputs[0]
    for name, code, out in outputs[1:]:
        assert code == ref_code, (name, ref_name)
        assert out == ref_out, f"{name} differs from {ref_name}"
    return json.loads(ref_out)  # type: ignore[no-any-return]


@pytest.mark.parametrize("shape", sorted(corpus.SHAPES))
def test_benchmark_corpora_give_identical_json(tmp_path: Path, shape: str) -> None:
    path = corpus.build(str(tmp_path), shape, 30, 12)
    doc = assert_identical_outputs(path)
    # fan-in rounds also hold a sidecar per finding and kept-findings.txt
    files = 30 * (12 * 2 + 1) if shape == "fanin" else 360
    assert doc["summary"]["rounds"] == 30 and doc["summary"]["files"] == files
    if shape == "defects":
        assert doc["summary"]["errors"] > 0
        assert all("line" in d for d in doc["diagnostics"] if d.get("file"))
    else:
        assert doc["summary"]["errors"] == 0 and doc["summary"]["warnings"] == 0


# -- mutated files -------------------------------------------------------------------

CORNER = ["08", "010", "0x1f", "1_000", "1:30", "yes", "On", "no", "~", ".5", ".inf",
          "2026-05-17", "'x'", '"y"', "''", "[a, b", "[]", "&a x", "*a", "!!str 3", "a: b",
          "a #b", "null", "3.0", "-1", "R1-F01", "R01-F1", "feedback/x.md", "../x.md",
          "a b.md", "goals.md:L1-L2", "goals.md:x", "design", "goals", "task-1", "é",
          "\u2028", "\t", "quality-claude", "scope-codex", "intent", "style", "high"]
SPECIALS = list(" \t#:'\"[]{},-?&*!|>%@`\\\n~.0123456789")


def mutate(text: str, rng: random.Random) -> bytes:
    for _ in range(rng.randint(0, 3)):
        op = rng.randrange(9)
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        if op == 0 and ":" in lines[i]:
            key = lines[i].split(":")[0]
            lines[i] = f"{key}: {rng.choice(CORNER)}"
        elif op == 1:
            pos = rng.randrange(len(text) + 1)
            text = text[:pos] + rng.choice(SPECIALS) + text[pos:]
            continue
        elif op == 2 and len(text) > 1:
            pos = rng.randrange(len(text))
            text = text[:pos] + text[pos + 1:]
            continue
        elif op == 3:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 4:
            del lines[i]
        elif op == 5:
            lines.insert(rng.randrange(len(lines) + 1),
                         rng.choice(["finding_id: R9-F09", "<<<FINDING-BOUNDARY>>>",
                                     "see feedback/a.md", "# note", "", "  - extra",
                                     "category: style", "  indented: x"]))
        elif op == 6:
            lines[i] = lines[i].replace(":", rng.choice([":", ": ", " :", ":\t"]), 1)
        elif op == 7:
            text = rng.choice(["", "\n", "\n\n"]) + text
            continue
        text = "\n".join(lines)
    data = text.encode("utf-8")
    roll = rng.random()
    if roll < 0.03:
        data = fm.BOM + data
    elif roll < 0.06:
        data = data.replace(b"\n", b"\r\n")
    elif roll < 0.09:
        data = data.rstrip(b"\n")
    elif roll < 0.12:
        data += b"\n"
    elif roll < 0.13:
        data = data[:-3] + b"\xff\xfe\n"
    return data


def clean_text(rnd: int, tag: str, rng: random.Random) -> str:
    return rng.choice([f"---\nreviewer: {tag}\nround: {rnd}\nfindings: 0\n---\n",
                       f"---\nround: {rnd}\nreviewer: '{tag}'\nfindings: 0 # none\n---\n",
                       f"---\nreviewer: {tag}\nround: {rnd}\n---\n"])


def write_mutated_tree(root: Path, seed: int, rounds: int = 40) -> list[tuple[Path, Place]]:
    """A run with goals, design and task rounds of mutated findings and sentinels."""
    rng = random.Random(seed)
    art = root / "run"
    (art / "reviews").mkdir(parents=True)
    (art / "config.md").write_text(corpus.CONFIG)
    made = []
    for r in range(1, rounds + 1):
        where = rng.choice(["goals", "design", "tasks/task-01"])
        rnd = 1 + (r - 1) // 3
        rdir = art / "reviews" / where / f"round-{rnd:02d}"
        if rdir.exists():
            continue
        rdir.mkdir(parents=True)
        step = where.split("/")[-1]
        place = Place(str(rdir), step, rnd, where.startswith("tasks"))
        for tag in ("quality-claude", "scope-claude"):
            if rng.random() < 0.2:
                (rdir / f"{tag}.clean.md").write_bytes(mutate(clean_text(rnd, tag, rng), rng))
                made.append((rdir / f"{tag}.clean.md", place))
                continue
            for fnum in range(1, rng.randint(2, 12)):
                shape = rng.choice(["canonical", "mixed"])
                text = corpus.SHAPES[shape](rnd, tag, fnum, rng)
                text = text.replace("artifact: goals", f"artifact: {step}")
                text = text.replace("artifact: 'goals'", f"artifact: '{step}'")
                text = text.replace('artifact: "goals"', f'artifact: "{step}"')
                path = rdir / f"{tag}.finding-F{fnum:02d}.md"
                path.write_bytes(mutate(text, rng) if rng.random() < 0.6 else text.encode())
                made.append((path, place))
    return made


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mutated_files_give_identical_json(tmp_path: Path, seed: int) -> None:
    write_mutated_tree(tmp_path, seed)
    doc = assert_identical_outputs(str(tmp_path))
    assert doc["summary"]["errors"] > 0 and doc["summary"]["files"] > 150


def test_a_large_mutated_tree_gives_identical_json(tmp_path: Path) -> None:
    write_mutated_tree(tmp_path, 99, rounds=240)
    doc = assert_identical_outputs(str(tmp_path), variants=VARIANTS[:3])
    assert doc["summary"]["files"] > 1000 and doc["summary"]["rounds"] > 60


def test_fast_judge_accepts_only_what_judge_file_accepts(tmp_path: Path) -> None:
    accepted = rejected = 0
    for seed in range(4, 20):
        for path, place in write_mutated_tree(tmp_path / str(seed), seed, rounds=60):
            fname = classify(path.name)
            data = path.read_bytes()
            fplace = Place(str(path), place.step, place.round, place.is_task)
            full = judge_file(fname, data, fplace)
            fast = fastjudge.fast_report(fname, data, place)
            if fast is None:
                rejected += 1
                continue
            accepted += 1
            assert full.diagnostics == [], (path, data)
            assert fast.facts == full.facts, (path, data)
    assert accepted > 2000 and rejected > 1500


# -- the round fixtures --------------------------------------------------------------

QUICK = VARIANTS[:3]


def test_example_and_valid_fixtures_give_identical_json() -> None:
    assert_identical_outputs("example", variants=QUICK, cwd=FIXTURES)
    assert_identical_outputs("example-fanin", variants=QUICK, cwd=FIXTURES)
    doc = assert_identical_outputs("valid", variants=QUICK, cwd=FIXTURES)
    assert doc["diagnostics"] == []


def test_cause_fixtures_give_identical_json_and_still_trigger_their_cause() -> None:
    index = json.loads((FIXTURES / "causes" / "index.json").read_text())
    for name, entry in sorted(index.items()):
        if "setup" in entry:  # needs a setup git cannot store (test_causes.py makes it)
            continue
        outs = []
        for variant, env in QUICK:
            proc = run_variant(variant, env, entry["path"], "--format", "json", *entry["args"],
                               cwd=FIXTURES)
            outs.append((proc.returncode, proc.stdout))
        assert outs[1] == outs[0] and outs[2] == outs[0], name
        if outs[0][1].startswith(b"{"):
            causes = {d["cause"] for d in json.loads(outs[0][1])["diagnostics"]}
            if name != "split_would_mix_attempts":  # a cause of `split`, not `check`
                assert name in causes, name


# -- the worker processes -----------------------------------------------------------


def _json(result: Any) -> str:
    from qrspi_guard.output import ReportOptions, renderer

    return renderer("json")(result, ReportOptions())


def test_any_number_of_workers_gives_the_same_result_in_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qrspi_guard import engine

    write_mutated_tree(tmp_path, 5)
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "1")
    serial = _json(engine.check_paths([str(tmp_path)]))
    for n in ("2", "4"):
        monkeypatch.setenv("QRSPI_GUARD_JOBS", n)
        assert _json(engine.check_paths([str(tmp_path)])) == serial


def test_a_worker_that_dies_leaves_its_rounds_to_the_parent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from qrspi_guard import engine
    from qrspi_guard.engine import parallel

    write_mutated_tree(tmp_path, 6)
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "1")
    serial = _json(engine.check_paths([str(tmp_path)]))
    monkeypatch.setenv("QRSPI_GUARD_JOBS", "2")
    monkeypatch.setattr(parallel, "_worker", lambda *args: os._exit(1))
    assert _json(engine.check_paths([str(tmp_path)])) == serial
