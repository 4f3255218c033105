"""One round's verdict: its judged files, its inputs and the round rules, assembled.

:func:`evaluate_round` is the unit ``check`` runs per round and ``watch`` re-runs when
a round changes; :func:`round_result` is the round-level half over files already
judged (``watch`` keeps one report per settled file). All reading is done by
:mod:`.entries` and :mod:`.inputs` before any rule runs.
"""

from __future__ import annotations

import os
from collections import Counter

from qrspi_guard.config import Overrides, RunConfig
from qrspi_guard.contract.generations import Generation
from qrspi_guard.diagnostics import Diagnostic, diag
from qrspi_guard.discover import RoundRef
from qrspi_guard.engine.entries import Context, RoundFiles, read_round
from qrspi_guard.engine.inputs import COMMIT, MARKER, SCOPE_SET, RoundInputs, read_inputs
from qrspi_guard.engine.results import RoundResult, sort_diagnostics
from qrspi_guard.engine.sides import SideFiles
from qrspi_guard.layout import bounded_number, verifier_disabled_name
from qrspi_guard.matrix import Expectation, expectation_for_step, expectation_from_tags, with_extra
from qrspi_guard.reader import ReadFailure
from qrspi_guard.records import field, record, replace
from qrspi_guard.rules import bookkeeping as bk
from qrspi_guard.rules.files import FileFacts, FileReport
from qrspi_guard.rules.rounds import RoundFacts, awaited, completion_rules, tag_rules
from qrspi_guard.rules.verifier import Audit


def evaluate_round(ref: RoundRef, run: RunConfig, overrides: Overrides,
                   complete: bool = True, ignore_temp: bool = False,
                   ctx: Context | None = None) -> RoundResult:
    """Every rule for one round. *complete* False applies the per-file and tag rules
    only (``watch`` before the round settles); *ignore_temp* is ``watch`` mode."""
    ctx = ctx or Context(overrides)
    files = read_round(ref, ctx, ignore_temp=ignore_temp)
    return assemble(ref, run, ctx, files, complete)


def round_result(ref: RoundRef, run: RunConfig, overrides: Overrides,
                 reports: list[FileReport], entry_diags: list[Diagnostic], count: int,
                 complete: bool = True, *, ctx: Context | None = None,
                 gen: Generation | None = None, names: set[str] | None = None,
                 beside: frozenset[str] | None = None) -> RoundResult:
    """The round-level half of :func:`evaluate_round`, over per-file reports already
    made (``watch``); the generation, names and side files are found when not given."""
    if ctx is None or ctx.overrides != overrides:
        keep = ctx is not None and ctx.overrides.protocol == overrides.protocol
        ctx = Context(overrides, ctx.sides if ctx is not None else SideFiles(),
                      ctx.resolver if keep and ctx is not None else None)
    if names is None:
        names = _names(ref.round_dir) or {r.facts.name for r in reports}
    if beside is None:
        beside = ctx.sides.beside(ref.step_dir, ref.round)
    if gen is None:
        assert ctx.resolver is not None
        gen = ctx.resolver.of(ref, names, beside)
    files = RoundFiles(reports, entry_diags, count, gen, names, beside)
    return assemble(ref, run, ctx, files, complete)


def _names(round_dir: str) -> set[str]:
    try:
        return set(os.listdir(round_dir))
    except OSError:
        return set()


def assemble(ref: RoundRef, run: RunConfig, ctx: Context, files: RoundFiles,
             complete: bool) -> RoundResult:
    """The round rules over judged files and the round's inputs."""
    overrides = ctx.overrides
    inputs = read_inputs(ref, files.gen, files.names, files.beside, ctx.sides)
    diags = list(files.diags)
    for r in files.reports:
        diags.extend(r.diagnostics)
    got = interpret(ref, files.gen, inputs)
    diags.extend(got.diags)
    facts_list = [r.facts for r in files.reports]
    if ref.round is None:  # a pseudo-round: its number comes from its findings
        number, problem = _round_from_findings(ref, facts_list)
        if problem is not None:
            diags.append(problem)
        ref = replace(ref, round=number)
    if ref.kind == "suffixed":
        diags.append(diag("bad_round_dir_name", f"directory {os.path.basename(ref.round_dir)!r}"
                          " is not round-NN (its files are judged with the per-file rules, "
                          f"as round {ref.round})", path=ref.round_dir, step=ref.step,
                          round=ref.round))
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
                         file_names=[f.name for f in facts.files], protocol=files.gen.name)
    if (run.route is not None and ref.step and ref.kind == "step"
            and not _on_route(ref.step, run.route)):
        diags.append(diag("step_not_on_route", f"step {ref.step} is not on the run's route "
                          f"({', '.join(run.route)})", path=ref.round_dir, step=ref.step,
                          round=ref.round))
    result.diagnostics = sort_diagnostics(diags)
    if any(d.level == "error" for d in result.all_diagnostics):
        result.status = "halt"
    elif not complete:
        result.status = "pending"
    return result


def _on_route(step: str, route: tuple[str, ...]) -> bool:
    if step == "integration":
        return bool({"integration", "integrate", "implement-gate"} & set(route))
    return step in route


