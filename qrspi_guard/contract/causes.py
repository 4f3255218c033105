"""The cause catalogue: every diagnostic the guard can emit, in one table.

Rules look their level up here, ``explain`` prints it, SARIF lists it as its rules
and the README's cause section is generated from it, so these can never drift apart.
Each entry names the rule that reports it (``rules.registry`` derives every rule's
causes from that column) and, where the hook can say more than the fix, what is
allowed and a corrected example line: a template whose ``{placeholders}``
``hook.message`` fills in from the written file's place and the value found.
Names are public interface (round-contract §10, split.md): spell them exactly.
"""

from __future__ import annotations

from typing import Literal

from qrspi_guard.contract.generations import CONTRACT
from qrspi_guard.records import record

Level = Literal["error", "warning", "info"]


@record(frozen=True)
class Cause:
    name: str
    level: Level
    meaning: str
    fix: str
    #: the id of the registered rule that reports it (``rules.registry``)
    rule: str
    #: what the hook says is allowed ("" when the fix says it all)
    allowed: str = ""
    #: the hook's corrected example line, a template with named placeholders
    #: (``finding_id``, ``tag``, ``round``, ``step``, ``artifact``, ``severity``,
    #: ``closest_severity``, ...) that ``hook.message`` fills in; "" for none
    example: str = ""


_E, _W, _I = "error", "warning", "info"
#: the contract's enums as the hook lists them
_SEVERITIES = ", ".join(CONTRACT.severities)
_CHANGE_TYPES = ", ".join(CONTRACT.change_types)
_ROUND = "the round directory's number, e.g. round: 3 for round-03"

