"""`hook install` and `uninstall` keep others' writes to the settings file (issue 29:
"any file the guard rewrites is re-read under the lock it writes under, just before the
write, and merged"), through real subprocesses of the installed console script.

Before, install read the file, wrote a backup, and renamed its merged copy over the
file: whatever another writer put there in between (another install, the runtime's own
``/permissions``, the user's editor) was lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support import SCRIPT, UNSET

#: a writer that takes the settings' lock, as every writer in hook/install.py does: an
#: exclusive flock on the settings directory, then read, add one permission, rename
LOCKED_WRITER = r'''
import fcntl, json, os, sys, time
path = sys.argv[1]
directory = os.path.dirname(path)
print("ready", flush=True)
count = 0
while not os.path.exists(sys.argv[2]):
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read())
    except FileNotFoundError:
        doc = {}
    doc.setdefault("permissions", {}).setdefault("allow", []).append(f"Bash(echo {count})")
    with open(path + ".w", "w") as f:
        json.dump(doc, f)
    os.rename(path + ".w", path)
    os.close(fd)
    count += 1
    time.sleep(0.001)  # the writer's other work, outside the lock
print(count, flush=True)
'''


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["HOME"] = str(home)
    return env


def hook(project: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([str(SCRIPT), "hook", *args], cwd=project, env=env,
                          capture_output=True, timeout=120)


def ours(doc: dict[str, object]) -> bool:
    return "qrspi-guard" in json.dumps(doc.get("hooks", {}))


def test_installs_never_lose_a_write_made_under_the_settings_lock(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", LOCKED_WRITER, str(settings), str(stop)],
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    env = env_for(home)
    try:
        for i in range(30):
            proc = hook(project, "uninstall" if i % 2 else "install", env=env)
            assert proc.returncode == 0, proc.stderr
    finally:
        stop.touch()
    written = int(writer.stdout.readline())
    assert writer.wait(timeout=60) == 0
    doc = json.loads(settings.read_text())
    assert not ours(doc)  # the last was an uninstall
    allowed = doc["permissions"]["allow"]
    lost = sorted(set(range(written)) - {int(a[len("Bash(echo "):-1]) for a in allowed})
    assert written > 30 and lost == [], f"{len(lost)} of {written} writes lost: {lost[:10]}"
    assert len(allowed) == written


def test_an_edit_made_by_hand_while_install_writes_is_kept(tmp_path: Path) -> None:
    """The user's editor takes no lock. Install is frozen after it has read the file and
    while it writes its copy (the write seam: SIGSTOP at the temporary file's creation);
    the user saves an edit; install resumes, sees the file changed before it renames,
    reads it again and merges. Every time, in a loop."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}))
    env = {**env_for(home), "QRSPI_GUARD_WRITE_FAULT": "stop@create:settings.json"}
    for i in range(10):
        verb = "uninstall" if i % 2 else "install"
        proc = subprocess.Popen([str(SCRIPT), "hook", verb], cwd=project, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), f"{verb} did not stop at its write: {status}"
        doc = json.loads(settings.read_text())
        doc[f"edit{i}"] = i
        (settings.parent / "editor.tmp").write_text(json.dumps(doc))
        os.rename(settings.parent / "editor.tmp", settings)  # as an editor saves
        os.kill(proc.pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        doc = json.loads(settings.read_text())
        assert ours(doc) is (verb == "install")
        assert doc["model"] == "opus" and [doc[f"edit{n}"] for n in range(i + 1)] == \
            list(range(i + 1)), f"round {i}: an edit was lost: {doc}"


def test_undo_removes_a_settings_file_only_while_it_is_empty_under_the_lock(
        tmp_path: Path) -> None:
    """`adopt --undo` removes a settings file it created once the hook's uninstall left
    it empty (``{}``). It reads it under the settings lock, so a write made meanwhile
    under that lock is never removed: a writer puts content in, then ``{}``, each under
    the lock, and finds its content still there each time it comes back. (Before, the
    file was read without the lock and could be removed after the writer's write.)"""
    import fcntl
    import threading
    import time

    from qrspi_guard.adopt.extras import _remove_emptied

    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    (settings.parent / "keep").touch()  # the directory is never empty: never removed
    done = threading.Event()
    lost: list[int] = []

    def locked_write(text: str, expect: str | None) -> None:
        fd = os.open(settings.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if expect is not None and (not settings.exists() or settings.read_text() != expect):
                lost.append(len(lost))
            (settings.parent / "w.tmp").write_text(text)
            os.rename(settings.parent / "w.tmp", settings)
        finally:
            os.close(fd)

    def writer() -> None:
        try:
            for i in range(400):
                locked_write(f'{{"n": {i}}}', None)
                time.sleep(0.001)  # the writer's other work, outside the lock
                locked_write("{}", f'{{"n": {i}}}')
                time.sleep(0.001)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    removals = 0
    while not done.is_set():
        _remove_emptied(str(settings))
        removals += 1
    thread.join()
    assert removals > 10 and lost == []
