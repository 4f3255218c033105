"""One defect, one diagnostic: what only follows from another diagnostic on the same
files is left out where that other one, its root, is reported.

A reviewer that names its finding ``quality-claude.finding-F1.md`` did write output, so
"Reviewer quality-claude wrote no per-finding files" (re-dispatch it) would contradict
the one fix that helps (rename the file); a sidecar written as ``.score.yml`` in a
fan-in round is the reason its finding has no sidecar (generations.md §2: one
diagnostic). :data:`CONSEQUENCES` lists every such pair once, each with the subject
the two must share (the same file, the same finding, the same tag, or the round);
:func:`roots_only` applies them to one round's diagnostics (or one run's config.md),
after the rule selection, so a root that is ignored leaves its consequence reported:
the defect is never hidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable

from qrspi_guard.contract.diagnostics import Diagnostic
from qrspi_guard.records import record

#: ``<tag>.finding-F<NN>`` at the start of a finding's or a sidecar's name, as written
#: (a misnamed one too: ``F1``, ``finding-1``, an upper-case or underscored tag)
_FINDING_NAME = re.compile(r"(?P<tag>[^./]+)\.finding-F?(?P<n>[0-9]{1,9})(?:\.|$)")

Subject = Callable[[Diagnostic], Hashable]


def tag_meant(tag: str) -> str:
    """The tag a name off the tag grammar most likely means (``Quality_Claude`` is
    ``quality-claude``)."""
    return tag.lower().replace("_", "-")


def _file(d: Diagnostic) -> Hashable:
    return d.file


def _place(d: Diagnostic) -> Hashable:
    return d.path


def _finding(d: Diagnostic) -> Hashable:
    """The finding a finding's or a sidecar's diagnostic is about: (tag, F number)."""
    m = _FINDING_NAME.match(d.file or "")
    return (tag_meant(m.group("tag")), int(m.group("n"))) if m else None


def _tag(d: Diagnostic) -> Hashable:
    """The tag a diagnostic is about (a file's, read from its name when it has none)."""
    if d.tag:
        return tag_meant(d.tag)
    m = _FINDING_NAME.match(d.file or "")
    if m:
        return tag_meant(m.group("tag"))
    if d.file and "." in d.file:
        return tag_meant(d.file.split(".", 1)[0])
    return None


def _written_tag(d: Diagnostic) -> Hashable:
    """The tag exactly as a file's name writes it (``unrouted_tag`` names that one)."""
    if d.tag:
        return d.tag
    return d.file.split(".", 1)[0] if d.file and "." in d.file else None


def _round(d: Diagnostic) -> Hashable:
    return "round"  # (applied to one round's diagnostics at a time)


@record(frozen=True)
class Consequence:
    """*consequence* is left out where *root* is reported about the same *subject*
    (each side's subject read by *of_root* and *of_consequence*)."""

    root: str
    consequence: str
    why: str
    of_root: Subject
    of_consequence: Subject


#: every pair, once: the root, what follows from it, why, and the subject they share
CONSEQUENCES: tuple[Consequence, ...] = (
    Consequence("sidecar_wrong_extension", "sidecar_missing",
                "its finding counts as having no sidecar (generations.md §2)",
                _finding, _finding),
    Consequence("sidecar_wrong_extension", "sidecar_malformed",
                "it is read with the other generation's grammar", _file, _file),
    Consequence("sidecar_wrong_extension", "score_out_of_range",
                "it is read with the other generation's grammar", _file, _file),
    Consequence("bad_finding_filename", "expected_tag_no_output",
                "the reviewer wrote output, under a name off the grammar", _tag, _tag),
    Consequence("bad_finding_filename", "orphan_sidecar",
                "the sidecar's finding is there, misnamed", _finding, _finding),
    Consequence("bad_tag_name", "expected_tag_no_output",
                "the reviewer wrote output, under a tag off the grammar", _tag, _tag),
    Consequence("bad_tag_name", "unrouted_tag",
                "the tag is off the grammar, so no row can route it",
                _written_tag, _written_tag),
    Consequence("bad_tag_name", "orphan_sidecar",
                "the sidecar's finding is there, under a tag off the grammar",
                _finding, _finding),
    Consequence("vf_sentinel_invalid", "expected_tag_no_output",
                "the reviewer wrote a skip sentinel that does not stand for output",
                _tag, _tag),
    Consequence("split_incomplete", "expected_tag_no_output",
                "the reviewer's split did not finish", _tag, _tag),
    Consequence("duplicate_finding_id", "fnum_mismatch",
                "the repeated id is the one that differs from the file name",
                _file, _file),
    Consequence("config_key_conflict", "config_legacy_key",
                "keeping second_reviewer only removes the older key too",
                _place, _place),
    Consequence("fanin_audit_mismatch", "kept_findings_mismatch",
                "both are one fan-in run's outputs, stale together", _round, _round),
)
#: consequence cause -> its pairs
_BY_CONSEQUENCE: dict[str, list[Consequence]] = {}
for _c in CONSEQUENCES:
    _BY_CONSEQUENCE.setdefault(_c.consequence, []).append(_c)


def roots_only(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """*diags* (one round's, or one config.md's) without the consequences of a root
    among them, in their order (time linear in their number)."""
    diags = list(diags)
    if not any(d.cause in _BY_CONSEQUENCE for d in diags):
        return diags
    by_cause: dict[str, list[Diagnostic]] = {}
    for d in diags:
        by_cause.setdefault(d.cause, []).append(d)
    subjects: dict[Consequence, set[Hashable]] = {}

    def follows(d: Diagnostic) -> bool:
        for pair in _BY_CONSEQUENCE.get(d.cause, ()):
            if pair.root not in by_cause:
                continue
            if pair not in subjects:
                subjects[pair] = {pair.of_root(r) for r in by_cause[pair.root]} - {None}
            if pair.of_consequence(d) in subjects[pair]:
                return True
        return False

    return [d for d in diags if not follows(d)]
