"""Driving the real agent runtimes (``claude``, ``gemini``) with a scripted model.

Each run gets its own home directory (its settings, plugins, extensions, trust list),
the runtime installed by tests/npmtools.py, and the scripted model of
tests/agentmodel.py on 127.0.0.1. Nothing leaves the machine: the model is the only
address either runtime is given, their telemetry, update checks and error reports are
switched off, and a proxy on a closed loopback port catches anything else (loopback
itself is exempt).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.agentmodel import Exchange, ScriptedModel, Step

#: one run of a runtime: bounded (a scripted model answers at once)
RUN_TIMEOUT = 180
#: a port nothing listens on: any request that is not for the model fails here, locally
DEAD_PROXY = "http://127.0.0.1:9"


@dataclass
class Outcome:
    """What a run did: the tool results the model was sent, and what the user saw."""

    code: int
    results: list[Exchange]
    stdout: str
    stderr: str
    seconds: float
    bodies: list[Any] = field(default_factory=list)

    def result(self, step: int) -> str:
        found = [e.result for e in self.results if e.step == step]
        assert found, f"the model was never sent a result for step {step}: {self.results}"
        return found[0]

    def model_saw(self, text: str) -> bool:
        return any(text in json.dumps(b, ensure_ascii=False) for b in self.bodies)


def drive(cli: Path, args: list[str], project: Path, script: list[Step],
          env_for: Any, max_requests: int = 60) -> Outcome:
    """Run ``cli -p ... args`` in *project* against a scripted model playing *script*;
    *env_for* gives the environment for the model's base URL."""
    with ScriptedModel(script, max_requests=max_requests) as model:
        start = time.monotonic()
        proc = subprocess.run([str(cli), "-p", "Write the review findings.",
                               "--output-format", "stream-json", *args],
                              cwd=project, env=env_for(model.url), text=True,
                              capture_output=True, timeout=RUN_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        took = time.monotonic() - start
    return Outcome(proc.returncode, model.results, proc.stdout, proc.stderr, took,
                   model.bodies)


def _base_env(home: Path, path: str) -> dict[str, str]:
    keep = ("LANG", "LC_ALL", "TERM", "TMPDIR", "XDG_CACHE_HOME")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), PATH=path, HTTP_PROXY=DEAD_PROXY, HTTPS_PROXY=DEAD_PROXY,
               http_proxy=DEAD_PROXY, https_proxy=DEAD_PROXY,
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


class Claude:
    """Claude Code in *home*."""

    name = "claude"
    write, edit, shell = "Write", "Edit", "Bash"
    edit_extra: dict[str, str] = {}

    def __init__(self, cli: Path, home: Path, path: str) -> None:
        self.cli, self.home, self.path = cli, home, path
        home.mkdir(parents=True, exist_ok=True)

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = _base_env(self.home, self.path)
        env.update(DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", IS_SANDBOX="1")
        env.update(extra or {})
        return env

    def cli_run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        # no API key: with one, each plugin command waits about 18 s on the network
        return subprocess.run([str(self.cli), *args], cwd=cwd, env=self.env(), text=True,
                              capture_output=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)

    def install_plugin(self, marketplace: Path, cwd: Path, *config: str) -> None:
        for args in (("plugin", "marketplace", "add", str(marketplace)),
                     ("plugin", "install", "qrspi-guard@qrspi-guard",
                      *[a for c in config for a in ("--config", c)])):
            proc = self.cli_run(*args, cwd=cwd)
            assert proc.returncode == 0, proc.stdout + proc.stderr

    def run(self, project: Path, script: list[Step], extra_env: dict[str, str] | None = None
            ) -> Outcome:
        return drive(self.cli, ["--verbose", "--permission-mode", "bypassPermissions"],
                     project, script, lambda url: self.env({
                         "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-scripted",
                         **(extra_env or {})}))

    @staticmethod
    def user_notices(outcome: Outcome) -> list[str]:
        """The notices Claude Code showed the user (a hook's systemMessage)."""
        out = []
        for line in outcome.stdout.splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == "system" and event.get("subtype") == "informational":
                out.append(str(event.get("content")))
        return out


class Gemini:
    """Gemini CLI in *home*: API-key auth against the scripted model, nothing sent
    anywhere else."""

    name = "gemini"
    write, edit, shell = "write_file", "replace", "run_shell_command"
    edit_extra = {"instruction": "Raise the severity."}  # replace requires one

    def __init__(self, cli: Path, home: Path, path: str) -> None:
        self.cli, self.home, self.path = cli, home, path
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "general": {"enableAutoUpdate": False,
                                "enableAutoUpdateNotification": False}}
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        self.trusted: dict[str, str] = {}

    def trust(self, folder: Path) -> None:
        self.trusted[str(folder)] = "TRUST_FOLDER"
        (self.home / ".gemini" / "trustedFolders.json").write_text(json.dumps(self.trusted))

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = _base_env(self.home, self.path)
        env.update(GEMINI_API_KEY="scripted", GEMINI_CLI_NO_RELAUNCH="true")
        env.update(extra or {})
        return env

    def install_extension(self, source: Path, cwd: Path) -> None:
        self.trust(source)  # gemini asks whether to trust the source folder otherwise
        proc = subprocess.run([str(self.cli), "extensions", "install", str(source), "--consent"],
                              cwd=cwd, env=self.env(), text=True, capture_output=True,
                              timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def run(self, project: Path, script: list[Step], extra_env: dict[str, str] | None = None,
            skip_trust: bool = False) -> Outcome:
        return drive(self.cli, ["--yolo", *(["--skip-trust"] if skip_trust else [])],
                     project, script, lambda url: self.env({
                         "GOOGLE_GEMINI_BASE_URL": url, **(extra_env or {})}))

    @staticmethod
    def user_notices(outcome: Outcome) -> list[str]:
        """The notices Gemini CLI showed the user (a hook's systemMessage)."""
        prefix = "Hook system message: "
        return [line[len(prefix):] for line in outcome.stderr.splitlines()
                if line.startswith(prefix)]
