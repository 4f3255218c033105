"""read_regular: the one reader of "a regular file, opened without waiting, read up to a
cap" (parse/capped.py), which the hook's JSON files, the settings file, the baseline,
--config, findings.json, adopt's scripts, the loop's captures and anchors and watch's
status file all go through."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from qrspi_guard.parse.capped import FILE_CAP, Refused, read_regular


@pytest.fixture
def deadline() -> Iterator[None]:
    """A read that would block fails the test (SIGALRM) instead of hanging it."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        pytest.skip("SIGALRM is delivered to the main thread only")

    def late(signum: int, frame: object) -> None:
        raise TimeoutError("read_regular waited")

    old = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, 5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("size", [0, 9, 10])
def test_a_regular_file_up_to_the_cap_is_read_whole(tmp_path: Path, size: int) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * size)
    data, st = read_regular(str(f), 10)
    assert data == b"x" * size and stat.S_ISREG(st.st_mode) and st.st_size == size


def test_a_file_over_the_cap_is_refused_with_its_first_cap_plus_one_bytes(
        tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"0123456789ab")
    with pytest.raises(Refused) as got:
        read_regular(str(f), 10)
    assert got.value.too_large and not got.value.is_dir
    assert got.value.data == b"0123456789a"
    assert str(got.value) == "larger than 10 bytes"


def test_the_default_cap_is_the_file_cap_and_is_said_in_mib(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * FILE_CAP)
    assert len(read_regular(str(f))[0]) == FILE_CAP
    with f.open("ab") as fh:
        fh.write(b"x")
    with pytest.raises(Refused, match=r"^larger than 1 MiB$"):
        read_regular(str(f))


def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path: Path, deadline: None) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(Refused) as got:
        read_regular(str(fifo))
    assert str(got.value) == "not a regular file" and not got.value.too_large
    assert stat.S_ISFIFO(got.value.st.st_mode)


def test_a_link_to_a_fifo_is_refused_at_once_too(tmp_path: Path, deadline: None) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to("fifo")
    with pytest.raises(Refused, match="^not a regular file$"):
        read_regular(str(tmp_path / "link"))


def test_a_fifo_swapped_in_after_the_look_is_opened_without_waiting_and_refused(
        tmp_path: Path, deadline: None, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "regular").write_bytes(b"")
    real_stat = os.stat

    def looked_before_the_swap(path: str, *args: object, **kwargs: object) -> os.stat_result:
        if path == str(fifo):
            return real_stat(tmp_path / "regular")
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", looked_before_the_swap)
    with pytest.raises(Refused) as got:
        read_regular(str(fifo))
    assert str(got.value) == "not a regular file" and stat.S_ISFIFO(got.value.st.st_mode)


def test_a_device_is_refused(deadline: None) -> None:
    with pytest.raises(Refused, match="^not a regular file$"):
        read_regular("/dev/zero")


def test_a_socket_is_refused_as_not_a_regular_file(tmp_path: Path) -> None:
    """Opened, a socket is ENXIO ("No such device or address"); it is looked at first."""
    subprocess.run([sys.executable, "-c", "import socket; "
                    "socket.socket(socket.AF_UNIX).bind('sock')"], cwd=tmp_path, check=True)
    with pytest.raises(Refused, match="^not a regular file$") as got:
        read_regular(str(tmp_path / "sock"))
    assert stat.S_ISSOCK(got.value.st.st_mode)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused) as got:
        read_regular(str(tmp_path))
    assert got.value.is_dir and str(got.value) == "not a regular file"


def test_a_symbolic_link_is_followed_unless_follow_is_false(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"data")
    (tmp_path / "link").symlink_to("real")
    assert read_regular(str(tmp_path / "link"))[0] == b"data"
    with pytest.raises(OSError) as got:
        read_regular(str(tmp_path / "link"), follow=False)
    assert got.value.errno == errno.ELOOP
    assert read_regular(str(tmp_path / "real"), follow=False)[0] == b"data"


def test_a_dangling_link_not_followed_is_eloop_not_missing(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("nowhere")
    with pytest.raises(FileNotFoundError):
        read_regular(str(tmp_path / "link"))
    with pytest.raises(OSError) as got:
        read_regular(str(tmp_path / "link"), follow=False)
    assert got.value.errno == errno.ELOOP


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular(str(tmp_path / "absent"))
    (tmp_path / "file").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        read_regular(str(tmp_path / "file" / "below"))


def test_names_are_resolved_relative_to_dir_fd(tmp_path: Path, deadline: None) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "f").write_bytes(b"inside")
    (tmp_path / "f").write_bytes(b"outside")
    os.mkfifo(sub / "fifo")
    (sub / "link").symlink_to("f")
    dfd = os.open(sub, os.O_RDONLY | os.O_DIRECTORY)
    try:
        data, st = read_regular("f", dir_fd=dfd)
        assert data == b"inside" and st.st_size == 6
        assert read_regular("link", dir_fd=dfd)[0] == b"inside"
        with pytest.raises(OSError) as got:
            read_regular("link", dir_fd=dfd, follow=False)
        assert got.value.errno == errno.ELOOP
        with pytest.raises(Refused, match="^not a regular file$"):
            read_regular("fifo", dir_fd=dfd)
        with pytest.raises(FileNotFoundError):
            read_regular("absent", dir_fd=dfd)
    finally:
        os.close(dfd)


def test_an_unreadable_file_is_an_os_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a file of mode 000")
    f = tmp_path / "f"
    f.write_bytes(b"x")
    f.chmod(0)
    with pytest.raises(PermissionError):
        read_regular(str(f))


def test_no_descriptor_is_left_open(tmp_path: Path) -> None:
    fds = set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    if fds is None:
        pytest.skip("no /proc/self/fd")
    (tmp_path / "f").write_bytes(b"0123456789ab")
    for _ in range(3):
        read_regular(str(tmp_path / "f"))
        with pytest.raises(Refused):
            read_regular(str(tmp_path / "f"), 4)
    assert set(os.listdir("/proc/self/fd")) == fds
