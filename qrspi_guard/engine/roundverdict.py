"""One round's verdict: its judged files, its inputs and the round rules, assembled.

:func:`evaluate_round` is the one unit every verdict comes from (through
:class:`qrspi_guard.judge.Judge`): ``check`` runs it per round, ``watch`` re-runs it
when a round changes (with its cache of settled files' verdicts), the hook with the
content about to be written as an overlay. All reading is done by :mod:`.entries` and
:mod:`.inputs` before any rule runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from qrspi_guard.contract.generations import Generation
from qrspi_guard.contract.layout import RoundRef
from qrspi_guard.contract.matrix import (
    Expectation,
    expectation_for_step,
    expectation_from_tags,
    with_extra,
)
from qrspi_guard.contract.runconfig import Overrides, RunConfig
from qrspi_guard.engine.entries import Context, EntryCache, RoundFiles, read_round
from qrspi_guard.engine.results import Keep, RoundResult, kept, sort_diagnostics
from qrspi_guard.engine.roundinputs import read_inputs
from qrspi_guard.records import replace
from qrspi_guard.rules.consequences import roots_only
from qrspi_guard.rules.facts import FileFacts
from qrspi_guard.rules.inputs import Interpreted, interpret
from qrspi_guard.rules.placement import off_route, round_from_findings, suffixed_dir
from qrspi_guard.rules.rounds import RoundFacts, awaited, completion_rules, tag_rules


def evaluate_round(ref: RoundRef, run: RunConfig, overrides: Overrides,
                   complete: bool = True, ignore_temp: bool = False,
                   ctx: Context | None = None, *,
                   overlay: Mapping[str, bytes | None] | None = None,
                   cache: EntryCache | None = None, keep: Keep | None = None) -> RoundResult:
    """Every rule for one round: the one function a verdict comes from.

    *complete* False applies the per-file and tag rules only (``watch`` before the round
    settles, the hook); *ignore_temp* is ``watch`` mode; *overlay* stands in for bytes
    not on disk yet (the hook, ``--stdin-filename``); *cache* gives entries' verdicts
    kept since the last event (``watch``); *keep* is the rule selection, applied before
    the status is decided."""
    ctx = ctx or Context(overrides)
    files = read_round(ref, ctx, overlay, ignore_temp, cache)
    return assemble(ref, run, ctx, files, complete, keep)


def _names(round_dir: str) -> set[str]:
    try:
        return set(os.listdir(round_dir))
    except OSError:
        return set()


def assemble(ref: RoundRef, run: RunConfig, ctx: Context, files: RoundFiles,
             complete: bool, keep: Keep | None = None) -> RoundResult:
    """The round rules over judged files and the round's inputs; what *keep* leaves out
    is dropped, then the status is decided (once)."""
    overrides = ctx.overrides
    inputs = read_inputs(ref, files.gen, files.names, files.beside, ctx.sides)
    diags = list(files.diags)
    for r in files.reports:
        diags.extend(r.diagnostics)
    got = interpret(ref, files.gen, inputs)
    diags.extend(got.diags)
    facts_list = [r.facts for r in files.reports]
    if ref.round is None:  # a pseudo-round: its number comes from its findings
        number, problem = round_from_findings(ref, facts_list)
        if problem is not None:
            diags.append(problem)
        ref = replace(ref, round=number)
    if ref.kind == "suffixed":
        diags.append(suffixed_dir(ref))
        complete = False
    facts = round_facts(ref, run, overrides, facts_list, gen=files.gen, inputs=got,
                        names=files.names)
    if ref.kind != "suffixed":
        diags.extend(tag_rules(facts))
    verdict = completion_rules(facts) if complete else awaited(facts)
    diags.extend(verdict.diagnostics)
    result = RoundResult(ref, "ok", [], run, files=files.count, complete=complete,
                         expected_tags=verdict.expected_tags,
                         reported_tags=verdict.reported_tags, awaiting=verdict.awaiting,
                         file_names=[f.name for f in facts.files], protocol=files.gen.name,
                         facts=facts.files if overrides.keep_facts else [])
    route = off_route(ref, run)
    if route is not None:
        diags.append(route)
    result.diagnostics = roots_only(kept(sort_diagnostics(diags), keep))
    if keep is not None and run.diagnostics:  # (check's RunConfigs filters them already)
        run_diags = kept(run.diagnostics, keep)
        if len(run_diags) != len(run.diagnostics):
            result.run = replace(run, diagnostics=run_diags)
    result.status = result.decided()
    return result


def expectation_of(ref: RoundRef, run: RunConfig, overrides: Overrides,
                   manifest_tags: tuple[str, ...] | None) -> Expectation | None:
    """What the round must hear from: `--expect`, else a task round's manifest, else the
    step's matrix row (when the run's column is known)."""
    if overrides.expect:
        return expectation_from_tags(overrides.expect)
    if manifest_tags is not None:
        return expectation_from_tags(manifest_tags)
    if not ref.has_matrix or ref.step is None or run.second_reviewer is None:
        return None
    found = expectation_for_step(ref.step, run.second_reviewer)
    if found is None:
        return None
    return with_extra(found, ref.step, overrides.extra_expected)


def round_facts(ref: RoundRef, run: RunConfig, overrides: Overrides, files: list[FileFacts],
                *, gen: Generation | None = None, inputs: Interpreted | None = None,
                names: set[str] | None = None, ctx: Context | None = None) -> RoundFacts:
    """Gather what the round rules need: the expectation, verifier state, results.
    Without *inputs* (the hook), the round's inputs are read here."""
    if gen is None or inputs is None or names is None:
        ctx = ctx or Context(overrides)
        names = names if names is not None else (_names(ref.round_dir) or
                                                 {f.name for f in files})
        beside = ctx.sides.beside(ref.step_dir, ref.round)
        assert ctx.resolver is not None
        gen = gen or ctx.resolver.of(ref, names, beside)
        inputs = interpret(ref, gen, read_inputs(ref, gen, names, beside, ctx.sides))
    fanin_verified = inputs.audit is not None or inputs.kept_lines is not None or \
        inputs.kept_path is not None
    return RoundFacts(
        ref.round_dir, ref.step, ref.round or 0, ref.is_task, files,
        expectation=expectation_of(ref, run, overrides, inputs.manifest_tags),
        verifier_enabled=run.verifier_enabled, waived=inputs.waived,
        verified=inputs.verified_path is not None or fanin_verified,
        require_sidecars=overrides.require_sidecars, gen=gen, thresholds=overrides.thresholds,
        verified_path=inputs.verified_path, verified_totals=inputs.verified_totals,
        verified_error=inputs.verified_error, audit=inputs.audit, audit_path=inputs.audit_path,
        kept_lines=inputs.kept_lines, kept_path=inputs.kept_path, names=set(names))
