"""Figures a machine cannot reach are flagged `implausible` and never crowned (report/plausibility.py), decided on
fixed ceilings and figures."""
from __future__ import annotations

from pytest_dcuopt.report.plausibility import Ceilings, device_ceilings, flag_records, implausible, over_speedup
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import build_state, rank_branches

# A 2-core VM: numpy copies 9 GB/s there, BLAS does 17 GFLOP/s; the honest vector_add branches reached 21 GB/s.
VM = Ceilings(9e9, 17e9, 32 << 20, "fixed")


def test_honest_figures_of_a_small_vm_are_plausible() -> None:
    assert implausible({"gbps": 21.0, "gflops": 1.75}, VM, 96e6, hot=False) is None
    assert implausible({"gflops": 60.0}, VM, None, hot=False) is None  # a matmul beating one BLAS run 3.5x
    # Hot samples of a working set that fits the cache: cache bandwidth, not judged.
    assert implausible({"gbps": 400.0}, VM, 786_432, hot=True) is None


def test_bandwidth_or_flops_over_the_machine_are_implausible() -> None:
    reason = implausible({"gbps": 3200.0}, VM, 96e6, hot=False)
    assert reason is not None and "3200 GB/s" in reason and "9 GB/s" in reason
    assert implausible({"gbps": 400.0}, VM, 786_432, hot=False) is not None  # cold: memory bandwidth applies
    assert implausible({"gflops": 500.0}, VM, None, hot=False) is not None


def test_the_speedup_bound_is_off_unless_given() -> None:
    assert over_speedup(35.0, None) is None
    assert over_speedup(35.0, 50.0) is None
    assert "above --dcuopt-max-speedup 10" in (over_speedup(35.0, 10.0) or "")


def test_declared_gpu_peaks_come_from_peaks_json() -> None:
    ceilings = device_ceilings({"api": "cuda", "device": "NVIDIA H200", "arch": "sm_90"})
    assert ceilings is not None and ceilings.bandwidth_bps is not None and ceilings.bandwidth_bps > 4e12
    assert device_ceilings({"api": "cuda", "device": "Unknown Accelerator", "arch": "sm_00"}) is None


def _timed(branch: str, median_ms: float, gbps: float) -> BranchRecord:
    record = BranchRecord("c", "cpu", branch, "k.cpp", correct=True)
    record.timing = {"median_ms": median_ms, "iqr_ms": 0.0, "min_ms": median_ms, "max_ms": median_ms,
                     "mean_ms": median_ms, "ci95_ms": [median_ms * 0.99, median_ms * 1.01], "rounds": 50,
                     "rel_spread": 0.01, "mode": "cold"}
    record.throughput = {"gbps": gbps}
    return record


def test_an_implausible_branch_is_never_champion_unless_allowed() -> None:
    records = [_timed("baseline", 4.6, 21.0), _timed("cached", 0.03, 3200.0), _timed("honest", 4.0, 24.0)]
    flag_records(records, host=VM)
    assert records[1].implausible is not None and records[0].implausible is None and records[2].implausible is None
    ranking = rank_branches(records)
    assert ranking["champion"] == "honest" and ranking["branches"]["cached"]["beats_baseline"] is False
    state = build_state(records, {})
    assert state["cases"]["c"]["toolchains"]["cpu"]["branches"]["cached"]["implausible"]["allowed"] is False
    allowed = [_timed("baseline", 4.6, 21.0), _timed("cached", 0.03, 3200.0)]
    flag_records(allowed, allowed=True, host=VM)
    assert rank_branches(allowed)["champion"] == "cached"


def test_the_table_says_implausible_in_the_verdict_and_noise_columns() -> None:
    from pytest_dcuopt.report.columns import BRANCH_COLUMNS
    from pytest_dcuopt.report.summary import branch_rows

    records = [_timed("baseline", 4.6, 21.0), _timed("cached", 0.03, 3200.0)]
    flag_records(records, host=VM)
    toolchain = build_state(records, {})["cases"]["c"]["toolchains"]["cpu"]
    headers = [column.header for column in BRANCH_COLUMNS]
    rows = {row[0].rstrip("*"): dict(zip(headers, row, strict=True)) for row in branch_rows(toolchain)}
    assert rows["cached"]["correct"] == "pass implausible" and rows["cached"]["beats noise"] == "implausible"
    assert rows["baseline"]["correct"] == "pass"
