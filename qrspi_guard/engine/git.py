"""git, run the one way the guard runs it: no shell, and none of the programs a
repository's configuration or attributes can name (loop.md: "git, wherever the guard
runs it, runs none of the repository's helper programs"). ``prepare``, ``review-prep``,
``await`` (:mod:`qrspi_guard.loop.git`) and config.md's history
(:mod:`qrspi_guard.engine.history`) all run git through :func:`command`.

A repository's configuration is untrusted (whoever can write ``.git/config`` or a
``.gitattributes`` must not choose a program the guard runs), so each call:

- gives git configuration on its command line, which wins over every file:
  :data:`HELPERS_OFF` (no fsmonitor, hooks, pager, credential or ssh helper, no
  transport at all), and for every filter driver the configuration names (``git config
  --get-regexp``, asked just before the call) its ``clean``, ``smudge`` and ``process``
  programs emptied and ``required`` off. Git 2.39 has no ``--attr-source``: the work
  tree's attributes are otherwise kept, so a diff's bytes stay git's;
- turns diff drivers off on every command that diffs (:data:`DIFFING`):
  ``--no-ext-diff`` (``diff.external``, ``diff.<driver>.command``, ``GIT_EXTERNAL_DIFF``)
  and ``--no-textconv``. An empty ``-c diff.<driver>.command=`` would not do: git would
  run the empty string through a shell;
- runs with no pager, no prompt, no optional locks and the C locale, without the
  caller's ``GIT_EXTERNAL_DIFF``, ``GIT_ASKPASS``, ``SSH_ASKPASS`` or ``GIT_SSH*``.

A filter driver whose name git's ``-c`` cannot spell (a ``=`` in it) is refused: the
call does not run. A driver added to the configuration between the listing and the
call is the one gap left (git has no switch that turns every filter off).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from qrspi_guard.errors import GuardError
from qrspi_guard.records import record

#: the most of git's standard output kept (a diff larger than this is refused, named)
STDOUT_CAP = 256 * 1024 * 1024
#: the most of git's standard error kept for a message
STDERR_CAP = 8 * 1024
#: configuration that turns off every helper a command might reach
HELPERS_OFF = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.pager=cat",
               "credential.helper=", "core.askPass=", "core.sshCommand=",
               "protocol.allow=never")
#: the filter drivers' programs, listed by the configuration's keys
_FILTER_KEYS = r"^filter\..+\.(clean|smudge|process|required)$"
_FILTER_OFF = ("clean=", "smudge=", "process=", "required=false")
#: subcommands that produce a diff: each gets :data:`NO_DIFF_HELPERS`
DIFFING = frozenset({"diff", "log", "show", "diff-tree", "diff-index", "diff-files",
                     "format-patch"})
NO_DIFF_HELPERS = ("--no-ext-diff", "--no-textconv")
#: the caller's environment that names programs: never passed on
_DROPPED = ("GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_SSH", "GIT_SSH_COMMAND",
            "GIT_PAGER", "PAGER", "GIT_EDITOR")
#: the caller's environment that names a repository: dropped when the call names its own
_REPO_VARS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")


@record(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self) -> str:
        """git's own first stderr line (escaped by the caller), or the exit status."""
        for line in self.stderr.decode("utf-8", "replace").splitlines():
            if line.strip():
                return line.strip()
        return f"git exited {self.returncode}"


class GitUnavailable(GuardError):
    """git itself cannot be started (not installed, not executable)."""


@record(frozen=True)
class Command:
    """A git call ready to run: its argv and environment."""

    argv: tuple[str, ...]
    env: dict[str, str]


def environment(own_repo: bool = False) -> dict[str, str]:
    """git's environment: the caller's, less what names a program (and, with
    *own_repo*, a repository: the call names its own), no pager, prompt or optional
    lock, the C locale."""
    env = {k: v for k, v in os.environ.items()
           if k not in _DROPPED and not (own_repo and k in _REPO_VARS)}
    env.update(GIT_PAGER="cat", PAGER="cat", GIT_TERMINAL_PROMPT="0",
               GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env


def command(args: Sequence[str], cwd: str, own_repo: bool = False,
            timeout: float = 20.0) -> Command | GitResult:
    """``git ARGS`` in *cwd* with every helper off (module docstring), or the failure
    that keeps it from running so (the filter drivers could not be listed, or one
    cannot be turned off). Raises :class:`GitUnavailable`."""
    env = environment(own_repo)
    listed = _run(["git", "--no-pager", "config", "-z", "--name-only", "--get-regexp",
                   _FILTER_KEYS], cwd, env, None, timeout, "config")
    if listed.returncode not in (0, 1):  # 1: no such key
        return GitResult(listed.returncode, b"", b"git config cannot list the repository's "
                         b"filter drivers: " + listed.reason().encode("utf-8", "replace"))
    overrides = list(HELPERS_OFF)
    for driver in sorted(_drivers(listed.stdout if listed.returncode == 0 else b"")):
        if "=" in driver:
            return GitResult(128, b"", b"the repository's configuration names a filter "
                             b"driver with '=' in its name, which cannot be turned off")
        overrides.extend(f"filter.{driver}.{off}" for off in _FILTER_OFF)
    argv = ["git", "--no-pager"]
    for item in overrides:
        argv += ["-c", item]
    args = list(args)
    if args and args[0] in DIFFING:
        args[1:1] = NO_DIFF_HELPERS
    return Command((*argv, *args), env)


def _drivers(listing: bytes) -> set[str]:
    """The filter drivers' names in ``git config -z --name-only`` output."""
    out = set()
    for key in listing.split(b"\0"):
        name = os.fsdecode(key)
        if name.startswith("filter.") and name.count(".") >= 2:
            out.add(name[len("filter."):name.rindex(".")])
    return out


def run(args: Sequence[str], cwd: str, stdin: bytes | None = None, timeout: float = 600.0,
        own_repo: bool = False) -> GitResult:
    """``git ARGS`` in *cwd* (:func:`command`), its output captured within the caps.
    Raises :class:`GitUnavailable` when git cannot start; any exit status is data."""
    cmd = command(args, cwd, own_repo, min(timeout, 60.0))
    if isinstance(cmd, GitResult):
        return cmd
    return _run(list(cmd.argv), cwd, cmd.env, stdin, timeout, args[0] if args else "")


def _run(argv: list[str], cwd: str, env: dict[str, str], stdin: bytes | None,
         timeout: float, what: str) -> GitResult:
    try:
        proc = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=env,
                              timeout=timeout, check=False)
    except OSError as exc:
        if exc.filename == argv[0] or not isinstance(exc, (FileNotFoundError,
                                                           PermissionError)):
            raise GitUnavailable(f"git cannot be run: {exc.strerror}") from None
        return GitResult(128, b"", f"cannot use {cwd}: {exc.strerror}".encode(
            "utf-8", "surrogateescape"))
    except subprocess.TimeoutExpired:
        return GitResult(124, b"", f"git {what} timed out".encode())
    out = proc.stdout
    if len(out) > STDOUT_CAP:
        return GitResult(125, b"", b"git output over the size cap")
    return GitResult(proc.returncode, out, proc.stderr[:STDERR_CAP])
