"""A diagnostic's content fingerprint: the identity SARIF's ``partialFingerprints``
carry and the baseline matches on (cli.md).

The fingerprint hashes the cause, the place relative to the repository root and what
was found (file, field, tag, value), never a line number, so it stays the same when
unrelated lines move. Diagnostics that hash alike are told apart by their order
(``<digest>:1``, ``<digest>:2``...).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

from qrspi_guard.contract.diagnostics import Diagnostic

#: the key of the fingerprint in SARIF's partialFingerprints
FINGERPRINT = "qrspiGuard/v1"


def source_root(start: str | None = None) -> str:
    """The git top level above *start* (default: the working directory), else *start*."""
    here = os.path.abspath(start or os.getcwd())
    d = here
    while True:
        if os.path.lexists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return here
        d = parent


def relative(path: str, root: str) -> str:
    """*path* relative to *root*, `/`-separated (``.`` for the root itself)."""
    rel = os.path.relpath(os.path.abspath(path or "."), root)
    return "." if rel == os.curdir else rel.replace(os.sep, "/")


def fingerprint(d: Diagnostic, where: str, seen: dict[str, int]) -> str:
    """*d*'s fingerprint at *where* (its path relative to the root); *seen* counts the
    digests met so far, in output order."""
    key = "\0".join([d.cause, where, d.file or "", d.field or "", d.tag or "", d.value or ""])
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    n = seen.get(digest, 0) + 1
    seen[digest] = n
    return f"{digest}:{n}"


def fingerprints(diags: Iterable[Diagnostic], root: str) -> list[tuple[str, str]]:
    """(relative path, fingerprint) of each of *diags*, in order."""
    seen: dict[str, int] = {}
    out = []
    for d in diags:
        where = relative(d.path, root)
        out.append((where, fingerprint(d, where, seen)))
    return out
