"""Reading split's input: a file, a FIFO or ``-`` (standard input), with a size cap.

cli.md: split's input is a stream that may be a pipe or a device, read with a size
cap. Reading waits for a FIFO's writer (the reviewer may still be running) but never
holds more than :data:`MAX_INPUT_BYTES` + 1 bytes: ``split /dev/zero`` or an endless
pipe ends with one line, never with memory exhaustion.
"""

from __future__ import annotations

import os

from qrspi_guard.parse.capped import FILE_CAP, read_capped
from qrspi_guard.split.errors import InputTooLarge, SplitInputError
from qrspi_guard.textsafe import one_line

#: Far above any real reviewer's stdout (every file it becomes is capped at 1 MiB).
MAX_INPUT_BYTES = 16 * FILE_CAP


def read_input(path: str, cap: int = MAX_INPUT_BYTES) -> bytes:
    """STDOUT's bytes. Raises :class:`SplitInputError` (exit 2) when it cannot be read,
    :class:`InputTooLarge` (exit 1) when it is over the cap."""
    shown = "standard input" if path == "-" else f"STDOUT {one_line(path)}"
    try:
        if path == "-":
            data = read_capped(0, cap)  # fd 0 itself: works even when sys.stdin is None
        else:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                data = read_capped(fd, cap)
            finally:
                os.close(fd)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise SplitInputError(f"cannot read {shown}: {why}") from exc
    if data is None:
        raise InputTooLarge(f"malformed input: {shown} is larger than "
                            f"{cap // (1024 * 1024)} MiB, which no reviewer's stdout is; "
                            "nothing written")
    return data
