"""How `pytest -n N` hands a kernel sweep's tests to its workers (docs/gating.md, "Parallel sweeps").

xdist's default (`--dist load`) sends tests in collection order, in chunks, to whichever worker asks: a branch's
correctness test and its benchmark then often land on different workers, and the benchmark's worker checks the
branch again before timing it (a worker start, the boundary dims, the default dims' reference) while the heavy
correctness tests of one case queue up on one worker. `BranchScheduling` sends each branch's tests (correctness,
benchmarks at every size, ISA) to one worker as one unit, one unit at a time to whichever worker is free; any other
test is a unit of its own. It is used with xdist's default `--dist load` unless `--dcuopt-xdist-schedule=xdist`;
another `--dist` mode given on the command line is left to xdist. The unit of a test comes from its id, which
only `collect.py` reads (`collect.branch_unit`, handed in by plugin.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdist.scheduler import LoadScopeScheduling


class BranchScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist's classes are untyped
    """xdist's scope scheduling with a branch's tests as the scope: `unit_of(nodeid)` names a test's unit."""

    def __init__(self, config: Any, log: Any, unit_of: Callable[[str], str]) -> None:
        super().__init__(config, log)
        self.unit_of = unit_of

    def _split_scope(self, nodeid: str) -> str:
        return self.unit_of(nodeid)
