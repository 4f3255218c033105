"""Reading what a round's rules need beyond its reviewer output (all I/O, no rules).

The verifier's results (`round-NN-verified.md` beside, or the fan-in's outputs inside),
the verifier-disabled marker (inside or beside), a task round's dispatch manifest, and
the bookkeeping files beside it (`round-NN-commit.txt`, `round-NN-scope-set.txt`).
Every one is opened as a regular file, without blocking, and size-capped
(:func:`qrspi_guard.parse.reader.read_bytes`), so a FIFO or a device in its place is a named
diagnostic, never a hang.
"""

from __future__ import annotations

import os

from qrspi_guard.contract.generations import DISPATCH_MANIFEST, Generation
from qrspi_guard.contract.layout import RoundRef, verifier_disabled_name
from qrspi_guard.engine.sides import SideFiles
from qrspi_guard.parse.frontmatter import MAX_BYTES
from qrspi_guard.parse.reader import ReadFailure, read_bytes
from qrspi_guard.rules.inputs import COMMIT, MARKER, SCOPE_SET, Read, RoundInputs


def read_inputs(ref: RoundRef, gen: Generation, names: set[str], beside: frozenset[str],
                sides: SideFiles) -> RoundInputs:
    inputs = RoundInputs()
    n = ref.round

    def inside(name: str) -> Read:
        return capped(read_bytes(os.path.join(ref.round_dir, name))) if name in names \
            else None

    def side(suffix: str) -> Read:
        if n is None or suffix not in beside:
            return None
        return capped(sides.read(ref.step_dir, n, suffix))

    if n is not None:
        inputs.marker_inside = inside(verifier_disabled_name(n))
    inputs.marker_beside = side(MARKER)
    if gen.verified_beside_suffix:
        inputs.verified = side(gen.verified_beside_suffix)
    audit, kept = gen.output_named("fanin_audit"), gen.output_named("kept_list")
    if audit:
        inputs.audit = inside(audit)
    if kept:
        inputs.kept = inside(kept)
    if ref.is_task or ref.kind == "unknown_step":
        inputs.manifest = inside(DISPATCH_MANIFEST)
    if ref.has_status_file:  # bookkeeping of real rounds only
        inputs.anchor = side(COMMIT)
        inputs.scope_set = side(SCOPE_SET)
    return inputs


def capped(data: bytes | ReadFailure) -> bytes | ReadFailure:
    """A bookkeeping file over the size cap is not parsed (reads stop just past it)."""
    if isinstance(data, bytes) and len(data) > MAX_BYTES:
        return ReadFailure("is over 1 MiB; not read")
    return data


def read_anchor(ref: RoundRef, sides: SideFiles) -> Read:
    """`round-NN-commit.txt` beside the round, for choosing its configuration (§7)."""
    if ref.round is None or not ref.has_status_file:
        return None
    if COMMIT not in sides.beside(ref.step_dir, ref.round):
        return None
    return capped(sides.read(ref.step_dir, ref.round, COMMIT))
