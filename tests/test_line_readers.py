"""Issue 24's validation bypasses: a finding means the same to the guard and to every
line-based reader of the protocol (upstream's fan-in reads `change_type:` with awk).

A line is text up to a LF, for the guard as for awk, grep and ``read``. Where YAML
would read a frontmatter differently (a merge key supplying fields, an alias, a line
break other than LF), the frontmatter is refused as ``malformed_yaml``, by ``check``,
the hook and ``watch`` alike. Also here: non-core tags (``!!timestamp``), bodies of
invisible characters, and hook payloads whose paths hold lone surrogates. The fuzz
tests at the end generate every one of these and hold all three judges to one verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qrspi_guard.rules.filejudge import fanin_change_type
from tests.genkit import finding_text, new_run, put
from tests.support import run_main
from tests.test_generations_watch import Watch, status

Q, S = "quality-claude", "scope-claude"
CLEAN = f"---\nreviewer: {S}\nround: 1\nfindings: 0\n---\n"
#: every character YAML (1.1, as PyYAML and libyaml read it) takes as a line break
#: besides LF, with what the protocol's line readers see instead: the same line
FOREIGN_BREAKS = {"CR": "\r", "NEL": "\x85", "LS": "\u2028", "PS": "\u2029"}
#: characters Python's str.splitlines() breaks at but YAML does not: inside a line for
#: everybody, so the value that holds them is simply not the enum word
OTHER_SEPARATORS = {"VT": "\x0b", "FF": "\x0c", "FS": "\x1c", "GS": "\x1d", "RS": "\x1e",
                    "NBSP": "\u00a0", "ZWSP": "\u200b", "NNBSP": "\u202f",
                    "IDEOSP": "\u3000", "BOM": "\ufeff", "TAB": "\t"}
FIELD_CAUSES = ("missing_change_type", "change_type_out_of_enum", "missing_severity",
                "severity_out_of_enum", "malformed_yaml", "no_frontmatter", "duplicate_key")


def _round(tmp_path: Path, text: str | bytes) -> tuple[Path, Path]:
    run = new_run(tmp_path, "second_reviewer: false\nverifier_enabled: false\n")
    d = run.round_dir("design", 1)
    put(d, f"{S}.clean.md", CLEAN)
    return d, put(d, f"{Q}.finding-F01.md", text)


def _check(path: Path) -> dict[str, Any]:
    proc = run_main("check", "--format", "json", str(path))
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _file_causes(doc: dict[str, Any], name: str) -> set[str]:
    return {d["cause"] for d in doc["diagnostics"] if d.get("file") == name}


def _hook(target: Path, content: str | bytes) -> tuple[int, bytes]:
    text = content.decode("utf-8", "surrogateescape") if isinstance(content, bytes) else content
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write",
               "cwd": str(target.parent),
               "tool_input": {"file_path": str(target), "content": text}}
    proc = run_main("hook", input=json.dumps(payload))
    assert b"internal error" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stderr


def _all_three(tmp_path: Path, text: str) -> tuple[set[str], int, str]:
    """(check's causes for the finding, the hook's exit code for writing it, watch's
    round status): the file is judged on disk by check and watch, and the hook is
    asked to write the same content over a valid file."""
    d, f = _round(tmp_path, text)
    got = _file_causes(_check(d), f.name)
    Watch(tmp_path)
    watched = status(d)["status"]
    f.write_text(finding_text(Q, 1))
    code, _ = _hook(f, text)
    return got, code, watched


# -- the defects, one test each -------------------------------------------------------


def test_a_merge_key_cannot_supply_change_type_and_severity(tmp_path: Path) -> None:
    text = finding_text(Q, 1).replace("severity: high\n", "").replace(
        "change_type: correctness\n", "<<: {change_type: correctness, severity: high}\n")
    assert "change_type:" not in text.replace("<<: {change_type", "")
    got, code, watched = _all_three(tmp_path, text)
    assert "malformed_yaml" in got
    assert code == 2 and watched == "halt"


def test_a_merge_key_of_an_anchored_mapping_is_refused(tmp_path: Path) -> None:
    text = finding_text(Q, 1).replace("change_type: correctness\n",
                                      "base: &b {change_type: correctness}\n<<: *b\n")
    got, code, watched = _all_three(tmp_path, text)
    assert got >= {"malformed_yaml"} and code == 2 and watched == "halt"


def test_an_alias_for_a_contract_field_is_refused(tmp_path: Path) -> None:
    text = finding_text(Q, 1).replace("change_type: correctness\n",
                                      "note: &ct correctness\nchange_type: *ct\n")
    # awk reads `*ct`; YAML reads `correctness`
    assert fanin_change_type(text.encode()) == "*ct"
    got, code, watched = _all_three(tmp_path, text)
    assert "malformed_yaml" in got and code == 2 and watched == "halt"


@pytest.mark.parametrize("name", sorted(FOREIGN_BREAKS))
def test_a_field_after_a_foreign_line_break_is_refused(tmp_path: Path, name: str) -> None:
    br = FOREIGN_BREAKS[name]
    # YAML would see `change_type: correctness` on a line of its own; awk sees it as the
    # tail of the `round:` line and no change_type at all
    text = finding_text(Q, 1).replace("change_type: correctness\n", "").replace(
        "round: 1\n", f"round: 1{br}change_type: correctness\n")
    assert fanin_change_type(text.encode()) == ""
    got, code, watched = _all_three(tmp_path, text)
    assert "malformed_yaml" in got, got
    assert code == 2 and watched == "halt"


@pytest.mark.parametrize("name", sorted(FOREIGN_BREAKS))
def test_the_foreign_line_break_is_named_with_its_line(tmp_path: Path, name: str) -> None:
    text = finding_text(Q, 1).replace("round: 1\n", f"round: 1{FOREIGN_BREAKS[name]}x: y\n")
    d, f = _round(tmp_path, text)
    diag = next(x for x in _check(d)["diagnostics"] if x["cause"] == "malformed_yaml")
    assert diag["line"] == text.split("\n").index(f"round: 1{FOREIGN_BREAKS[name]}x: y") + 1
    assert "line-based readers" in diag["message"]


def test_a_lone_cr_in_the_body_is_prose_not_a_halt(tmp_path: Path) -> None:
    text = finding_text(Q, 1).replace("\n---\n\n", "\n---\n\nfirst\rsecond\n", 1)
    d, f = _round(tmp_path, text)
    assert _file_causes(_check(d), f.name) == set()


def test_an_explicit_timestamp_tag_is_malformed_like_every_other_non_core_tag(
        tmp_path: Path) -> None:
    for tag in ("!!timestamp 2026-05-17", "!!binary aGk=", "!!set {a}", "!custom x"):
        text = finding_text(Q, 1).replace("round: 1\n", f"round: 1\nwhen: {tag}\n")
        d, f = _round(tmp_path / tag.split()[0].strip("!"), text)
        assert "malformed_yaml" in _file_causes(_check(d), f.name), tag


def test_a_plain_date_reads_as_its_text(tmp_path: Path) -> None:
    text = finding_text(Q, 1).replace("artifact: design\n", "artifact: 2026-05-17\n")
    d, f = _round(tmp_path, text)
    got = _file_causes(_check(d), f.name)
    # a string artifact, only the step mismatch warning: never a crash or a type error
    assert got == {"artifact_step_mismatch"}


INVISIBLE = {"zero-width space": "\u200b", "zero-width joiner": "\u200d",
             "word joiner": "\u2060", "BOM": "\ufeff", "soft hyphen": "\u00ad",
             "combining mark": "\u0301", "control": "\x01", "mixed": " \u200b\t\u2060\u00ad "}


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_a_body_of_invisible_characters_is_missing_message(tmp_path: Path, name: str) -> None:
    text = finding_text(Q, 1).split("\n---\n")[0] + "\n---\n\n" + INVISIBLE[name] * 3 + "\n"
    got, code, watched = _all_three(tmp_path, text)
    assert "missing_message" in got and code == 2 and watched == "halt"


@pytest.mark.parametrize("body", ["x", "é", "日本", "—", "1", "→", "🙂"])
def test_one_visible_character_is_a_message(tmp_path: Path, body: str) -> None:
    text = finding_text(Q, 1).split("\n---\n")[0] + "\n---\n\n\u200b" + body + "\n"
    d, f = _round(tmp_path, text)
    assert "missing_message" not in _file_causes(_check(d), f.name)


# -- lone surrogates in the hook payload -------------------------------------------------

SURROGATE = "\ud800"


def _payload(tmp_path: Path, field: str, runtime: str = "claude") -> dict[str, Any]:
    d = tmp_path / "art" / "reviews" / "design" / "round-01"
    d.mkdir(parents=True, exist_ok=True)
    target = f"art/reviews/design/round-01/{Q}.finding-F01.md"
    cwd = str(tmp_path)
    if field in ("command", "directory"):
        tool_input: dict[str, Any] = {"command": f"cat > {target} <<EOF\nx\nEOF"}
        tool = "Bash" if runtime == "claude" else "run_shell_command"
        event = "PostToolUse" if runtime == "claude" else "AfterTool"
        if field == "directory":
            tool_input["directory"] = "." + SURROGATE
        else:
            tool_input["command"] += SURROGATE
    else:
        tool = "Write" if runtime == "claude" else "write_file"
        event = "PreToolUse" if runtime == "claude" else "BeforeTool"
        tool_input = {"file_path": target, "content": finding_text(Q, 1)}
        if field == "file_path":
            tool_input["file_path"] = target.replace(".md", SURROGATE + ".md")
    payload = {"hook_event_name": event, "tool_name": tool, "cwd": cwd,
               "tool_input": tool_input}
    if field == "cwd":
        payload["cwd"] = cwd + SURROGATE
    return payload


@pytest.mark.parametrize("runtime, field", [
    ("claude", "file_path"), ("claude", "cwd"), ("claude", "command"),
    ("gemini", "file_path"), ("gemini", "cwd"), ("gemini", "command"),
    ("gemini", "directory")])
def test_a_surrogate_where_a_round_path_belongs_blocks_with_one_line(
        tmp_path: Path, runtime: str, field: str) -> None:
    proc = run_main("hook", input=json.dumps(_payload(tmp_path, field, runtime)))
    assert proc.returncode == 2, proc.stderr
    assert b"internal error" not in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"surrogate" in proc.stderr
    assert proc.stderr.decode("ascii", "strict")  # escaped: nothing but ASCII reaches it


def test_a_surrogate_in_a_path_outside_every_review_tree_is_not_the_guards_business(
        tmp_path: Path) -> None:
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(tmp_path),
               "tool_input": {"file_path": f"notes/a{SURROGATE}.md", "content": "x"}}
    proc = run_main("hook", input=json.dumps(payload))
    assert (proc.returncode, proc.stderr) == (0, b"")


def test_a_surrogate_in_the_content_is_not_utf8(tmp_path: Path) -> None:
    payload = _payload(tmp_path, "content")
    payload["tool_input"]["content"] = finding_text(Q, 1).replace("high", "hi" + SURROGATE)
    proc = run_main("hook", input=json.dumps(payload))
    assert proc.returncode == 2 and b"not_utf8" in proc.stderr
    assert b"internal error" not in proc.stderr


# -- fuzz: one verdict from check, the hook and watch ------------------------------------

_LINES = finding_text(Q, 1).split("\n")
_BREAKS = list(FOREIGN_BREAKS.values()) + list(OTHER_SEPARATORS.values()) + ["\r\n", "\n"]
_YAML_TRICKS = [
    "<<: {change_type: scope}", "<<: *b", "base: &b {severity: low}", "x: &a intent",
    "change_type: *a", "severity: &s high", "? change_type\n: style", "change_type: !!str scope",
    "change_type: !!timestamp 2026-01-01", "change_type: 'scope'", 'change_type: "sc\\x6fpe"',
    "change_type: >\n  scope", "change_type: |\n  scope", "change_type: [scope]",
    "change_type: scope # c", "\tchange_type: scope", "change_type:\tscope",
    "%YAML 1.1", "--- !!map", "... ",
]


@st.composite
def hostile_finding(draw: st.DrawFn) -> str:
    lines = list(_LINES)
    head_end = lines.index("---", 1)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(1, head_end - 1))
        kind = draw(st.sampled_from(["break", "trick", "join"]))
        if kind == "trick":
            lines.insert(at, draw(st.sampled_from(_YAML_TRICKS)))
            head_end += 1
        elif kind == "join" and at < head_end - 1:
            br = draw(st.sampled_from(_BREAKS))
            lines[at:at + 2] = [lines[at] + br + lines[at + 1]]
            head_end -= 1
        else:
            br = draw(st.sampled_from(_BREAKS))
            line = lines[at]
            cut = draw(st.integers(0, len(line)))
            lines[at] = line[:cut] + br + line[cut:]
    return "\n".join(lines)


def _yaml_change_type(text: str) -> object:
    from qrspi_guard.parse import frontmatter as fm

    decoded = fm.decode(text.encode())
    assert not isinstance(decoded, fm.ByteFailure)
    doc = fm.parse(decoded.text)
    return doc.data.get("change_type") if isinstance(doc, fm.Document) else None


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(text=hostile_finding())
def test_a_finding_the_guard_accepts_reads_the_same_to_awk_and_all_three_judges_agree(
        tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    tmp = tmp_path_factory.mktemp("fz")
    got, code, watched = _all_three(tmp, text)
    blocking = got & set(FIELD_CAUSES)
    if not blocking:
        # accepted: the change_type awk reads is the one the guard judged valid
        assert fanin_change_type(text.encode()) == _yaml_change_type(text), text
    halts = {c for c in got if c not in {"trailing_newline", "fnum_mismatch",
                                         "unknown_frontmatter_key", "utf8_bom",
                                         "artifact_step_mismatch",
                                         "referenced_files_malformed"}}
    assert (code == 2) == bool(halts), (text, got, code)
    assert (watched == "halt") == bool(halts), (text, got, watched)


_PLACE_FIELDS = ["cwd", "file_path", "command", "directory", "content"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(_PLACE_FIELDS), runtime=st.sampled_from(["claude", "gemini"]),
       ch=st.integers(0xD800, 0xDFFF), where=st.integers(0, 40))
def test_a_surrogate_anywhere_in_a_payload_never_is_an_internal_error(
        tmp_path_factory: pytest.TempPathFactory, field: str, runtime: str, ch: int,
        where: int) -> None:
    tmp = tmp_path_factory.mktemp("sur")
    if field == "directory" and runtime == "claude":
        runtime = "gemini"
    payload = _payload(tmp, "none" if field == "content" else field, runtime)
    sur = chr(ch)
    ti = payload["tool_input"]
    key = {"cwd": None, "file_path": "file_path", "command": "command",
           "directory": "directory", "content": "content"}[field]
    if key is None:
        payload["cwd"] = payload["cwd"][:where] + sur + payload["cwd"][where:]
    elif key in ti:
        ti[key] = ti[key][:where] + sur + ti[key][where:]
    proc = run_main("hook", input=json.dumps(payload))
    assert b"internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 2)
    assert proc.returncode == 2 or proc.stderr == b"", proc.stderr
    proc.stderr.decode("ascii")
