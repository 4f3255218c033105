"""The test environment is locked, and the lock, the ranges and the claims agree.

The README's test command and ``.ci/run`` install ``requirements/test.txt`` with pip's
``--require-hashes``; ``.ci/lock`` writes it. A lock that no longer satisfies a range in
``pyproject.toml`` (a floor raised, a dependency added, but ``.ci/lock`` not run) would
install something else than the project asks for: these tests fail first.
"""

from __future__ import annotations

import sys

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support import REPO, claimed_pythons

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 run
    import tomli as tomllib

LOCK = REPO / "requirements" / "test.txt"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def environment(python: str) -> dict[str, str]:
    """Marker values of a Linux CPython *python* (the machines the suite runs on)."""
    return {"python_version": python, "python_full_version": f"{python}.0",
            "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
            "platform_python_implementation": "CPython", "implementation_name": "cpython",
            "platform_machine": "x86_64", "extra": ""}


def locked() -> dict[str, list[tuple[Version, Marker | None, int]]]:
    """Each locked package: its pins, each with the marker that selects it and how many
    file hashes it carries."""
    pins: dict[str, list[tuple[Version, Marker | None, int]]] = {}
    entry: list[str] = []

    def close() -> None:
        if not entry:
            return
        head = entry[0].rstrip(" \\")
        spec, _, marker = head.partition(";")
        name, _, version = spec.strip().partition("==")
        hashes = sum(line.count("--hash=sha256:") for line in entry)
        pins.setdefault(canonicalize_name(name), []).append(
            (Version(version), Marker(marker) if marker.strip() else None, hashes))
        entry.clear()

    for line in LOCK.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            close()
        entry.append(line)
    close()
    return pins


def declared() -> list[Requirement]:
    """Every requirement the locked environment must satisfy: the runtime dependencies,
    the [test] extra and the build backend (the editable install builds without an
    index)."""
    project = PYPROJECT["project"]
    texts = (project["dependencies"] + project["optional-dependencies"]["test"]
             + PYPROJECT["build-system"]["requires"])
    return [Requirement(t) for t in texts]


@pytest.mark.parametrize("python", claimed_pythons())
def test_the_lock_pins_every_declared_requirement_within_its_range(python: str) -> None:
    pins = locked()
    env = environment(python)
    for req in declared():
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        chosen = [v for v, m, _ in pins.get(canonicalize_name(req.name), [])
                  if m is None or m.evaluate(env)]
        assert len(chosen) == 1, (
            f"requirements/test.txt pins {req.name} {len(chosen)} times on Python {python}; "
            "run .ci/lock")
        assert req.specifier.contains(chosen[0], prereleases=True), (
            f"requirements/test.txt pins {req.name}=={chosen[0]}, outside {req} "
            f"(Python {python}); run .ci/lock")


def test_every_locked_package_is_pinned_exactly_with_its_hashes() -> None:
    pins = locked()
    assert pins, "requirements/test.txt is empty"
    for name, entries in pins.items():
        for version, _, hashes in entries:
            assert hashes >= 1, f"{name}=={version} has no hash in requirements/test.txt"


def test_the_readme_and_requires_python_state_the_same_floor() -> None:
    pythons = claimed_pythons()
    floor = pythons[0]
    assert PYPROJECT["project"]["requires-python"] == f">={floor}"
    readme = (REPO / "README.md").read_text()
    assert f"Python {floor}+" in readme
    assert f"Python {floor} to {pythons[-1]}" in readme  # what is tested where


def test_ci_installs_the_lock_with_hashes_and_gates_on_the_floors() -> None:
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    install = ".venv/bin/pip install -q --require-hashes -r requirements/test.txt"
    assert install in readme and install in ci
    assert "\n.ci/ranges lowest\n" in ci

