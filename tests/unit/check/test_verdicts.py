"""A branch's verdicts are written by check/verdicts.py only, and never changed in place."""
from __future__ import annotations

import dataclasses

import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check.verdicts import checked_boundary, found_correct, found_incorrect, verified_default
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.variant import Variant, Verdicts
from tests.conftest import CASES


def unbuilt() -> Variant:
    case = load_case(CASES / "judged_calls")
    source = case.root / "kernel.cpp"
    return Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch("baseline", source),
                   BranchRecord(case.name, "cpu", "baseline", str(source)))


def test_a_new_branch_has_no_verdict() -> None:
    variant = unbuilt()
    assert variant.verdicts == Verdicts(False, False, False) and variant.record.correct is None


def test_each_finding_sets_its_own_verdict_and_keeps_the_others() -> None:
    variant = unbuilt()
    verified_default(variant)
    checked_boundary(variant)
    assert variant.verdicts == Verdicts(default_verified=True, boundary_checked=True, failed_correctness=False)
    found_correct(variant)
    assert variant.record.correct is True
    found_incorrect(variant)
    assert variant.verdicts == Verdicts(default_verified=True, boundary_checked=True, failed_correctness=True)
    assert variant.record.correct is False


def test_verdicts_are_not_changed_in_place() -> None:
    variant = unbuilt()
    with pytest.raises(dataclasses.FrozenInstanceError):
        variant.verdicts.failed_correctness = True  # type: ignore[misc]
