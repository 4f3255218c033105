"""Hook latency as each real runtime reports it: `hook install` against the plugin or
extension launcher, and with no guard to run (issue 31).

Claude Code and Gemini CLI (the versions tests/npm pins, installed by
tests/npmtools.py) are driven by the scripted model of tests/agentmodel.py through a
reviewer that makes N calls of each kind: a write outside the review rounds (the hook's
no-op), a valid finding written into a round, and a shell command naming no round. The
runtime's own figure for each hook call is read from its debug output: Claude Code's
``Hooks: PreToolUse:Write [...] finished with status 0 (90ms)`` (``--debug-file``),
Gemini CLI's ``Hook execution for BeforeTool: ... total duration: 121ms`` (``--debug``).
Run:

    .venv/bin/python benchmarks/runtime_hook_latency.py [--calls N] [--way WAY ...]

The guard measured is the one installed beside the Python that runs the script, so an
older release is measured by running this script with that release's environment
(``--way hook-install``: the plugin and the launcher are this checkout's).

Prints the median and p90 (ms) per runtime, way in and event; no target (the runtimes'
own overhead dominates and varies by version), so it always exits 0 when it ran.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.agentmodel import Step  # noqa: E402
from tests.npmtools import binary  # noqa: E402
from tests.runtimes import Claude, Gemini, drive  # noqa: E402

GUARD_BIN = str(Path(sys.executable).parent)
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
FINDING = ("---\nfinding_id: R1-F{n:02d}\nseverity: high\nchange_type: correctness\n"
           "referenced_files: []\nartifact: design\nround: 1\nreviewer: quality-claude\n"
           "---\n\nThe design drops the retry path; restore it.\n")
CLAUDE_LINE = re.compile(r"Hooks: (PreToolUse|PostToolUse):\w+ \[.*?\](?: \(plugin [^)]*\))? "
                         r"finished with status \d+ \((\d+)ms\)")
GEMINI_LINE = re.compile(r"Hook execution for (BeforeTool|AfterTool): .* total duration: "
                         r"(\d+)ms")


WAYS = {"hook-install": "hook install", "plugin": "plugin, guard on PATH",
        "no-guard": "plugin, no guard"}


def script(rt: Claude | Gemini, project: Path, calls: int) -> list[Step]:
    rnd = project / "reviews" / "design" / "round-01"
    steps = []
    for i in range(calls):
        steps.append(Step(rt.write, {"file_path": str(project / f"note-{i}.md"),
                                     "content": "x\n"}))
        name = f"quality-claude.finding-F{i + 1:02d}.md"
        steps.append(Step(rt.write, {"file_path": str(rnd / name),
                                     "content": FINDING.format(n=i + 1)}))
        steps.append(Step(rt.shell, {"command": f"echo {i} > note-{i}.txt"}))
    return steps


def claude_times(rt: Claude, project: Path, steps: list[Step]) -> list[tuple[str, int]]:
    log = project.parent / "claude-debug.log"
    drive(rt.cli, ["--verbose", "--permission-mode", "bypassPermissions", "--debug-file",
                   str(log)], project, steps,
          lambda url: rt.env({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-scripted"}),
          max_requests=4 * len(steps) + 20)
    text = log.read_text(errors="replace") if log.exists() else ""
    return [(m.group(1), int(m.group(2))) for m in CLAUDE_LINE.finditer(text)
            if "qrspi-guard" in m.group(0)]


def gemini_times(rt: Gemini, project: Path, steps: list[Step]) -> list[tuple[str, int]]:
    out = drive(rt.cli, ["--yolo", "--skip-trust", "--debug"], project, steps,
                lambda url: rt.env({"GOOGLE_GEMINI_BASE_URL": url}),
                max_requests=4 * len(steps) + 20)
    return [(m.group(1), int(m.group(2))) for m in GEMINI_LINE.finditer(out.stdout + out.stderr)]


def row(label: str, times: list[tuple[str, int]]) -> None:
    for event in sorted({e for e, _ in times}):
        ms = sorted(t for e, t in times if e == event)
        p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
        print(f"{label:<44} {event:<12} n={len(ms):<3} median {statistics.median(ms):6.0f} ms"
              f"  p90 {p90:6.0f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=10, help="calls of each kind per run")
    ap.add_argument("--way", action="append", choices=sorted(WAYS),
                    help="measure only this way in (repeatable; default: all)")
    args = ap.parse_args()
    ways = [label for key, label in WAYS.items() if not args.way or key in args.way]
    clis = {n: binary(".bin", n) for n in ("claude", "gemini")}
    for name, got in clis.items():
        if isinstance(got, str):
            print(f"{name}: not available: {got}")
            return 1
    tmp = Path(tempfile.mkdtemp(prefix="runtime-hook-latency-"))
    try:
        for way in ways:
            for runtime in ("claude", "gemini"):
                base = tmp / f"{runtime}-{way.replace(' ', '-').replace(',', '')}"
                project = base / "proj"
                (project / "reviews" / "design" / "round-01").mkdir(parents=True)
                path = f"{GUARD_BIN}:{BASE_PATH}" if way != "plugin, no guard" else BASE_PATH
                rt: Claude | Gemini
                if runtime == "claude":
                    rt = Claude(clis["claude"], base / "home", path)  # type: ignore[arg-type]
                else:
                    rt = Gemini(clis["gemini"], base / "home", path)  # type: ignore[arg-type]
                    rt.trust(project)
                if way == "hook install":
                    subprocess.run([f"{GUARD_BIN}/qrspi-guard", "hook", "install", "--runtime",
                                    runtime], cwd=project, check=True, capture_output=True,
                                   env={"HOME": str(rt.home), "PATH": BASE_PATH})
                elif isinstance(rt, Claude):
                    rt.install_plugin(REPO, project)
                else:
                    rt.install_extension(REPO / "integrations" / "gemini-cli", project)
                steps = script(rt, project, args.calls)
                times = (claude_times(rt, project, steps) if isinstance(rt, Claude)
                         else gemini_times(rt, project, steps))
                row(f"{runtime} / {way}", times)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
