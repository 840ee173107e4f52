"""Marks on a branch's median in summary.md and the terminal table."""
from __future__ import annotations

from pytest_dcuopt.report.summary import _branch_row


def test_an_emulated_timing_is_marked_not_representative() -> None:
    interpreted = {"correct": True, "timing": {"median_ms": 3.5, "representative": False, "rounds": 5}}
    assert _branch_row("b1", interpreted, str)[2] == "3.5 (not representative: emulated)"
    assert _branch_row("b1", {"correct": True, "timing": {"median_ms": 3.5, "rounds": 5}}, str)[2] == "3.5"