#: name, level, rule, meaning, fix[, allowed[, example]]
_TABLE: list[tuple[str, ...]] = [
    # layout (§1, §2)
    ("bad_round_dir_name", _E, "layout", "A directory under a step whose name starts with `round` is not `round-NN` (two or more digits, value >= 1), or names a round another directory of the step already is (`round-001` beside `round-01`).",
     "Rename it to `round-NN`, e.g. `round-03`, or move it out of the step directory.",
     "round-NN, two or more digits, >= 01", "reviews/{step}/round-01/"),
    ("bad_tag_name", _E, "names", "A finding, clean-sentinel or sidecar file name whose tag fails the protocol's tag grammar `^[a-z0-9][a-z0-9-]*$` (lower-case letters, digits and hyphens).",
     "Use the reviewer tag the dispatcher gave, in the file name and in `reviewer:`, e.g. `quality-claude.finding-F01.md` with `reviewer: quality-claude`.",
     "lower-case letters, digits and hyphens, e.g. quality-claude", "quality-claude.finding-F01.md"),
    ("bad_finding_filename", _E, "names", "A file matches `*.finding-*.md` but is not exactly `<tag>.finding-F<NN>.md` nor a sidecar name (`<tag>.finding-F<NN>.score.md` / `.score.yml`).",
     "Name it `<tag>.finding-F<NN>.md` with at least two digits, e.g. `quality-claude.finding-F02.md`.",
     "<tag>.finding-F<NN>.md, two or more digits", "{tag}.finding-F01.md"),
    ("unknown_file_in_round_dir", _E, "names", "A file in a round directory that is not a finding, clean sentinel, verifier sidecar or known orchestrator file (raw stdout, notes, stray copies).",
     "Move it out of the round directory; a round holds reviewer output only.",
     "<tag>.finding-F<NN>.md, <tag>.clean.md, <tag>.finding-F<NN>.score.yml", "{tag}.finding-F01.md"),
    ("symlink_in_round_dir", _E, "names", "A symbolic link inside a round directory, or standing in place of a round, step or reviews directory (never followed).",
     "Replace the link with the real file, or remove it.",
     "regular files only"),
    ("file_too_large", _E, "bytes", "A file over 1 MiB; it is not parsed.",
     "A finding is one issue in prose: split it, or remove pasted logs and diffs.",
     "at most 1 MiB"),
    ("not_utf8", _E, "bytes", "The file's bytes are not valid UTF-8.",
     "Re-write the file as UTF-8.",
     "UTF-8 text"),
    ("unreadable_file", _E, "read", "The file cannot be read (permissions, vanished, not a regular file).",
     "Make it a readable regular file, or remove it."),
    ("utf8_bom", _W, "bytes", "The file starts with a UTF-8 byte-order mark.",
     "Save without a BOM; shell consumers read it as part of the first line."),
    ("crlf_line_endings", _E, "bytes", "The file has CR LF line endings, which the protocol's shell consumers misread.",
     "Convert the file to LF line endings.",
     "LF line endings only"),
    # finding files (§3)
    ("no_frontmatter", _E, "bytes", "No YAML frontmatter: the file does not start with a line `---` closed by another line `---`.",
     "Start the file with its frontmatter: a line `---`, the fields `finding_id:`, `severity:`, `change_type:`, `referenced_files:`, `artifact:`, `round:` and `reviewer:` one per line, a line `---`; then the prose.",
     "a first line ---, the fields, a line ---, then the prose", "---"),
    ("malformed_yaml", _E, "bytes", "The frontmatter is not valid YAML, uses a tag outside YAML's core schema (`!!timestamp`, `!!binary`, `!!python/...`, a custom `!tag`), or is not a mapping; or it would read differently to YAML and to the protocol's line-based readers (upstream's fan-in reads `change_type:` with awk): a merge key (`<<`), an alias (`*name`), or a line break other than LF (a lone CR, NEL, U+2028, U+2029).",
     "Fix the YAML at the reported line: plain `key: value` lines, lists as `[a, b]`.",
     "plain `key: value` lines", "severity: {severity}"),
    ("duplicate_key", _E, "bytes", "A key appears twice in the frontmatter.",
     "Keep one occurrence of the key.",
     "each key once"),
    ("missing_finding_id", _E, "finding", "The `finding_id` field is absent.",
     "Add `finding_id: R<round>-F<NN>`, e.g. `finding_id: R3-F02`.",
     "R<round>-F<NN>", "finding_id: {finding_id}"),
    ("finding_id_malformed", _E, "finding", "`finding_id` is not a string matching `^R\\d+-F\\d+$`.",
     "Write it as `R<round>-F<NN>`, e.g. `finding_id: R3-F02`.",
     "R<round>-F<NN>", "finding_id: {finding_id}"),
    ("missing_severity", _E, "finding", "The `severity` field is absent.",
     "Add `severity: low`, `medium` or `high`.",
     _SEVERITIES, "severity: {severity}"),
    ("severity_out_of_enum", _E, "finding", "`severity` is not one of low, medium, high.",
     "Use exactly one of `low`, `medium`, `high` (lower case).",
     _SEVERITIES, "severity: {closest_severity}"),
    ("missing_change_type", _E, "finding", "The `change_type` field is absent (also when only `category:` is given, which is not an alias).",
     "Add `change_type:` with one of style, clarity, correctness, scope, intent; rename `category:` to `change_type:`.",
     _CHANGE_TYPES, "change_type: {change_type}"),
    ("change_type_out_of_enum", _E, "finding", "`change_type` is not one of style, clarity, correctness, scope, intent.",
     "Use exactly one of `style`, `clarity`, `correctness`, `scope`, `intent`.",
     _CHANGE_TYPES, "change_type: {closest_change_type}"),
    ("missing_referenced_files", _E, "finding", "The `referenced_files` field is absent.",
     "Add `referenced_files: [path:L10-L20]`, or `referenced_files: []`.",
     "a list of strings, possibly empty", "referenced_files: [design.md:L40-L52]"),
    ("referenced_files_not_list", _E, "finding", "`referenced_files` is not a list of strings.",
     "Write it as a list: `referenced_files: [design.md:L40-L52]`.",
     "a list of strings, possibly empty", "referenced_files: [design.md:L40-L52]"),
    ("missing_artifact", _E, "finding", "The `artifact` field is absent or not a non-empty string.",
     "Add `artifact: <step>`, e.g. `artifact: design`.",
     "the step name", "artifact: {artifact}"),
    ("missing_round", _E, "fields", "The `round` field is absent.",
     "Add `round: <n>` with the round directory's number.",
     _ROUND, "round: {round}"),
    ("round_not_integer", _E, "fields", "`round` is not a plain base-10 integer >= 1.",
     "Write the round number unquoted, e.g. `round: 3`.",
     _ROUND, "round: {round}"),
    ("missing_reviewer", _E, "finding", "The `reviewer` field is absent or not a non-empty string.",
     "Add `reviewer: <tag>` with the tag in the file name.",
     "the tag in the file name", "reviewer: {tag}"),
    ("missing_message", _E, "finding", "The body after the frontmatter is blank: the finding has no message.",
     "Write the prose after the closing `---`: what is wrong, why it matters, what would fix it.",
     "non-blank prose after the closing ---", "(after the closing --- and a blank line) What is wrong, why it matters, what would fix it."),
    ("combined_findings", _E, "finding", "More than one finding in one file (a body line starting `finding_id:` or a `<<<FINDING-BOUNDARY>>>` line).",
     "Write one finding per file: `<tag>.finding-F01.md`, `<tag>.finding-F02.md`, ...",
     "one finding per file", "the next finding goes in {next_finding}"),
    ("reviewer_tag_mismatch", _E, "finding", "`reviewer` differs from the tag in the file name: one reviewer may not file as another.",
     "Set `reviewer:` to the tag in the file name, or write under your own tag.",
     "the tag in the file name (you may write only under your own tag)", "reviewer: {tag}"),
    ("round_mismatch", _E, "fields", "The round of `finding_id`, the `round` field and the directory's `round-NN` disagree.",
     "Use the round directory's number in both `round:` and `finding_id: R<n>-...`.",
     "the same number in the directory, round: and finding_id", "round: {round}  and  finding_id: {finding_id}"),
    ("duplicate_finding_id", _E, "tag-pairs", "The same `finding_id` appears twice under one tag in one round.",
     "Give each finding the id its file name says: `finding_id: R<n>-F<NN>` in `<tag>.finding-F<NN>.md`.",
     "one finding_id per finding of a tag in a round", "finding_id: {finding_id}"),
    ("trailing_newline", _W, "bytes", "The file does not end with exactly one newline.",
     "End the file with a single `\\n` (`qrspi-guard check --fix` does this)."),
    ("fnum_mismatch", _W, "finding", "The F number in the file name differs from the one in `finding_id`.",
     "Make `finding_id`'s F number match the file name's.",
     "the F number of the file name", "finding_id: {finding_id}"),
    ("fnum_gap", _W, "tag-outcome", "A tag's F numbers in a round skip a value.",
     "Number the tag's findings contiguously from F01: rename the file and its `finding_id` together, e.g. `quality-claude.finding-F02.md` with `finding_id: R1-F02`."),
    ("artifact_step_mismatch", _W, "finding", "`artifact` differs from the step the round belongs to.",
     "Set `artifact:` to the step name (for tasks, `task-NN`).",
     "the step name", "artifact: {artifact}"),
    ("unknown_frontmatter_key", _W, "fields", "The frontmatter has keys beyond the contract.",
     "Remove the extra keys; put extra information in the prose."),
    ("referenced_files_malformed", _W, "finding", "A `referenced_files` entry has whitespace, `..` segments, or a range suffix other than `:N`, `:N-M`, `:LN`, `:LN-LM`.",
     "Cite a clean relative path with an optional range, e.g. `design.md:L40-L52`."),
    # clean sentinels and sidecars (§4)
    ("clean_noncanonical", _W, "names", "A clean sentinel in the fixture-variant shape (no `findings` key).",
     "Write its frontmatter as exactly `reviewer: <tag>`, `round: <n>`, `findings: 0`."),
    ("clean_nonzero_findings", _E, "sentinel", "A clean sentinel says `findings` is not 0.",
     "Set `findings: 0`, or write the findings as finding files instead of a clean sentinel.",
     "findings: 0", "findings: 0"),
    ("clean_has_body", _W, "sentinel", "Text after a clean sentinel's frontmatter.",
     "A clean sentinel has frontmatter only; remove the text."),
    ("clean_and_findings_coexist", _E, "tag-pairs", "A tag has both a clean sentinel and finding files in one round (stale output of an earlier attempt).",
     "Remove whichever is stale: the clean sentinel or the finding files.",
     "either finding files or one clean sentinel per tag", "{coexist}"),
    ("sidecar_malformed", _E, "sidecar", "A verifier sidecar the consumers cannot read. Apply-fix (`.score.yml`): unparseable, score neither an integer nor VERIFY_FAILED, or no reason. Fan-in (`.score.md`): no frontmatter, no readable `score:` in a sidecar that is not `verifier_status: failed`, a `verifier_status` other than passed or failed, or a failed sidecar without `failure_reason`.",
     "Apply-fix: `score: <0..100>` and `reason: <one sentence>`, or `score: VERIFY_FAILED`. Fan-in: frontmatter with `verifier_status: passed` and `score: <0..100>`, or `verifier_status: failed` and `failure_reason: <one sentence>`.",
     "score: <0..100> or VERIFY_FAILED, and reason: <one sentence>", "score: 85"),
    ("score_out_of_range", _E, "sidecar", "A sidecar score over 100 (or below 0); in apply-fix rounds also a leading zero (`087` breaks shell arithmetic).",
     "Write the score as a plain integer from 0 to 100 without leading zeros.",
     "an integer 0..100 without leading zeros or sign", "score: 85"),
    ("verify_failed", _E, "tag-outcome", "A sidecar says VERIFY_FAILED (apply-fix) or `verifier_status: failed` (fan-in) and the round's verifier is not waived.",
     "Re-run the verifier, or record the user's skip as `round-NN-verifier-disabled.md` beside the round, with frontmatter `reason: <why>`, `round: <NN>`, `created_by: <who>`."),
    ("orphan_sidecar", _W, "tag-outcome", "A verifier sidecar without its finding file.",
     "Remove the sidecar, or restore the finding it scores."),
    # round level (§5)
    ("expected_tag_no_output", _E, "completion", "A tag the expected-reviewer matrix requires wrote neither a finding file nor a clean sentinel.",
     "Re-dispatch the reviewer; a reviewer with nothing to report writes `<tag>.clean.md` holding `---`, `reviewer: <tag>`, `round: <n>`, `findings: 0`, `---`."),
    ("unrouted_tag", _E, "completion", "A tag in the round that the step's matrix row does not route.",
     "Check the reviewer tag and the run's second_reviewer setting; remove output of tags not in the row."),
    ("sidecar_missing", _E, "completion", "A verified round lacks a finding's verifier sidecar (a warning for plan, integration and test).",
     "Re-run the verifier for the finding, or record the user's skip as `round-NN-verifier-disabled.md` beside the round, with frontmatter `reason: <why>`, `round: <NN>`, `created_by: <who>`."),
    ("verified_totals_mismatch", _E, "completion", "The totals in `round-NN-verified.md` differ from a recount of the round.",
     "Re-assemble `round-NN-verified.md` from the round's files."),
    # escalation (§6)
    ("escalation_required", _W, "finding", "The finding cites `feedback/*.md`, so its effective change_type is intent, but it is tagged otherwise.",
     "Tag it `change_type: intent`: it contradicts a decision the user recorded.",
     "intent, for a finding citing feedback/*.md", "change_type: intent"),
    # config (§7)
    ("config_missing", _E, "config", "No config.md in the artifact directory and no command-line override.",
     "Add config.md beside `reviews/` holding four lines: `---`, `second_reviewer: false` (or `true`), `verifier_enabled: true` (or `false`), `---`; or pass `--second-reviewer/--no-second-reviewer`."),
    ("config_field_missing", _E, "config", "config.md sets neither `second_reviewer` nor `codex_reviews`.",
     "Add `second_reviewer: true` or `false` to config.md's frontmatter."),
    ("config_field_invalid", _E, "config", "A config.md value of the wrong type.",
     "Use `true`/`false` for switches, a list of steps for `route`, `full`/`quick` for `pipeline`."),
    ("config_key_conflict", _E, "config", "`second_reviewer` and `codex_reviews` are both set and disagree.",
     "Keep `second_reviewer` only, with the value the run used: `second_reviewer: false` for one reviewer of each kind, `second_reviewer: true` for a second one."),
    ("config_legacy_key", _I, "config", "config.md uses the older key `codex_reviews`.",
     "Rename it to `second_reviewer`, or remove it where `second_reviewer` is set too."),
    ("config_field_defaulted", _W, "config", "`verifier_enabled` is absent from config.md and is taken as true.",
     "Add `verifier_enabled: true` or `false`."),
    ("config_key_outside_frontmatter", _W, "config", "A config key written after config.md's closing `---`, which the shell readers would still match.",
     "Move the key into the frontmatter or remove it."),
    ("config_inline_comment", _W, "config", "A `# comment` after a config value, which the shell readers keep as part of the value.",
     "Put the comment on its own line."),
    ("step_not_on_route", _W, "route", "A round in a step that config.md's `route` does not list.",
     "Add the step to `route`, or remove the stray round."),
    ("legacy_layout", _I, "layout", "An older single-file round layout or non-canonical step directory; skipped.",
     "Nothing to do for history; new rounds use `reviews/<step>/round-NN/`."),
    # protocol generations (generations.md)
    ("sidecar_wrong_extension", _E, "sidecar-suffix", "A sidecar named for the other protocol generation (`.score.yml` in a fan-in round, `.score.md` in an apply-fix round) or with another `.score.*` suffix; the fan-in halts on it, and its finding counts as having no sidecar.",
     "Write it as the round's generation does. Fan-in: `<finding stem>.score.md` with its fields in frontmatter (`---`, `verifier_status: passed`, `score: <0..100>`, `---`). Apply-fix: `<finding stem>.score.yml` with plain `score: <0..100>` and `reason: <one sentence>` lines."),
    ("fanin_audit_malformed", _E, "completion", "`.verifier-fan-in-audit.json` in a round is unreadable, not a JSON object, or lacks `scored`, `kept`, `dropped` or `halts`.",
     "Re-run `verifier-fan-in.sh <round-dir>` so it rewrites the audit."),
    ("fanin_audit_mismatch", _E, "completion", "The `scored`, `kept` or `dropped` totals of `.verifier-fan-in-audit.json` differ from a recount of the round with the thresholds the audit records.",
     "Re-run `verifier-fan-in.sh <round-dir>`; a changed finding or sidecar after the fan-in makes the audit stale."),
    ("kept_findings_mismatch", _E, "completion", "`kept-findings.txt` names a different set of findings than the recount keeps, names a file not in the round, or exists although the audit records halts.",
     "Re-run `verifier-fan-in.sh <round-dir>`; never edit `kept-findings.txt` by hand."),
    ("commit_anchor_malformed", _E, "inputs", "`round-NN-commit.txt` beside a round is not exactly 40 lowercase hex digits and one newline (`round-prepare.sh` halts on it).",
     "Write the round commit's full SHA: `git rev-parse HEAD > round-NN-commit.txt`."),
    ("scope_set_malformed", _E, "inputs", "`round-NN-scope-set.txt` has a blank or whitespace-padded tag line, or CR LF line endings.",
     "Write `#` comment lines, then one tag per line with no surrounding spaces, LF line endings."),
    ("verifier_marker_invalid", _W, "inputs", "A `round-NN-verifier-disabled.md` marker that is not well formed in either upstream schema, so it waives nothing (upstream treats it as absent).",
     "Give it frontmatter with a non-blank `reason`, `round: <NN>` and a non-blank `created_by`, or `timestamp`, `reason` and `finding_count`."),
    ("vf_sentinel_invalid", _E, "sentinel", "`visual-fidelity-claude.skipped.md` does not give a known `skip_reason` (or a `path_filtered` that is not true/false), so it does not stand for the visual-fidelity reviewer's output.",
     "Set `skip_reason:` to one of visual_fidelity_required_false, missing_visual_fidelity_check, empty_wireframe_paths, empty_screenshot_paths, and `path_filtered: true|false`."),
    ("dispatch_manifest_malformed", _W, "inputs", "A task round's `.dispatch-manifest.json` is not a JSON array of objects with a `tag`; the round then has no expected set.",
     "Let `dispatch-agent.sh` rewrite the manifest, or remove it."),
    ("unknown_step_dir", _W, "layout", "A step directory of unknown name under `reviews/` holds `round-NN/` directories; its rounds are judged like task rounds (per-file and tag rules, no matrix).",
     "Rename the directory to the canonical step name it stands for (e.g. `integration`), or move the rounds under `reviews/tasks/task-NN/` with `artifact: task-NN`."),
    # reliability
    ("unreadable_dir", _E, "read", "A directory on the walk cannot be listed (an error inside a `reviews/` tree, a warning elsewhere); its contents were not checked.",
     "Make the directory readable (`chmod u+rx`), or move it out of the tree being checked."),
    ("split_incomplete", _E, "residue", "A round holds the temp or backup files of a `qrspi-guard split` that did not finish (killed mid-write).",
     "Run `qrspi-guard split` again for that tag (it rolls the interrupted attempt forward or back first), or run it with `--replace`."),
    # split.md
    ("split_would_mix_attempts", _E, "split", "split: the tag already has output in the round directory.",
     "Pass `--replace` to swap the earlier attempt for this one atomically."),
]



