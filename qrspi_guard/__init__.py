"""qrspi-guard: keeps QRSPI AI review rounds honest.

Public API (imported lazily, so the command line stays fast)::

    from qrspi_guard import check, check_round, round_status, CATALOGUE
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs every start
if TYPE_CHECKING:  # pragma: no cover
    # Type checkers see the real names and types here; at run time they are imported
    # only on first use, through __getattr__ below (start-up time matters).
    from typing import Any

    from qrspi_guard.api import check, check_round, round_status  # noqa: F401
    from qrspi_guard.contract.causes import CATALOGUE, Cause  # noqa: F401
    from qrspi_guard.contract.diagnostics import Diagnostic  # noqa: F401
    from qrspi_guard.engine.results import CheckResult, RoundResult  # noqa: F401
    from qrspi_guard.errors import GuardError, PathNotFound  # noqa: F401

#: the one place the version is written (pyproject.toml reads it; release tags are v<it>)
__version__ = "0.2.0"

_API = {
    "check": "qrspi_guard.api",
    "check_round": "qrspi_guard.api",
    "round_status": "qrspi_guard.api",
    "CheckResult": "qrspi_guard.engine",
    "RoundResult": "qrspi_guard.engine",
    "PathNotFound": "qrspi_guard.errors",
    "GuardError": "qrspi_guard.errors",
    "Diagnostic": "qrspi_guard.contract.diagnostics",
    "CATALOGUE": "qrspi_guard.contract.causes",
    "Cause": "qrspi_guard.contract.causes",
}


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'qrspi_guard' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = ["__version__", *_API]
