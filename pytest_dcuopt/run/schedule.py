"""How `pytest -n N` hands a kernel sweep's tests to its workers (docs/gating.md, "Parallel sweeps").

xdist's default (`--dist load`) sends tests in collection order, in chunks, to whichever worker asks: a branch's
correctness test and its benchmark then often land on different workers, and the benchmark's worker checks the
branch again before timing it (a worker start, the boundary dims, the default dims' reference) while the heavy
correctness tests of one case queue up on one worker. `BranchScheduling` sends each branch's tests (correctness,
benchmarks at every size, ISA) to one worker as one unit, one unit at a time to whichever worker is free; any other
test is a unit of its own. It is used with xdist's default `--dist load` unless `--dcuopt-xdist-schedule=xdist`;
another `--dist` mode given on the command line is left to xdist.
"""
from __future__ import annotations

import re

from xdist.scheduler import LoadScopeScheduling

# A kernel case's generated test: <case>/ref.py::test_<kind>_<toolchain>[<branch>] or [<branch>-<size>]
_CASE_TEST = re.compile(r"^(?P<module>.+?)::test_[a-z]+_(?P<toolchain>[a-z0-9]+)\[(?P<branch>[^\]-]+)(?:-[^\]]*)?\]$")


def branch_scope(nodeid: str) -> str:
    """The unit a test belongs to: `<module>::<toolchain>::<branch>` for a kernel case's test, else its own id.
    A branch id with a `-` in it shares a unit with the branches named alike before the `-` (a coarser unit)."""
    found = _CASE_TEST.match(nodeid)
    if found is None:
        return nodeid
    return f"{found['module']}::{found['toolchain']}::{found['branch']}"


class BranchScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist's classes are untyped
    """xdist's scope scheduling with a branch's tests as the scope."""

    def _split_scope(self, nodeid: str) -> str:
        return branch_scope(nodeid)
