"""The scripts adopt replaces, the command each becomes, and the versions it knows.

One table (:data:`DROPINS`) says which upstream script is which drop-in (loop.md); one
(:data:`KNOWN`) says which versions of each adopt recognises, by the sha256 of the
script's bytes. The versions known are those upstream's own suites are run against
(the four suites that measure the drop-ins, loop.md): a script with another hash is a
version the drop-in was not measured against, or one with local changes, and adopt
refuses it, naming the script, unless told to go ahead (``--force``), or unless the
user lists it as known (``--known FILE``, lines as ``sha256sum`` prints them: a fork's
own versions, checked by its owner).
"""

from __future__ import annotations

import hashlib
import os
import re

from qrspi_guard.errors import InputError
from qrspi_guard.records import record
from qrspi_guard.textsafe import one_line


@record(frozen=True)
class DropIn:
    """An upstream script (its path in the checkout) and the guard command replacing it."""

    script: str
    command: str

    @property
    def name(self) -> str:
        return self.script.rsplit("/", 1)[-1]


#: the four scripts, in the order a round runs them
DROPINS: tuple[DropIn, ...] = (
    DropIn("scripts/review-prep.sh", "review-prep"),
    DropIn("scripts/round-prepare.sh", "prepare"),
    DropIn("scripts/await-round.sh", "await"),
    DropIn("scripts/verifier-fan-in.sh", "fan-in"),
)
BY_NAME = {d.name: d for d in DROPINS}

#: script -> sha256 of a version adopt knows -> where that version comes from
KNOWN: dict[str, dict[str, str]] = {
    "scripts/verifier-fan-in.sh": {
        "6f0ebd4ee6730292f539c604808cb1a62adc0d77e1af06740e327d2a6e03e990":
            "upstream f0c88053, the version upstream's fan-in suite runs against",
    },
    "scripts/await-round.sh": {
        "8526f1c5b18a7910926ef50b3d31067b0146d58b5329b402d63c6e36d2512b16":
            "upstream bec7e301, the newest await-round.sh upstream's await suites run against",
    },
    "scripts/round-prepare.sh": {
        "04e729695fcd780056aed833179dcd6283a9702d88e06d1e95e6e88dcd5bcd41":
            "upstream 3b935834, the newest round-prepare.sh upstream's prepare suite runs "
            "against",
    },
    "scripts/review-prep.sh": {
        "4ab9acc589d384ba40d24cd7a6ee31724a810de10a0b486aa465be7c87f9281a":
            "upstream e6f04329, the version upstream's review-prep suites run against",
    },
}

#: the largest --known file read
MAX_KNOWN = 1 << 20
_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def version_of(script: str, digest: str, extra: dict[str, dict[str, str]] | None = None,
               ) -> str | None:
    """Where the version of *script* with sha256 *digest* comes from, or None when adopt
    does not know it (neither built in nor in *extra*, from ``--known``)."""
    label = KNOWN.get(script, {}).get(digest)
    if label is None and extra is not None:
        label = extra.get(script, {}).get(digest)
    return label


def read_known(path: str) -> dict[str, dict[str, str]]:
    """The versions a ``--known FILE`` lists: lines as ``sha256sum`` prints them
    (``HASH  PATH``), PATH's last component naming one of the four scripts; blank lines
    and ``#`` comments are skipped. Raises :class:`InputError` (one line) for a file that
    cannot be read or a line of another form."""
    from qrspi_guard.adopt.store import look
    from qrspi_guard.parse.nofollow import Dir

    shown = one_line(path)
    try:
        with Dir.named(os.path.dirname(path)) as d:
            seen = look(d, os.path.basename(path), follow=True, cap=MAX_KNOWN)
    except OSError as exc:
        raise InputError(f"--known {shown}: cannot be read: {exc.strerror or exc}") from None
    if seen.data is None:
        raise InputError(f"--known {shown}: {seen.why or 'not found'}")
    data = seen.data
    known: dict[str, dict[str, str]] = {}
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        dropin = BY_NAME.get(m.group(2).rsplit("/", 1)[-1]) if m else None
        if m is None or dropin is None:
            names = ", ".join(BY_NAME)
            raise InputError(f"--known {shown}: line {n} is not 'SHA256  PATH' naming one of "
                             f"{names}: {one_line(line, 120)}")
        known.setdefault(dropin.script, {})[m.group(1).lower()] = f"listed in {shown}"
    return known
