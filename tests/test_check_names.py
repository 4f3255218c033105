"""Names a user of ruff or pre-commit would guess: `--config` is the run's config.md and
refuses the project configuration (a TOML file) by naming `--settings`; the format of an
`--output` file follows `--output-format`, else the file's extension, else `--format`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support import FIXTURES, run_main

EXAMPLE = FIXTURES / "example"
RUN = next(EXAMPLE.rglob("config.md")).parent
ROUND = RUN / "reviews" / "design" / "round-02"


# -- --config: the run's config.md, never a TOML file ------------------------------------


@pytest.mark.parametrize("command", [["check"], ["status"], ["report", "-o", "r.html"],
                                     ["watch"]])
def test_config_pyproject_toml_is_refused_naming_settings(tmp_path: Path,
                                                          command: list[str]) -> None:
    """A ruff user's `--config pyproject.toml` was read as a config.md: one
    config_field_missing error at pyproject.toml:1, and the round's missing-reviewer
    errors gone. It is exit 2 and one line naming --settings, before any work."""
    (tmp_path / "pyproject.toml").write_text('[tool.qrspi-guard]\nignore = ["fnum_gap"]\n')
    proc = run_main(*command, str(ROUND), "--config", "pyproject.toml", cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.count("\n") == 1, err
    assert err.startswith(f"qrspi-guard {command[0]}: error: Invalid value for --config: "
                          "'pyproject.toml' is a TOML file"), err
    assert "--settings FILE" in err
    assert proc.stdout == b"" and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(("name", "text"), [
    (".qrspi-guard.toml", 'ignore = ["fnum_gap"]\n'),
    ("settings.TOML", ""),                          # the name alone says TOML
    ("qrspi.cfg", '[tool.qrspi-guard]\nstrict = true\n'),  # no frontmatter, parses as TOML
])
def test_any_toml_file_given_to_config_is_refused(tmp_path: Path, name: str,
                                                   text: str) -> None:
    (tmp_path / name).write_text(text)
    proc = run_main("check", str(ROUND), "--config", name, cwd=tmp_path)
    assert proc.returncode == 2
    assert "is a TOML file" in proc.stderr.decode() and b"--settings" in proc.stderr


def test_a_config_md_given_to_config_is_still_read(tmp_path: Path) -> None:
    """The public meaning stays: a config.md (frontmatter), or a file with none that is
    not TOML (it is judged as the config.md it was given as)."""
    shutil.copy(RUN / "config.md", tmp_path / "my-config.md")
    proc = run_main("check", str(ROUND), "--config", "my-config.md", "--format", "json",
                    cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    causes = {d["cause"] for d in json.loads(proc.stdout)["diagnostics"]}
    assert "expected_tag_no_output" in causes and "config_field_missing" not in causes
    (tmp_path / "notes.md").write_text("# Run notes\n\nNothing here yet.\n")
    proc = run_main("check", str(ROUND), "--config", "notes.md", "--format", "json",
                    cwd=tmp_path)
    assert proc.returncode == 1
    causes = {d["cause"] for d in json.loads(proc.stdout)["diagnostics"]}
    assert "config_field_missing" in causes or "config_malformed" in causes, causes


def test_the_help_says_what_config_and_settings_take() -> None:
    text = " ".join(run_main("check", "--help").stdout.decode().split())
    assert "--config FILE Use FILE as the run's config.md" in text
    assert "a TOML file, is --settings" in text


# -- --output FILE: the format by --output-format, the extension, --format ---------------


def written(tmp_path: Path, *args: str) -> tuple[str, str]:
    """(stdout, the file's text) of `check EXAMPLE ARGS` in *tmp_path*."""
    proc = run_main("check", str(EXAMPLE), *args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    out = args[args.index("--output") + 1]
    return proc.stdout.decode(), (tmp_path / out).read_text()


def kind(text: str) -> str:
    if text.startswith("<?xml"):
        return "junit"
    if text.startswith("{"):
        doc = json.loads(text)
        return "sarif" if "runs" in doc else "json"
    return "text" if text.rstrip().endswith("0 warnings") else "other"


@pytest.mark.parametrize(("name", "fmt"), [("x.txt", "text"), ("x.json", "json"),
                                           ("x.sarif", "sarif"), ("x.xml", "junit"),
                                           ("X.SARIF", "sarif"), ("a.b.json", "json")])
def test_output_file_gets_the_format_its_extension_names(tmp_path: Path, name: str,
                                                         fmt: str) -> None:
    """`check --output x.txt` wrote JSON into a .txt file."""
    stdout, text = written(tmp_path, "--output", name)
    assert kind(text) == fmt
    assert kind(stdout) == "text"  # stdout keeps the text lines


def test_output_format_wins_over_the_extension(tmp_path: Path) -> None:
    stdout, text = written(tmp_path, "--output", "x.txt", "--output-format", "sarif",
                           "--format", "json")
    assert kind(text) == "sarif" and kind(stdout) == "json"


@pytest.mark.parametrize(("fmt", "expected"), [([], "text"), (["--format", "json"], "json"),
                                               (["--format", "junit"], "junit")])
def test_without_a_known_extension_the_file_gets_format(tmp_path: Path, fmt: list[str],
                                                        expected: str) -> None:
    _, text = written(tmp_path, "--output", "report.out", *fmt)
    assert kind(text) == expected


def test_statistics_to_a_file_follows_the_extension_too(tmp_path: Path) -> None:
    stdout, text = written(tmp_path, "--statistics", "--output", "stats.json")
    assert [r["cause"] for r in json.loads(text)][:1] == ["change_type_out_of_enum"]
    assert stdout.startswith("1  change_type_out_of_enum")
    proc = run_main("check", str(EXAMPLE), "--statistics", "--output", "s.sarif",
                    cwd=tmp_path)
    assert proc.returncode == 2 and b"--statistics writes text or json" in proc.stderr
    assert not (tmp_path / "s.sarif").exists()


def test_the_help_says_how_the_output_format_is_chosen() -> None:
    text = " ".join(run_main("check", "--help").stdout.decode().split())
    assert ".json json, .sarif sarif, .xml junit, .txt text; any other: --format" in text
