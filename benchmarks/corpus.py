"""Build the benchmark corpora: review trees of finding files (issue 7).

Each corpus is ``runs`` artifact directories, each ``reviews/goals/round-NN`` with
``files`` finding files split between ``quality-claude`` and ``scope-claude`` (the goals
row without a second reviewer), so a corpus of 200 rounds x 100 files is 20,000 files.

- ``canonical``: every file exactly in the protocol's shape, all valid.
- ``mixed``: all valid, written the way reviewers write (key order, quoting, block and
  flow lists, comments, blank lines).
- ``defects``: canonical with 10% of files broken in assorted ways.
- ``fanin``: the current (fan-in) generation as upstream tooling writes it: canonical
  findings carrying ``actual_model``, one ``.score.md`` sidecar per finding in the
  verifier's shape, and the fan-in's ``.verifier-fan-in-audit.json`` and
  ``kept-findings.txt`` consistent with a recount (every file is counted and read).

Deterministic (seeded); a corpus is rebuilt only when its stamp file is missing.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable

ROUNDS_PER_RUN = 10
TAGS = ("quality-claude", "scope-claude")
CONFIG = "---\nsecond_reviewer: false\nverifier_enabled: false\n---\n\nBenchmark run.\n"
BODY = ("The goal G{n} says login latency must improve noticeably but gives no number,\n"
        "no percentile and no baseline. The plan step cannot write an acceptance test\n"
        "against it. State a target such as p95 token refresh under 150 ms measured\n"
        "against the current 420 ms baseline.\n")


def canonical(rnd: int, tag: str, fnum: int, rng: random.Random) -> str:
    return (f"---\nfinding_id: R{rnd}-F{fnum:02d}\nseverity: medium\nchange_type: clarity\n"
            f"referenced_files: [goals.md:L{fnum}-L{fnum + 6}]\nartifact: goals\n"
            f"round: {rnd}\nreviewer: {tag}\n---\n\n" + BODY.format(n=fnum))


def mixed(rnd: int, tag: str, fnum: int, rng: random.Random) -> str:
    """A valid finding in one of many hand-written shapes."""
    q = rng.choice

    def s(value: str) -> str:
        style = q(("plain", "single", "double"))
        if style == "single":
            return "'" + value + "'"
        if style == "double":
            return '"' + value + '"'
        return value

    refs = [f"goals.md:L{fnum}-L{fnum + 3}", f"src/auth/token_{fnum}.py:{fnum + 10}",
            "docs/goals.md"][: rng.randint(1, 3)]
    style = q(("flow", "flow-quoted", "block", "block-quoted", "flow-empty-spaced"))
    if style == "flow":
        ref_lines = ["referenced_files: [" + ", ".join(refs) + "]"]
    elif style == "flow-quoted":
        ref_lines = ["referenced_files: [" + ", ".join(q(('"{}"', "'{}'")).format(r)
                                                        for r in refs) + "]"]
    elif style == "flow-empty-spaced":
        ref_lines = ["referenced_files: [ " + " , ".join(refs) + " ]"]
    else:
        ind = q(("", "  ", "    "))
        ref_lines = ["referenced_files:"] + [ind + "- " + (s(r) if style == "block-quoted"
                                                           else r) for r in refs]
    fields = [
        [f"finding_id: {s(f'R{rnd}-F{fnum:02d}')}"],
        [f"severity: {s(q(('low', 'medium', 'high')))}"],
        [f"change_type: {s(q(('style', 'clarity', 'correctness', 'scope', 'intent')))}"],
        ref_lines,
        [f"artifact: {s('goals')}"],
        [f"round: {rnd}"],
        [f"reviewer: {s(tag)}"],
    ]
    rng.shuffle(fields)
    lines = ["---"]
    if rng.random() < 0.3:
        lines.append("# written by the " + tag + " reviewer")
    for group in fields:
        for i, line in enumerate(group):
            # a comment ends any line but the two the fan-in's awk reads whole
            line_read = line.startswith(("change_type:", "finding_id:"))
            if rng.random() < 0.25 and i == len(group) - 1 and not line_read:
                line += q(("  # checked", " # see goals", "\t# note: " + tag))
            lines.append(line)
        if rng.random() < 0.15:
            lines.append("")
    lines.append("---")
    return "\n".join(lines) + "\n\n" + BODY.format(n=fnum)


def _break(text: str, rnd: int, fnum: int, kind: int) -> str:
    """One of the assorted defects, each reported with a line."""
    if kind == 0:
        return text.replace("severity: medium", "severity: critical")
    if kind == 1:
        return text.replace("artifact: goals\n", "")
    if kind == 2:
        return text.replace("change_type: clarity", "category: clarity")
    if kind == 3:
        return text.replace(f"[goals.md:L{fnum}-L{fnum + 6}]", f"[goals.md:L{fnum}, oops")
    if kind == 4:
        return text[len("---\n"):]
    if kind == 5:
        return text.replace(f"round: {rnd}\n", f"round: {rnd + 40}\n")
    if kind == 6:
        return text.replace("severity: medium", "severity: medium: high")
    if kind == 7:
        return text.replace("change_type: clarity", "change_type: [clarity]")
    if kind == 8:
        return text.replace(f"round: {rnd}\n", "round: three\n")
    return text.replace("reviewer: ", "reviewer: other-")


def defects(rnd: int, tag: str, fnum: int, rng: random.Random) -> str:
    text = canonical(rnd, tag, fnum, rng)
    if rng.random() < 0.10:
        text = _break(text, rnd, fnum, rng.randrange(10))
    return text


def fanin(rnd: int, tag: str, fnum: int, rng: random.Random) -> str:
    """A canonical finding as current reviewers write it (the audit field included)."""
    text = canonical(rnd, tag, fnum, rng)
    return text.replace(f"reviewer: {tag}\n---", f"reviewer: {tag}\nactual_model: "
                        "claude-sonnet-4.6\n---", 1)


SHAPES: dict[str, Callable[[int, str, int, random.Random], str]] = {
    "canonical": canonical, "mixed": mixed, "defects": defects, "fanin": fanin,
}
FANIN_CONFIG = "---\nsecond_reviewer: false\nverifier_enabled: true\n---\n\nBenchmark run.\n"
SIDECAR = ("---\nverifier_status: passed\nscore: {score}\nactual_model: claude-haiku-4.5\n"
           "defect_class: missing-baseline\n---\n\nThe goal names no number; the finding "
           "quotes it correctly and the fix is concrete.\n")
AUDIT = ('{{\n  "scored": {scored},\n  "kept": {kept},\n  "dropped": {dropped},\n'
         '  "halts": [],\n  "thresholds": {{\n    "style": 80,\n    "clarity": 80,\n'
         '    "correctness": 70\n  }}\n}}\n')


def _fanin_outputs(rdir: str, names: list[str], rng: random.Random) -> None:
    """Sidecars, audit and kept list for a round of canonical (clarity) findings."""
    kept = []
    for name in names:
        score = rng.choice((95, 90, 85, 80, 60, 0))
        with open(os.path.join(rdir, name[:-3] + ".score.md"), "w") as fh:
            fh.write(SIDECAR.format(score=score))
        if score >= 80:
            kept.append(name)
    with open(os.path.join(rdir, ".verifier-fan-in-audit.json"), "w") as fh:
        fh.write(AUDIT.format(scored=len(names), kept=len(kept),
                              dropped=len(names) - len(kept)))
    with open(os.path.join(rdir, "kept-findings.txt"), "w") as fh:
        fh.writelines(f"/Users/reviewer/work/{os.path.basename(rdir)}/{n}\n" for n in kept)


def build(root: str, shape: str, rounds: int, files: int, seed: int = 7) -> str:
    """Build (once) corpus *shape* with *rounds* rounds of *files* files under *root*."""
    name = f"{shape}-{rounds}x{files}"
    path = os.path.join(root, name)
    stamp = os.path.join(path, ".built")
    if os.path.exists(stamp):
        return path
    if os.path.exists(path):
        shutil.rmtree(path)
    rng = random.Random(f"{seed}-{shape}-{rounds}-{files}")
    make = SHAPES[shape]
    per_tag = [files // len(TAGS) + (1 if i < files % len(TAGS) else 0)
               for i in range(len(TAGS))]
    runs = (rounds + ROUNDS_PER_RUN - 1) // ROUNDS_PER_RUN
    made = 0
    for run in range(runs):
        art = os.path.join(path, f"run-{run:04d}")
        os.makedirs(os.path.join(art, "reviews", "goals"))
        with open(os.path.join(art, "config.md"), "w") as fh:
            fh.write(FANIN_CONFIG if shape == "fanin" else CONFIG)
        for rnd in range(1, ROUNDS_PER_RUN + 1):
            if made == rounds:
                break
            made += 1
            rdir = os.path.join(art, "reviews", "goals", f"round-{rnd:02d}")
            os.mkdir(rdir)
            names = []
            for tag, count in zip(TAGS, per_tag, strict=True):
                for fnum in range(1, count + 1):
                    names.append(f"{tag}.finding-F{fnum:02d}.md")
                    with open(os.path.join(rdir, names[-1]), "w", encoding="utf-8") as fh:
                        fh.write(make(rnd, tag, fnum, rng))
            if shape == "fanin":
                _fanin_outputs(rdir, names, rng)
    with open(stamp, "w") as fh:
        fh.write("ok\n")
    return path
