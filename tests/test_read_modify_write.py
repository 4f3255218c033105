"""Every file the guard rewrites is read and written under the lock its other writers
take, so no write of theirs is lost (issue 29: "read-modify-write that keeps others'
writes"). The dispatch manifest's own race is in tests/test_loop_await_trust.py; this
is `check --fix`, which rewrites findings that `split` and the loop commands write under
the round's lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.genkit import finding_text, new_run, put
from tests.support import run_main

WRITER = r'''
import fcntl, os, sys
round_dir, count, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("ready", flush=True)
for version in range(count):
    fd = os.open(round_dir, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as split does
    for name in names:
        path = os.path.join(round_dir, name)
        with open(path, "rb") as f:
            head = f.read().split(b"\nversion ")[0]
        tmp = path + ".w"
        with open(tmp, "wb") as f:
            f.write(head + b"\nversion %d" % version)  # no final newline: --fix adds one
        os.rename(tmp, path)
    os.close(fd)
print("done", flush=True)
'''


def test_check_fix_never_loses_a_write_made_under_the_round_lock(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    rd = run.round_dir("design", 1)
    names = []
    for n in range(1, 31):
        name = f"quality-claude.finding-F{n:02d}.md"
        put(rd, name, finding_text("quality-claude", n, "style", 1, "design").rstrip("\n"))
        names.append(name)
    count = 100
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(rd), str(count), *names],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    fixes = 0
    while proc.poll() is None or fixes < 5:
        run_main("check", "--fix", str(run.root))
        fixes += 1
    assert proc.wait(timeout=60) == 0
    for name in names:
        last = (rd / name).read_bytes().rstrip(b"\n").rsplit(b"\nversion ", 1)[1]
        assert last == str(count - 1).encode(), f"{name}: a fix wrote back version {last!r}"
