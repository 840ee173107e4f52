"""`context.require_built`, the one start of every test of a branch (the generated tests and the observers):
skip where the toolchain cannot do what the test needs, build once, skip a rejected branch, fail on a build error."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.case.model import load_case
from pytest_dcuopt.context import require_built
from pytest_dcuopt.errors import CaseError, DcuOptError
from pytest_dcuopt.options import Options
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.base import Availability, BranchUnavailable, Capability
from pytest_dcuopt.variant import BuildSettings, Variant
from tests.conftest import KERNELS

VADD = KERNELS / "vector_add"


class Context:
    """A run that can do `capability` with the cpu toolchain and whose build leaves `error` on the variant."""

    def __init__(self, capability: Capability, error: DcuOptError | None = None) -> None:
        self.capability, self.error, self.built = capability, error, 0

    @property
    def options(self) -> Options:
        raise AssertionError("require_built needs no options")

    @property
    def run_dir(self) -> Path:
        raise AssertionError("require_built needs no run dir")

    def build_settings(self) -> BuildSettings:
        raise AssertionError("require_built builds through resolve only")

    def availability(self, toolchain: str) -> Availability:
        return Availability(self.capability, "what the probe found")

    def resolve(self, variant: Variant) -> None:
        self.built += 1
        variant.setup_error = self.error

    def add_report(self, observer: str, entry: dict[str, Any]) -> None:
        raise AssertionError("require_built reports nothing")


def variant() -> Variant:
    case = load_case(VADD, KERNELS)
    branch = next(b for b in case.branches if b.name == "baseline" and b.suffix == ".cpp")
    return Variant(case, make_toolchain("cpu"), branch, BranchRecord(case.name, "cpu", "baseline", "kernel.cpp"))


def test_a_toolchain_that_cannot_run_skips_a_running_test_without_building_and_may_say_so_in_the_record() -> None:
    context, branch = Context(Capability.COMPILE_ONLY), variant()
    with pytest.raises(pytest.skip.Exception, match="cpu toolchain cannot run kernels here: what the probe found"):
        require_built(context, branch, runs_kernel=True, record_skip=True)
    assert context.built == 0 and branch.record.skipped == "cpu toolchain cannot run kernels here: what the probe found"
    other = variant()
    with pytest.raises(pytest.skip.Exception):
        require_built(context, other, runs_kernel=True)
    assert other.record.skipped is None  # an observer's skip is its test's, not the branch's


def test_a_build_only_test_builds_where_the_toolchain_can_build_and_skips_where_it_cannot() -> None:
    context = Context(Capability.COMPILE_ONLY)
    require_built(context, variant(), runs_kernel=False)
    assert context.built == 1
    with pytest.raises(pytest.skip.Exception, match="cpu toolchain cannot build here"):
        require_built(Context(Capability.UNAVAILABLE), variant(), runs_kernel=False)


def test_a_rejected_branch_skips_and_a_build_error_fails_headed_by_what_it_costs() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"^unavailable: rejected by the stack"):
        require_built(Context(Capability.RUN, BranchUnavailable("rejected by the stack")), variant(), runs_kernel=True)
    with pytest.raises(pytest.fail.Exception, match=r"^ablation of x: nothing to attribute:\nbad dims"):
        require_built(Context(Capability.RUN, CaseError("bad dims")), variant(), runs_kernel=True,
                      failing="ablation of x: nothing to attribute:\n")
