"""Every rule as a registered unit: an id, the scope it reads, the causes it reports and
the function that checks it (as yamllint's ``rules/``). Each cause of the catalogue
names the one rule that reports it (its ``rule`` column); a rule's causes are derived
from there, so a new cause touches the catalogue, not this list
(``tests/test_registry.py`` checks every cause names a rule here and every rule has one).

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

from qrspi_guard.contract.causes import CATALOGUE

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


def _rule(id: str, scope: Scope, check: str, judged: bool = True) -> Rule:
    causes = frozenset(c.name for c in CATALOGUE.values() if c.rule == id)
    return Rule(id, scope, causes, f"qrspi_guard.{check}", judged)


RULES: tuple[Rule, ...] = (
    _rule("read", "entry", "engine.entries:read_round", judged=False),
    _rule("names", "entry", "engine.entries:judge_entry"),
    _rule("residue", "entry", "rules.splitresidue:residue_diagnostics"),
    _rule("bytes", "file", "rules.filejudge:judge_file"),
    _rule("finding", "file", "rules.finding:judge_finding"),
    _rule("fields", "file", "rules.fields:field_reporters"),
    _rule("sentinel", "file", "rules.sentinels:judge_clean"),
    _rule("sidecar", "sidecar", "rules.sidecars:judge_sidecar"),
    _rule("sidecar-suffix", "sidecar", "rules.rounds:tag_rules"),
    _rule("tag-pairs", "tag", "rules.rounds:tag_rules"),
    _rule("tag-outcome", "round", "rules.rounds:tag_rules"),
    _rule("completion", "round", "rules.rounds:completion_rules"),
    _rule("inputs", "round", "rules.inputs:interpret"),
    _rule("route", "round", "rules.placement:off_route"),
    _rule("config", "run", "rules.config:config_from"),
    _rule("layout", "layout", "engine.discover:discover_dir"),
    _rule("split", "split", "split.plan:plan_split"),
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