def _round_from_findings(ref: RoundRef, files: list[FileFacts]
                         ) -> tuple[int | None, Diagnostic | None]:
    """The R-number the findings' `finding_id`s agree on (disagreement: round_mismatch)."""
    said: Counter[int] = Counter()
    for f in files:
        if f.finding_id:
            number = bounded_number(f.finding_id[1:].split("-", 1)[0])
            if number is not None:
                said[number] += 1
    if not said:
        return None, None
    best = min(said, key=lambda n: (-said[n], n))
    if len(said) == 1:
        return best, None
    shown = ", ".join(f"R{n} ({c} file(s))" for n, c in sorted(said.items()))
    return best, diag("round_mismatch", f"the findings of this directory disagree on the "
                      f"round: {shown}; pass --round N", path=ref.round_dir, step=ref.step,
                      round=best, field="finding_id")


@record
class Interpreted:
    """What the round's inputs say, and their own problems as diagnostics."""

    diags: list[Diagnostic] = field(default_factory=list)
    waived: bool = False
    manifest_tags: tuple[str, ...] | None = None
    verified_path: str | None = None
    verified_totals: dict[str, object] | None = None
    verified_error: str | None = None
    audit: Audit | None = None
    audit_path: str | None = None
    kept_lines: list[str] | None = None
    kept_path: str | None = None
    commit: str | None = None  #: the round's well-formed commit anchor


def interpret(ref: RoundRef, gen: Generation, inputs: RoundInputs) -> Interpreted:
    """Turn the round's inputs into round facts and bookkeeping diagnostics."""
    out = Interpreted()
    n = ref.round

    def place(name: str, beside: bool) -> dict[str, object]:
        directory = ref.step_dir if beside else ref.round_dir
        path = name if directory in ("", ".") else os.path.join(directory, name)
        return {"path": path, "file": name, "step": ref.step, "round": n}

    def side_name(suffix: str) -> str:
        return f"round-{n:02d}{suffix}" if n is not None else suffix

    # the verifier-disabled marker, inside or beside (generations.md §5)
    for data, beside in ((inputs.marker_inside, False), (inputs.marker_beside, True)):
        if data is None:
            continue
        problem = (bk.Problem(data.message) if isinstance(data, ReadFailure)
                   else bk.verifier_marker(data, n))
        name = verifier_disabled_name(n) if n is not None else MARKER
        if problem is None:
            out.waived = True
        else:
            out.diags.append(diag("verifier_marker_invalid", f"{name} does not waive the "
                                  f"verifier: {problem.message}; treated as absent",
                                  line=problem.line, field=problem.field,
                                  **place(name, beside)))  # type: ignore[arg-type]
    # apply-fix: round-NN-verified.md beside
    if inputs.verified is not None and gen.verified_beside_suffix:
        name = side_name(gen.verified_beside_suffix)
        out.verified_path = str(place(name, True)["path"])
        if isinstance(inputs.verified, ReadFailure):
            out.verified_error = inputs.verified.message
        else:
            got = bk.verified_totals(inputs.verified)
            out.verified_totals, out.verified_error = got.totals, got.error
    # fan-in: the audit and the kept list inside
    if inputs.audit is not None:
        out.audit_path = str(place(".verifier-fan-in-audit.json", False)["path"])
        out.audit = (Audit(problem=inputs.audit.message)
                     if isinstance(inputs.audit, ReadFailure) else bk.fanin_audit(inputs.audit))
    if inputs.kept is not None:
        out.kept_path = str(place("kept-findings.txt", False)["path"])
        if isinstance(inputs.kept, ReadFailure):
            out.diags.append(diag("kept_findings_mismatch", f"kept-findings.txt "
                                  f"{inputs.kept.message}", **place("kept-findings.txt",
                                                                    False)))  # type: ignore[arg-type]
        else:
            lines, problem = bk.kept_list(inputs.kept)
            if problem is not None:
                out.diags.append(diag("kept_findings_mismatch", f"kept-findings.txt: "
                                      f"{problem.message}", **place("kept-findings.txt",
                                                                    False)))  # type: ignore[arg-type]
            else:
                out.kept_lines = lines
    # a task round's dispatch manifest
    if inputs.manifest is not None:
        tags, problem = (None, bk.Problem(inputs.manifest.message)) if isinstance(
            inputs.manifest, ReadFailure) else bk.dispatch_manifest(inputs.manifest)
        if problem is not None:
            out.diags.append(diag("dispatch_manifest_malformed", f".dispatch-manifest.json: "
                                  f"{problem.message}; the round has no expected set",
                                  **place(".dispatch-manifest.json", False)))  # type: ignore[arg-type]
        else:
            out.manifest_tags = tags
    # bookkeeping beside: the commit anchor and the scope set (§4)
    if inputs.anchor is not None:
        name = side_name(COMMIT)
        if isinstance(inputs.anchor, ReadFailure):
            sha, problem = None, bk.Problem(inputs.anchor.message)
        else:
            sha, problem = bk.commit_anchor(inputs.anchor, per_task=ref.is_task)
        out.commit = sha
        if problem is not None:
            out.diags.append(_problem("commit_anchor_malformed", name, problem,
                                      place(name, True)))
    if inputs.scope_set is not None:
        name = side_name(SCOPE_SET)
        problem = (bk.Problem(inputs.scope_set.message) if isinstance(inputs.scope_set,
                                                                      ReadFailure)
                   else bk.scope_set(inputs.scope_set)[1])
        if problem is not None:
            out.diags.append(_problem("scope_set_malformed", name, problem,
                                      place(name, True)))
    return out


def _problem(cause: str, name: str, problem: bk.Problem,
             where: dict[str, object]) -> Diagnostic:
    return diag(cause, f"{name}: {problem.message}", line=problem.line, field=problem.field,
                level=problem.level, **where)  # type: ignore[arg-type]


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
