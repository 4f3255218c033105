"""The public Python API, for orchestrators that embed the guard.

>>> from qrspi_guard import check
>>> result = check("docs/qrspi/2026-05-17-auth-rework")
>>> result.failed(), [d.cause for d in result.diagnostics]
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from qrspi_guard.contract.runconfig import Overrides
from qrspi_guard.engine.check import check_paths, check_round_dir
from qrspi_guard.engine.results import CheckResult, RoundResult
from qrspi_guard.errors import PathNotFound


def _overrides(step: str | None, second_reviewer: bool | None, verifier: bool | None,
               require_sidecars: bool, expect: Iterable[str] | None,
               config: str | None) -> Overrides:
    return Overrides(step=step, second_reviewer=second_reviewer, verifier=verifier,
                     require_sidecars=require_sidecars,
                     expect=tuple(expect) if expect is not None else None, config_file=config)


def check(*paths: str, step: str | None = None, second_reviewer: bool | None = None,
          verifier: bool | None = None, require_sidecars: bool = False,
          expect: Iterable[str] | None = None, config: str | None = None) -> CheckResult:
    """Check every round at or below *paths* (default ``.``), as ``qrspi-guard check``.

    Raises :class:`PathNotFound` for a path that does not exist.
    """
    return check_paths(paths, _overrides(step, second_reviewer, verifier, require_sidecars,
                                         expect, config))


def check_round(round_dir: str, *, step: str | None = None,
                second_reviewer: bool | None = None, verifier: bool | None = None,
                require_sidecars: bool = False, expect: Iterable[str] | None = None,
                config: str | None = None) -> RoundResult:
    """Check one `round-NN` directory. Raises ValueError when it is not one."""
    result = check_round_dir(round_dir, _overrides(step, second_reviewer, verifier,
                                                   require_sidecars, expect, config))
    if result is None:
        raise ValueError(f"not a round-NN directory: {round_dir!r}")
    return result


def round_status(result: RoundResult) -> dict[str, Any]:
    """The round status document (round-contract §8) for a round result."""
    from qrspi_guard.output.status import status_document

    return status_document(result)


__all__ = ["check", "check_round", "round_status", "CheckResult", "RoundResult", "PathNotFound"]
