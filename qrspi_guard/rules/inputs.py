"""The round's inputs besides reviewer output, interpreted (generations.md §3-§5): the
verifier-disabled marker, round-NN-verified.md, the fan-in's audit and kept list, a
task round's dispatch manifest, the commit anchor and the scope set. Pure: the engine
reads them (:mod:`qrspi_guard.engine.roundinputs`) and hands the bytes in."""

from __future__ import annotations

import os

from qrspi_guard.contract.diagnostics import Diagnostic, diag
from qrspi_guard.contract.generations import Generation
from qrspi_guard.contract.layout import RoundRef, side_file_name, verifier_disabled_name
from qrspi_guard.parse.reader import ReadFailure
from qrspi_guard.records import field, record
from qrspi_guard.rules import bookkeeping as bk
from qrspi_guard.rules.verifier import Audit

Read = bytes | ReadFailure | None  #: None: the file is not there

MARKER = "-verifier-disabled.md"
COMMIT = "-commit.txt"
SCOPE_SET = "-scope-set.txt"


@record
class RoundInputs:
    """The files a round's rules read, as read (None where absent)."""

    marker_inside: Read = None
    marker_beside: Read = None
    verified: Read = None
    audit: Read = None
    kept: Read = None
    manifest: Read = None
    anchor: Read = None
    scope_set: Read = None


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
        return side_file_name(n, suffix) if n is not None else suffix

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
        audit = gen.output_named("fanin_audit") or ""
        out.audit_path = str(place(audit, False)["path"])
        out.audit = (Audit(problem=inputs.audit.message)
                     if isinstance(inputs.audit, ReadFailure) else bk.fanin_audit(inputs.audit))
    if inputs.kept is not None:
        kept = gen.output_named("kept_list") or ""
        out.kept_path = str(place(kept, False)["path"])
        if isinstance(inputs.kept, ReadFailure):
            out.diags.append(diag("kept_findings_mismatch", f"{kept} {inputs.kept.message}",
                                  **place(kept, False)))  # type: ignore[arg-type]
        else:
            lines, problem = bk.kept_list(inputs.kept)
            if problem is not None:
                out.diags.append(diag("kept_findings_mismatch", f"{kept}: {problem.message}",
                                      **place(kept, False)))  # type: ignore[arg-type]
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
