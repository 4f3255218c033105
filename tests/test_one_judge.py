"""One judge (issue 19): `check --write-status`, `watch` (its status files) and the hook
(its per-file decisions) give the same verdicts, on every fixture round and on generated
variants of the causes; and a project's settings (`protocol`, an ignored cause, a
per-file ignore) are honoured alike by check from the repository root, check from a
parent directory, check over two repositories at once, watch, and the hook with the
payload's `cwd` at, below or above the repository root; `--settings FILE` and
`--show-settings` the same way.

watch runs as the installed console script with a real observer; every wait is on its
own signals (its status files, its stderr), as in test_watch_e2e.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qrspi_guard.contract.causes import CATALOGUE
from qrspi_guard.hook.judging import decide
from qrspi_guard.rules.registry import WRITE_CAUSES
from tests.support import FIXTURES, run_main
from tests.test_equivalence import write_mutated_tree
from tests.test_watch_e2e import SCRIPT, Watch, wait_for

#: causes no single write brings (the rule registry's round, run, layout and split
#: scopes): the hook does not judge them; everything else said about a file, it must say
ROUND_ONLY = set(CATALOGUE) - WRITE_CAUSES
OLD = 1_500_000_000  #: an mtime long past: every copied round counts as complete at once


def fixture_trees() -> list[Path]:
    trees = [FIXTURES / "example", FIXTURES / "example-fanin"]
    for sub in ("causes", "valid"):
        trees += sorted(p for p in (FIXTURES / sub).iterdir() if p.is_dir())
    return trees


def build_corpus(root: Path) -> Path:
    """Every fixture tree, and generated variants of the causes, under *root*."""
    for tree in fixture_trees():
        shutil.copytree(tree, root / f"{tree.parent.name}-{tree.name}", symlinks=True)
    for seed in (1, 2):
        write_mutated_tree(root / f"generated-{seed}", seed, rounds=18)
    age(root)
    return root


def age(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.utime(os.path.join(dirpath, name), (OLD, OLD), follow_symlinks=False)


def statuses(root: Path) -> dict[str, dict[str, Any]]:
    """Every status file below *root*, by path relative to it, without `checked_at`
    (and *root* itself, which messages may name, as ROOT)."""
    out = {}
    for path in sorted(root.rglob("round-*-guard.json")):
        doc = json.loads(path.read_text().replace(str(root), "ROOT"))
        doc.pop("checked_at")
        out[str(path.relative_to(root))] = doc
    return out


def round_files(root: Path) -> Iterator[Path]:
    """Every entry of every round directory below a `reviews/` directory."""
    for path in sorted(root.rglob("*")):
        if "reviews" in path.parts and path.parent.name.startswith("round") and (
                path.is_file() or path.is_symlink()) and not path.name.startswith("."):
            yield path


def check_json(*args: str, cwd: Path | None = None) -> dict[str, Any]:
    proc = run_main("check", "--format", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def by_file(doc: dict[str, Any], base: Path) -> dict[str, set[tuple[str, str, Any]]]:
    """check's diagnostics about files, by real path: {(cause, level, line)}."""
    out: dict[str, set[tuple[str, str, Any]]] = {}
    for d in doc["diagnostics"]:
        if d.get("file") is None or d["cause"] in ROUND_ONLY:
            continue
        path = os.path.realpath(os.path.join(base, d["path"]))
        out.setdefault(path, set()).add((d["cause"], d["level"], d.get("line")))
    return out


def post_write(path: Path, cwd: Path) -> dict[str, Any]:
    """A PostToolUse payload for a Write of *path* (the file as it is on disk), named
    relative to *cwd*."""
    return {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(cwd),
            "hook_event_name": "PostToolUse", "tool_name": "Write",
            "tool_input": {"file_path": os.path.relpath(path, cwd), "content": ""}}


def hook_says(path: Path, cwd: Path, settings: str | None = None
              ) -> set[tuple[str, str, Any]]:
    decision = decide(post_write(path, cwd), settings_file=settings)
    if decision.action == "ignore":
        return set()
    return {(d.cause, d.level, d.line) for d in decision.diagnostics if d.file == path.name}


# -- every fixture round and generated variants: the three agree ------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_corpus(tmp_path_factory.mktemp("one-judge") / "corpus")


def test_the_corpus_holds_every_cause_fixture_and_generated_rounds(corpus: Path) -> None:
    names = {p.name for p in corpus.iterdir()}
    assert {"causes-sidecar_wrong_extension", "causes-missing_round", "rounds-example-fanin",
            "generated-1"} <= names
    assert sum(1 for _ in round_files(corpus)) > 300


