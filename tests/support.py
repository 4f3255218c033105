"""Shared test helpers (fixtures stay in conftest.py): paths, a builder for review runs,
and two ways to run the command line.

- :func:`run_main` runs ``qrspi_guard.cli:main`` -- the console script's own entry point,
  with its translation of failures into exit codes and one-line messages -- in this
  process, through click's test runner. Most CLI tests use it: it costs milliseconds
  where a process start costs a fifth of a second.
- :func:`run_cli` runs the installed console script in a real subprocess. It is kept
  for what only a process shows: start-up, signals, exit codes of a dying process,
  closed or full standard streams, environment variables read at import, fault
  injection that kills the process, and watch end to end.

Both return a :class:`subprocess.CompletedProcess` with ``returncode`` and bytes
``stdout`` and ``stderr``, so a test can switch between them.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "rounds"
BENCHMARKS = REPO / "benchmarks"
SCRIPT = Path(sys.executable).parent / "qrspi-guard"


def claimed_pythons() -> list[str]:
    """The Pythons the project claims: its ``Programming Language :: Python :: 3.N``
    classifiers, oldest first (what ``.ci/ranges`` runs and the lock covers)."""
    import re

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - the 3.10 run
        import tomli as tomllib
    classifiers = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["classifiers"]
    found = [m.group(1) for c in classifiers
             if (m := re.fullmatch(r"Programming Language :: Python :: (3\.(\d+))", c))]
    return sorted(found, key=lambda v: int(v.split(".")[1]))

#: variables the user's shell may set that change the output; both runners drop them
UNSET = ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS")


def run_cli(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None,
            input: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """Run the installed console script in a subprocess."""
    full_env = {k: v for k, v in os.environ.items() if k not in UNSET}
    full_env.update(env or {})
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, timeout=timeout)


def stdout_on_tty(*args: str, env: dict[str, str], cwd: Path | str | None = None,
                  timeout: float = 30) -> bytes:
    """Run the installed console script with its stdout on a pseudo-terminal (stderr
    discarded) and *env* as its whole environment; what it wrote to the terminal."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), *args], cwd=cwd, stdout=follower,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=timeout)
    os.close(leader)
    return b"".join(chunks)


def run_main(*args: str | bytes, cwd: Path | str | None = None,
             env: dict[str, str | None] | None = None, input: bytes | str | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """Run ``qrspi_guard.cli:main(args)`` in this process, as the console script would.

    Standard input is *input* (empty when None) both as ``sys.stdin`` and as file
    descriptor 0 (``split -`` reads the descriptor); stdout and stderr are captured
    separately; *env* is applied to ``os.environ`` for the call (a None value removes
    the variable, and so are the ones in :data:`UNSET`); a bytes argument is decoded as
    the interpreter decodes ``argv`` (``os.fsdecode``); *cwd* is the working directory
    for the call; the exit code is the ``SystemExit`` that ``main`` always ends with.
    Everything is restored after.
    *timeout* bounds a hang: past it the whole test run is stopped with every thread's
    traceback (a hang in-process cannot be killed any other way).
    """
    from click import formatting
    from click.testing import CliRunner

    from qrspi_guard.cli import main

    data = input.encode() if isinstance(input, str) else (input or b"")
    overrides: dict[str, str | None] = {k: None for k in UNSET}
    overrides.update(env or {})
    code: int
    with contextlib.ExitStack() as stack:
        stack.enter_context(_stdin_fd(data))
        if cwd is not None:
            stack.enter_context(_chdir(cwd))
        out, err, _ = stack.enter_context(CliRunner().isolation(input=data, env=overrides))
        # click's runner forces 80 columns; a console script whose stdout is a pipe
        # wraps help at COLUMNS (else 80) less 2, at most 78 (restored on exit)
        formatting.FORCED_WIDTH = max(min(_columns(), 80) - 2, 50)
        stack.enter_context(_hang_bound(timeout))
        try:
            main([os.fsdecode(a) for a in args])
        except SystemExit as exc:
            code = _exit_code(exc.code)
        else:  # pragma: no cover - main() always exits
            raise AssertionError("qrspi_guard.cli.main returned instead of exiting")
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(["qrspi-guard", *map(os.fsdecode, args)], code, stdout,
                                       stderr)


def _columns() -> int:
    """The width ``shutil.get_terminal_size`` gives when stdout is not a terminal."""
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 80


def _exit_code(code: object) -> int:
    """What the process's exit status would be for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")  # the interpreter prints any other value, exits 1
    return 1


@contextlib.contextmanager
def _hang_bound(timeout: float) -> Iterator[None]:
    """Past *timeout*, print every thread's traceback and end the test run."""
    try:
        faulthandler.dump_traceback_later(timeout, exit=True, file=sys.__stderr__)
    except (AttributeError, ValueError, io.UnsupportedOperation):  # no real stderr
        yield
        return
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@contextlib.contextmanager
def _chdir(path: Path | str) -> Iterator[None]:
    """``contextlib.chdir`` (Python 3.11+) for 3.10."""
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@contextlib.contextmanager
def _stdin_fd(data: bytes) -> Iterator[None]:
    """File descriptor 0 reads *data*, then EOF, for the duration: a pipe when it fits
    in one (as ``subprocess.run(input=...)`` gives), else a temporary file."""
    saved = os.dup(0)
    try:
        if len(data) <= 60_000:
            r, w = os.pipe()
            try:
                if data:
                    os.write(w, data)
            finally:
                os.close(w)
            fd = r
        else:
            tmp = tempfile.TemporaryFile()
            tmp.write(data)
            tmp.flush()
            fd = os.dup(tmp.fileno())
            tmp.close()
            os.lseek(fd, 0, os.SEEK_SET)
        os.dup2(fd, 0)
        os.close(fd)
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def load_benchmark(name: str) -> ModuleType:
    """A module from benchmarks/ (not a package), loaded by path, without touching
    ``sys.path``; loaded once."""
    qualified = f"benchmarks_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    spec.loader.exec_module(module)
    return module


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
