"""Shared test helpers: the installed console script and a builder for review runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Every file the fast path accepts is re-judged by the full rules, in this process and in
# every console script the tests start: a difference is a failure (fastjudge.VERIFY).
os.environ["QRSPI_GUARD_VERIFY_FASTPATH"] = "1"

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "rounds"
SCRIPT = Path(sys.executable).parent / "qrspi-guard"


def run_cli(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None,
            input: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the installed console script in a subprocess."""
    unset = ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS")
    full_env = {k: v for k, v in os.environ.items() if k not in unset}
    full_env.update(env or {})
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, timeout=timeout)  # type: ignore[return-value]


FINDING = """---
finding_id: R{round}-F{n:02d}
severity: {severity}
change_type: {change_type}
referenced_files: [{step}.md:L10-L20]
artifact: {artifact}
round: {round}
reviewer: {tag}
---

The {step} section contradicts goals.md; align the constraint with the goal it serves.
"""


class Run:
    """An artifact directory with config.md and reviews/, written on a real filesystem."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def config(self, text: str = "second_reviewer: false\nverifier_enabled: false\n") -> Run:
        self.write("config.md", f"---\n{text}---\n\n# Run\n")
        return self

    def round_dir(self, step: str, round_no: int) -> Path:
        d = self.root / "reviews" / step / f"round-{round_no:02d}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def write(self, rel: str, content: str | bytes) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        p.write_bytes(content)
        return p

    def finding(self, step: str, round_no: int, tag: str, n: int = 1, text: str | None = None,
                **fields: object) -> Path:
        values: dict[str, object] = {"round": round_no, "n": n, "tag": tag, "step": step,
                                     "severity": "high", "change_type": "correctness",
                                     "artifact": step}
        values.update(fields)
        body = text if text is not None else FINDING.format(**values)
        d = self.round_dir(step, round_no)
        p = d / f"{tag}.finding-F{n:02d}.md"
        p.write_bytes(body.encode())
        return p

    def clean(self, step: str, round_no: int, tag: str, text: str | None = None) -> Path:
        d = self.round_dir(step, round_no)
        p = d / f"{tag}.clean.md"
        p.write_text(text if text is not None else
                     f"---\nreviewer: {tag}\nround: {round_no}\nfindings: 0\n---\n")
        return p


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path / "art").config()
