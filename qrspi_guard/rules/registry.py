"""Every rule as a registered unit: an id, the scope it reads, the causes it reports and
the function that checks it (as yamllint's ``rules/``). Each cause of the catalogue is
reported by exactly one rule here (``tests/test_registry.py`` enumerates them).

Scopes, from the narrowest:

- ``entry``    one name in a round directory (its name, a link, a read failure)
- ``file``     one reviewer-output file's bytes and fields
- ``sidecar``  one verifier sidecar (its fields, its suffix against the round's generation)
- ``tag``      one tag's files together, which a single write can break either way round
- ``round``    the round as a whole, once complete (expected reviewers, inputs, totals)
- ``run``      the run's config.md
- ``layout``   the tree (a step or round directory's name)
- ``split``    the ``split`` command's own

What is derived from here: the causes the hook judges on a write (:data:`WRITE_SCOPES`:
it reports what the entry, file, sidecar and tag rules say about the written file, never
a round's outcome), its either-way tag rules (:data:`TAG_CAUSES`), JUnit's error set
(:data:`UNJUDGED`: the file could not be judged at all), and the fast acceptance path's
duty (``rules.fastjudge`` must decline every file a ``file`` or ``sidecar`` rule could
report, proven over the cause fixtures by the registry's test).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

Scope = Literal["entry", "file", "sidecar", "tag", "round", "run", "layout", "split"]


class Rule(NamedTuple):
    """One rule (a tuple: listing the rules costs nothing at import)."""

    id: str
    scope: Scope
    causes: frozenset[str]
    #: the function that checks it, as ``module:function`` (resolved on first use, so
    #: that listing the rules imports none of them)
    check: str
    #: False: the rule says the guard could not judge the file or round at all
    judged: bool = True

    def function(self) -> Callable[..., Any]:
        module, name = self.check.split(":")
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def _rule(id: str, scope: Scope, causes: str, check: str, judged: bool = True) -> Rule:
    return Rule(id, scope, frozenset(causes.split()), f"qrspi_guard.{check}", judged)


RULES: tuple[Rule, ...] = (
    _rule("read", "entry", "unreadable_file unreadable_dir", "engine.entries:read_round",
          judged=False),
    _rule("names", "entry", "bad_tag_name bad_finding_filename unknown_file_in_round_dir "
          "symlink_in_round_dir clean_noncanonical", "engine.entries:judge_entry"),
    _rule("residue", "entry", "split_incomplete", "rules.splitresidue:residue_diagnostics"),
    _rule("bytes", "file", "file_too_large not_utf8 utf8_bom crlf_line_endings "
          "trailing_newline no_frontmatter malformed_yaml duplicate_key",
          "rules.filejudge:judge_file"),
    _rule("finding", "file", "missing_finding_id finding_id_malformed missing_severity "
          "severity_out_of_enum missing_change_type change_type_out_of_enum "
          "missing_referenced_files referenced_files_not_list referenced_files_malformed "
          "missing_artifact missing_reviewer missing_message combined_findings "
          "reviewer_tag_mismatch fnum_mismatch artifact_step_mismatch escalation_required",
          "rules.finding:judge_finding"),
    _rule("fields", "file", "missing_round round_not_integer round_mismatch "
          "unknown_frontmatter_key", "rules.fields:field_reporters"),
    _rule("sentinel", "file", "clean_nonzero_findings clean_has_body vf_sentinel_invalid",
          "rules.sentinels:judge_clean"),
    _rule("sidecar", "sidecar", "sidecar_malformed score_out_of_range",
          "rules.sidecars:judge_sidecar"),
    _rule("sidecar-suffix", "sidecar", "sidecar_wrong_extension", "rules.rounds:tag_rules"),
    _rule("tag-pairs", "tag", "duplicate_finding_id clean_and_findings_coexist",
          "rules.rounds:tag_rules"),
    _rule("tag-outcome", "round", "fnum_gap orphan_sidecar verify_failed",
          "rules.rounds:tag_rules"),
    _rule("completion", "round", "expected_tag_no_output unrouted_tag sidecar_missing "
          "verified_totals_mismatch fanin_audit_malformed fanin_audit_mismatch "
          "kept_findings_mismatch", "rules.rounds:completion_rules"),
    _rule("inputs", "round", "commit_anchor_malformed scope_set_malformed "
          "verifier_marker_invalid dispatch_manifest_malformed", "rules.inputs:interpret"),
    _rule("route", "round", "step_not_on_route", "rules.placement:off_route"),
    _rule("config", "run", "config_missing config_field_missing config_field_invalid "
          "config_key_conflict config_legacy_key config_field_defaulted "
          "config_key_outside_frontmatter config_inline_comment", "rules.config:config_from"),
    _rule("layout", "layout", "bad_round_dir_name legacy_layout unknown_step_dir",
          "engine.discover:discover_dir"),
    _rule("split", "split", "split_would_mix_attempts", "split.plan:plan_split"),
)

SCOPE_OF: dict[str, Scope] = {cause: rule.scope for rule in RULES for cause in rule.causes}
#: the scopes a single write is judged by (the hook)
WRITE_SCOPES: frozenset[str] = frozenset({"entry", "file", "sidecar", "tag"})
#: the causes the hook judges on a write
WRITE_CAUSES: frozenset[str] = frozenset(c for c, s in SCOPE_OF.items() if s in WRITE_SCOPES)
#: tag rules a single write can break either way round (counted when the write brings
#: them, whichever file of the tag they name)
TAG_CAUSES: frozenset[str] = frozenset(c for c, s in SCOPE_OF.items() if s == "tag")
#: the guard could not judge the file or round at all (a JUnit `<error>`)
UNJUDGED: frozenset[str] = frozenset(c for r in RULES if not r.judged for c in r.causes)


def causes_of(*scopes: Scope) -> frozenset[str]:
    return frozenset(c for c, s in SCOPE_OF.items() if s in scopes)