def test_watch_writes_every_status_file_exactly_as_check_write_status(
        corpus: Path, tmp_path: Path) -> None:
    expected = tmp_path / "check"
    shutil.copytree(corpus, expected, symlinks=True)
    proc = run_main("check", "--write-status", str(expected))
    assert proc.returncode == 1, proc.stderr  # the cause fixtures halt
    theirs = statuses(expected)
    assert len(theirs) > 100
    watched = tmp_path / "watch"
    shutil.copytree(corpus, watched, symlinks=True)
    w = Watch(watched).ready()
    try:
        def final() -> bool:  # the guard's own signal: each status file, decided
            for rel, doc in theirs.items():
                try:
                    mine = json.loads((watched / rel).read_text())
                except (OSError, ValueError):
                    return False
                if mine["status"] == "pending" and doc["status"] != "pending":
                    return False
            return True

        wait_for(final, "a decided status file for every round check wrote one for")
        mine = statuses(watched)
    finally:
        assert w.stop() == 0, w.err
    assert sorted(mine) == sorted(theirs)
    differ = [rel for rel in theirs if mine[rel] != theirs[rel]]
    assert not differ, (differ[:3], [(mine[r], theirs[r]) for r in differ[:1]])


def test_the_hook_decides_every_round_file_as_check_judges_it(corpus: Path) -> None:
    theirs = by_file(check_json(str(corpus)), corpus)
    judged = 0
    wrong = []
    for path in round_files(corpus):
        mine = hook_says(path, corpus)
        expected = theirs.get(os.path.realpath(path), set())
        judged += 1
        if mine != expected:
            wrong.append((str(path.relative_to(corpus)), sorted(mine), sorted(expected)))
    assert judged > 300
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("cause", ["sidecar_wrong_extension", "bad_round_dir_name",
                                   "unknown_step_dir", "missing_round"])
def test_the_hook_blocks_what_check_halts_on_in_the_issue_s_examples(
        corpus: Path, cause: str) -> None:
    """A `.score.yml` beside a fan-in finding, a finding in `round-05-fanout/` (its own
    causes too), files under unknown step directories: the hook says what check says."""
    tree = corpus / f"causes-{cause}"
    theirs = by_file(check_json(str(tree)), tree)
    blocked = [p for p in round_files(tree) if any(
        level == "error" for _, level, _ in hook_says(p, tree))]
    halting = [p for p in round_files(tree) if any(
        level == "error" for _, level, _ in theirs.get(os.path.realpath(p), ()))]
    assert blocked == halting


def test_a_finding_in_a_suffixed_round_gets_its_own_causes_and_the_dir_name(
        tmp_path: Path) -> None:
    rd = tmp_path / "run" / "reviews" / "design" / "round-05-fanout"
    rd.mkdir(parents=True)
    bad = rd / "quality-claude.finding-F01.md"
    bad.write_text("---\nfinding_id: R5-F01\nseverity: high\nchange_type: corectness\n"
                   "referenced_files: [a.py:L1-L2]\nartifact: design\nround: 5\n"
                   "reviewer: quality-claude\n---\n\nSomething is wrong here.\n")
    decision = decide(post_write(bad, tmp_path))
    assert decision.blocks
    assert {"bad_round_dir_name", "change_type_out_of_enum"} <= {
        d.cause for d in decision.diagnostics}


def test_files_under_unknown_step_directories_are_judged_by_the_hook(tmp_path: Path) -> None:
    for step in ("integration-wave-23", "spec-109"):
        rd = tmp_path / "run" / "reviews" / step / "round-01"
        rd.mkdir(parents=True)
        bad = rd / "quality-claude.finding-F01.md"
        bad.write_text("---\nfinding_id: R1-F01\nseverity: huge\n---\n")
        doc = check_json(str(tmp_path / "run"))
        theirs = by_file(doc, tmp_path).get(os.path.realpath(bad), set())
        assert any(level == "error" for _, level, _ in theirs)
        assert hook_says(bad, tmp_path) == theirs


# -- project settings, honoured alike wherever they are asked from -----------------------

BAD_CT = ("---\nfinding_id: R1-F0{n}\nseverity: high\nchange_type: {ct}\n"
          "referenced_files: [a.py:L1-L2]\nartifact: {step}\nround: 1\n"
          "reviewer: quality-claude\n---\n\nThe retry path is dropped; restore it.{end}")
SETTINGS = ('protocol = "apply-fix"\nignore = ["trailing_newline"]\n'
            '[per-file-ignores]\n"**/goals/**" = ["change_type_out_of_enum"]\n')