def _entry(name: str, level: str, rule: str, meaning: str, fix: str, allowed: str = "",
           example: str = "") -> Cause:
    return Cause(name, level, meaning, fix, rule, allowed, example)  # type: ignore[arg-type]


CATALOGUE: dict[str, Cause] = {row[0]: _entry(*row) for row in _TABLE}


def cause(name: str) -> Cause:
    """The catalogue entry for *name*; a KeyError is a programming error."""
    return CATALOGUE[name]


def markdown_table() -> str:
    """The catalogue as the Markdown table generated into the README."""
    rows = ["| cause | level | meaning | fix |", "|---|---|---|---|"]
    for c in CATALOGUE.values():
        meaning = c.meaning.replace("|", "\\|")
        fix = c.fix.replace("|", "\\|")
        rows.append(f"| `{c.name}` | {c.level} | {meaning} | {fix} |")
    return "\n".join(rows) + "\n"


def nearest(name: str, limit: int = 3) -> list[str]:
    """The causes a mistyped *name* most likely means, best first: the nearest names
    (``change_typ`` -> ``missing_change_type``), else the causes whose meaning holds a
    word near it (``corectness`` -> ``change_type_out_of_enum``)."""
    import difflib
    import re

    from qrspi_guard.voice import nearest as near_names

    close = near_names(name, CATALOGUE, n=limit)
    if close:
        return close
    word = name.strip().lower()
    if len(word) < 4:
        return []
    out = []
    for c in CATALOGUE.values():
        words = set(re.findall(r"[a-z][a-z0-9]+", f"{c.name.replace('_', ' ')} {c.meaning}"
                               .lower()))
        if word in words:
            continue  # a real word of the catalogue, not a typo of one
        if difflib.get_close_matches(word, words, n=1, cutoff=0.85):
            out.append(c.name)
            if len(out) == limit:
                break
    return out


def did_you_mean(name: str) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``) for a mistyped cause, else ``""``
    (the one rule, :mod:`qrspi_guard.voice`, up to three causes)."""
    from qrspi_guard.voice import suggestion

    return suggestion(nearest(name))
