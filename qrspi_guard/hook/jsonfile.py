"""The agent runtimes' own JSON files, read the one way: settings, the plugin's and the
extension's records, the folder-trust rules (for ``hook install``, its warnings and
``doctor``; never on a hook call).

A file is opened without waiting (a FIFO or a device is refused, never read from), read
up to a cap (a larger one is refused), and parsed under the rules of every JSON the
guard reads (:mod:`qrspi_guard.parse.jsondoc`: no ``NaN``, no key twice in one object,
bounded depth). Gemini CLI's files may hold ``//`` and ``/* */`` comments, which it
strips before parsing: :func:`load` does the same when asked.
"""

from __future__ import annotations

import os

from qrspi_guard.parse import jsondoc
from qrspi_guard.parse.capped import FILE_CAP, Refused, read_regular


class Unreadable(ValueError):
    """A file that is there but cannot be used: ``str()`` is one line saying why."""


def read(path: str, cap: int = FILE_CAP, follow: bool = True) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file *path* and its ``fstat``, at most *cap* bytes
    (:func:`qrspi_guard.parse.capped.read_regular`). *follow*: follow a symbolic link
    (a runtime does); else a link is ``ELOOP``. Raises OSError (FileNotFoundError when
    there is no file) or :class:`Unreadable` (not a regular file, larger than *cap*)."""
    try:
        return read_regular(path, cap, follow=follow)
    except Refused as exc:
        raise Unreadable(str(exc)) from None


def load(path: str, comments: bool = False) -> object:
    """The JSON value in *path* (links followed), None when there is no such file.
    *comments*: ``//`` and ``/* */`` comments outside strings are allowed, as Gemini
    CLI allows them. Raises :class:`Unreadable` (its text says why: a FIFO, too large,
    a permission, JSON the guard does not read)."""
    try:
        data, _ = read(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        return jsondoc.loads(data)
    except jsondoc.JsonError as exc:
        if not (comments and exc.syntax):
            raise Unreadable(str(exc)) from None
    try:
        return jsondoc.loads(strip_comments(data.decode("utf-8")))
    except jsondoc.JsonError as exc:
        raise Unreadable(str(exc)) from None


def strip_comments(text: str) -> str:
    """``//`` and ``/* */`` comments outside strings removed, as Gemini CLI strips them."""
    out, i, n, in_string = [], 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)