def make_repo(root: Path, settings: str | None = SETTINGS) -> Path:
    """A git repository with one run: a clean sentinel without `round` (missing_round
    under apply-fix only), a finding without a final newline (trailing_newline), and the
    same bad change_type in goals (per-file ignored) and in design (reported)."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    if settings is not None:
        (root / ".qrspi-guard.toml").write_text(settings)
    run = root / "run"
    (run / "reviews").mkdir(parents=True)
    (run / "config.md").write_text("---\nsecond_reviewer: false\nverifier_enabled: false\n---\n")
    for step in ("goals", "design"):
        rd = run / "reviews" / step / "round-01"
        rd.mkdir(parents=True)
        (rd / "quality-claude.finding-F01.md").write_text(
            BAD_CT.format(n=1, ct="corectness", step=step, end="\n"))
        (rd / "quality-claude.finding-F02.md").write_text(
            BAD_CT.format(n=2, ct="correctness", step=step, end=""))
        (rd / "scope-claude.clean.md").write_text(
            "---\nreviewer: scope-claude\nfindings: 0\n---\n")
    age(root)
    return root


def verdicts(doc: dict[str, Any], base: Path) -> set[tuple[str, str]]:
    """(file relative to the repository's run, cause) of every diagnostic about a file."""
    out = set()
    for d in doc["diagnostics"]:
        if d.get("file") is not None and d["cause"] not in ROUND_ONLY:
            real = os.path.realpath(os.path.join(base, d["path"]))
            out.add((_rel(real), d["cause"]))
    return out


def _rel(real: str) -> str:
    parts = Path(real).parts
    return "/".join(parts[parts.index("run") + 1:])


EXPECTED = {  # under SETTINGS
    ("reviews/design/round-01/quality-claude.finding-F01.md", "change_type_out_of_enum"),
    ("reviews/goals/round-01/scope-claude.clean.md", "missing_round"),
    ("reviews/design/round-01/scope-claude.clean.md", "missing_round"),
}
#: the same run without any settings: fan-in rules (no `round` needed), nothing ignored
UNSET = {
    ("reviews/design/round-01/quality-claude.finding-F01.md", "change_type_out_of_enum"),
    ("reviews/goals/round-01/quality-claude.finding-F01.md", "change_type_out_of_enum"),
    ("reviews/design/round-01/quality-claude.finding-F02.md", "trailing_newline"),
    ("reviews/goals/round-01/quality-claude.finding-F02.md", "trailing_newline"),
}


def test_check_honours_the_settings_from_the_root_and_from_a_parent_directory(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert verdicts(check_json("run", cwd=repo), repo) == EXPECTED
    assert verdicts(check_json("repo/run", cwd=tmp_path), tmp_path) == EXPECTED
    deep = repo / "run" / "reviews" / "design" / "round-01"
    assert verdicts(check_json(str(deep / "quality-claude.finding-F02.md"), cwd=tmp_path),
                    tmp_path) == {e for e in EXPECTED if "design" in e[0]}


def test_check_over_two_repositories_judges_each_under_its_own_settings(
        tmp_path: Path) -> None:
    make_repo(tmp_path / "a")
    make_repo(tmp_path / "b", settings=None)
    doc = check_json("a/run", "b/run", cwd=tmp_path)

    def of(repo: str) -> set[tuple[str, str]]:
        return {(_rel(os.path.realpath(tmp_path / d["path"])), d["cause"])
                for d in doc["diagnostics"] if d.get("file")
                and d["path"].startswith(f"{repo}/") and d["cause"] not in ROUND_ONLY}

    a, b = of("a"), of("b")
    assert a == EXPECTED
    assert b == UNSET


def test_show_settings_names_the_file_each_path_is_judged_under(tmp_path: Path) -> None:
    make_repo(tmp_path / "a")
    make_repo(tmp_path / "b", settings=None)
    one = run_main("check", "--show-settings", "a/run", cwd=tmp_path)
    assert one.returncode == 0
    assert one.stdout.decode().splitlines()[0] == "config file: a/.qrspi-guard.toml"
    both = run_main("check", "--show-settings", "a/run", "b/run", cwd=tmp_path).stdout.decode()
    assert "# a/run\nconfig file: a/.qrspi-guard.toml\n" in both
    assert "# b/run\nconfig file: (none)\n" in both
    as_json = json.loads(run_main("check", "--show-settings", "--format", "json", "a/run",
                                  "b/run", cwd=tmp_path).stdout)
    assert [(g["paths"], g["config_file"], g["protocol"]) for g in as_json] == [
        (["a/run"], "a/.qrspi-guard.toml", "apply-fix"), (["b/run"], None, "auto")]


@pytest.mark.parametrize("where", ["root", "below", "above"])
def test_the_hook_honours_the_settings_whatever_the_payload_cwd(
        tmp_path: Path, where: str) -> None:
    repo = make_repo(tmp_path / "repo")
    cwd = {"root": repo, "below": repo / "run" / "reviews", "above": tmp_path}[where]
    said = set()
    for path in round_files(repo):
        said |= {(_rel(str(path)), cause) for cause, _, _ in hook_says(path, cwd)}
    assert said == EXPECTED


def test_watch_honours_the_settings_found_from_root(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    expected = tmp_path / "expected"
    shutil.copytree(repo, expected, symlinks=True)
    run_main("check", "--write-status", "run", cwd=expected)
    theirs = statuses(expected)
    w = Watch(repo / "run").ready()
    try:
        wait_for(lambda: len(statuses(repo)) == len(theirs) and all(
            d["status"] != "pending" for d in statuses(repo).values()),
            "every round's decided status file")
    finally:
        assert w.stop() == 0
    mine = statuses(repo)
    assert mine == theirs
    causes = {(rel.split("/")[2], h["file"], h["cause"]) for rel, doc in mine.items()
              for h in doc["halts"] + doc["warnings"] if h.get("file")}
    assert causes == {(f.split("/")[1], f.split("/")[3], c) for f, c in EXPECTED}


# -- --settings FILE: replaces discovery, for every command --------------------------------


@pytest.mark.parametrize("name", ["custom.toml", "pyproject.toml"])
def test_settings_file_replaces_discovery_in_check_watch_and_hook(
        tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file's relative per-file-ignores globs are relative to the working directory
    (the payload's cwd for the hook), as ruff resolves its ``--config``'s paths."""
    repo = make_repo(tmp_path / "repo", settings='protocol = "fan-in"\n')  # overridden
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    text = SETTINGS if name != "pyproject.toml" else (
        "[project]\nname = 'x'\n\n[tool.qrspi-guard]\n" + SETTINGS.replace(
            "[per-file-ignores]", "[tool.qrspi-guard.per-file-ignores]"))
    settings = elsewhere / name
    settings.write_text(text)
    assert verdicts(check_json("--settings", str(settings), "run", cwd=repo), repo) == EXPECTED
    assert verdicts(check_json("run", cwd=repo), repo) == UNSET
    shown = run_main("check", "--settings", str(settings), "--show-settings", "run",
                     cwd=repo).stdout.decode().splitlines()[0]
    assert shown.startswith(f"config file: {settings}")
    said = set()
    for path in round_files(repo):
        said |= {(_rel(str(path)), cause) for cause, _, _ in hook_says(path, repo, str(settings))}
    assert said == EXPECTED
    blocked = run_main("hook", "--settings", str(settings), input=json.dumps(post_write(
        repo / "run/reviews/design/round-01/scope-claude.clean.md", repo)))
    assert blocked.returncode == 2 and b"missing_round" in blocked.stderr
    expected = tmp_path / "expected"
    shutil.copytree(repo, expected, symlinks=True)
    run_main("check", "--settings", str(settings), "--write-status", "run", cwd=expected)
    theirs = statuses(expected)
    monkeypatch.chdir(repo)  # watch's working directory
    w = Watch(repo / "run", "--settings", str(settings)).ready()
    try:
        wait_for(lambda: len(statuses(repo)) == len(theirs) and all(
            d["status"] != "pending" for d in statuses(repo).values()),
            "every round's decided status file")
    finally:
        assert w.stop() == 0
    assert statuses(repo) == theirs


def test_settings_and_isolated_together_is_a_usage_error(tmp_path: Path) -> None:
    settings = tmp_path / "s.toml"
    settings.write_text("")
    proc = run_main("check", "--settings", str(settings), "--isolated", str(tmp_path))
    assert proc.returncode == 2 and b"--isolated" in proc.stderr


def test_the_console_script_is_what_watch_runs() -> None:
    assert os.access(SCRIPT, os.X_OK)


def test_a_round_that_cannot_be_listed_is_unreadable_dir_in_watch_as_in_check(
        tmp_path: Path) -> None:
    """One entry loop: watch's cache does not make its own verdict on the listing."""
    from qrspi_guard.contract.runconfig import Overrides
    from qrspi_guard.engine.check import check_round_dir
    from qrspi_guard.engine.discover import round_of_dir
    from qrspi_guard.judge import Judge
    from qrspi_guard.watch.judge import RoundJudge

    rd = make_repo(tmp_path / "repo", settings=None) / "run" / "reviews" / "design" / "round-01"
    ref = round_of_dir(str(rd))
    assert ref is not None
    cache = RoundJudge(ref)
    for name in os.listdir(rd):
        cache.judge(name)
    shutil.rmtree(rd)
    rd.write_text("not a directory any more\n")  # listing it fails (ENOTDIR), even as root
    watched = Judge.using(Overrides()).judge(ref, cache=cache.begin(), ignore_temp=True,
                                             complete=False)
    checked = check_round_dir(str(rd))
    assert checked is not None
    assert [d.cause for d in watched.diagnostics if d.file is None and d.level == "error"] == [
        d.cause for d in checked.diagnostics if d.cause == "unreadable_dir"] == ["unreadable_dir"]
