"""config.md's rules (round-contract §7): the run's settings from its text, read with
the shell readers' hazards (keys after the closing fence, inline comments). Pure: the
engine reads the file (:mod:`qrspi_guard.engine.configs`) and hands the bytes in."""

from __future__ import annotations

import re
from functools import partial

from qrspi_guard.contract.diagnostics import Diagnostic, diag, untrusted
from qrspi_guard.contract.runconfig import CONFIG_NAME, Overrides, RunConfig
from qrspi_guard.parse import frontmatter as fm

_KEYS = ("second_reviewer", "codex_reviews", "verifier_enabled", "route", "pipeline")
_KEY_LINE_RE = re.compile(r"({})\s*:(.*)".format("|".join(_KEYS)))


def config_from(path: str | None, artifact_dir: str | None, data: bytes | None,
                overrides: Overrides, source: str = "worktree", why: str = "") -> RunConfig:
    """The run's settings from config.md's *data* (None: there is none, *why* says
    why), as read from *source* (`worktree` or a commit SHA)."""
    if data is None:
        cfg = RunConfig(path=None, source=source)
        if overrides.second_reviewer is None:
            where = f" in {untrusted(artifact_dir)}" if artifact_dir else ""
            why = f" ({why})" if why else ""
            cfg.diagnostics.append(diag(
                "config_missing", f"no {CONFIG_NAME}{where}{why} and no --second-reviewer/"
                "--no-second-reviewer override: the expected reviewers cannot be chosen",
                path=path or (artifact_dir or "")))
    else:
        cfg = _parse(path or CONFIG_NAME, data, overrides, source)
    if overrides.second_reviewer is not None:
        cfg.second_reviewer = overrides.second_reviewer
    if overrides.verifier is not None:
        cfg.verifier_enabled = overrides.verifier
    return cfg


def _parse(path: str, data: bytes, overrides: Overrides, source: str) -> RunConfig:
    cfg = RunConfig(path=path, source=source)
    out = cfg.diagnostics
    where = "" if source == "worktree" else f" (as of commit {source[:12]})"
    d = partial(_sourced, where=where, path=path, file=CONFIG_NAME)
    decoded = fm.decode(data)
    if isinstance(decoded, fm.ByteFailure):
        out.append(d("config_field_invalid", f"{CONFIG_NAME} cannot be read: {decoded.message}"))
        return cfg
    text = decoded.text
    parts = fm.split(text)
    values: dict[object, object] = {}
    lines: dict[str, int] = {}
    if parts is None:
        after = text
        after_line = 1
    else:
        fm_text, after, after_line = parts
        doc = fm.load_yaml(fm_text)
        if isinstance(doc, fm.ParseFailure):
            out.append(d("config_field_invalid",
                         f"{CONFIG_NAME} frontmatter cannot be read: {doc.message}",
                         line=doc.line))
            return cfg
        values, lines = doc.data, doc.key_lines
        for number, line in enumerate(fm_text.split("\n"), start=2):
            m = _KEY_LINE_RE.fullmatch(line)
            if m and re.search(r"\s#", m.group(2)):
                out.append(d("config_inline_comment",
                             f"{m.group(1)} has an inline # comment, which the shell readers "
                             "keep as part of the value; the YAML meaning is used",
                             line=number, field=m.group(1)))
    for number, line in enumerate(after.split("\n"), start=after_line):
        m = _KEY_LINE_RE.fullmatch(line)
        if m:
            out.append(d("config_key_outside_frontmatter",
                         f"{m.group(1)} is written after the frontmatter; the shell readers "
                         "would still match it, the guard ignores it", line=number,
                         field=m.group(1)))

    def invalid(key: str, expected: str) -> None:
        out.append(d("config_field_invalid", f"{key} must be {expected}, found "
                     f"{untrusted(values[key])}", line=lines.get(key), field=key,
                     value=values[key]))

    switches: dict[str, bool] = {}
    for key in ("second_reviewer", "codex_reviews", "verifier_enabled"):
        if key in values:
            if isinstance(values[key], bool):
                switches[key] = values[key]  # type: ignore[assignment]
            elif key != "verifier_enabled" and overrides.second_reviewer is not None:
                pass  # overridden: the value is not used
            else:
                invalid(key, "true or false")
    if overrides.second_reviewer is None:
        sr, cr = switches.get("second_reviewer"), switches.get("codex_reviews")
        if "codex_reviews" in values:
            out.append(d("config_legacy_key", "codex_reviews is the older name of "
                         "second_reviewer", line=lines.get("codex_reviews"),
                         field="codex_reviews"))
        if sr is not None and cr is not None and sr != cr:
            out.append(d("config_key_conflict", f"second_reviewer: {str(sr).lower()} and "
                         f"codex_reviews: {str(cr).lower()} disagree", line=lines.get(
                             "codex_reviews"), field="codex_reviews"))
        elif "second_reviewer" not in values and "codex_reviews" not in values:
            out.append(d("config_field_missing", f"{CONFIG_NAME} sets neither second_reviewer "
                         "nor codex_reviews", line=1, field="second_reviewer"))
        elif not any(e.cause == "config_field_invalid" for e in out):
            cfg.second_reviewer = sr if sr is not None else cr
    if "verifier_enabled" in switches:
        cfg.verifier_enabled = switches["verifier_enabled"]
    elif "verifier_enabled" not in values and overrides.verifier is None:
        out.append(d("config_field_defaulted", "verifier_enabled is absent and taken as true",
                     line=1, field="verifier_enabled"))
    if "route" in values:
        route = values["route"]
        if isinstance(route, list) and all(isinstance(s, str) for s in route):
            cfg.route = tuple(route)
        else:
            invalid("route", "a list of step names")
    if "pipeline" in values:
        if values["pipeline"] in ("full", "quick"):
            cfg.pipeline = values["pipeline"]
        else:
            invalid("pipeline", "full or quick")
    return cfg



def _sourced(cause: str, message: str, *, where: str, **kw: object) -> Diagnostic:
    """A config diagnostic whose message names the config's source (§7)."""
    return diag(cause, message + where, **kw)  # type: ignore[arg-type]
