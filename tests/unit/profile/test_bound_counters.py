"""The bound from the profiler's counters (ncu: SM throughput against DRAM throughput), the time-based roofline
only without them, and the record saying which evidence decided.

The matmul case is the one profiled on an H200 on 2026-12-01
(docs/evidence/h200/profile-marker-sync-solves-2026-12-01/profile-summary.json): a tiled matmul at 1024^3 moved
8.4 MB of DRAM in ~0.17 ms (about 1% of the H200's DRAM roof) yet was called memory-bound, because ncu's
gpu__compute_memory_throughput (the busiest of L1/shared, L2 and DRAM) stood in for DRAM.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.profile import ncu
from pytest_dcuopt.profile.metrics import CANONICAL, Metric, derive, metric_set
from pytest_dcuopt.profile.roofline import Ceilings, classify

H200 = Ceilings("h200", 67e12, 4212e9, "fp32")
DATA = Path(__file__).parents[2] / "data" / "profile"
MATMUL = {"model_flops": 2 * 1024 ** 3, "model_bytes": 12 * 1024 ** 2}


def ncu_profile(time_s: float, dram_bytes: float, **percent: float) -> dict[str, Metric]:
    """Metrics as ncu.normalize makes them from a details page with these counters (percentages as ncu prints)."""
    names = {"sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
             "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
             "memory": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
             "fma": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
             "occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active"}
    lines = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"',
             f'"0","k","gpu__time_duration.sum","nsecond","{time_s * 1e9:.0f}"',
             f'"0","k","dram__bytes_read.sum","byte","{dram_bytes * 0.75:.0f}"',
             f'"0","k","dram__bytes_write.sum","byte","{dram_bytes * 0.25:.0f}"']
    lines += [f'"0","k","{names[key]}","%","{value}"' for key, value in percent.items()]
    return derive(metric_set(ncu.normalize(ncu.parse_ncu_csv("\n".join(lines)))))


def test_a_tiled_matmul_with_busy_sms_and_idle_dram_is_compute_bound_not_memory_bound() -> None:
    metrics = ncu_profile(0.1747e-3, 8.4e6, sm=78.0, dram=1.5, memory=91.0, fma=55.0, occupancy=60.0)
    result = classify(metrics, H200, **MATMUL)
    assert result.bound == "compute", result.decided_by
    assert result.evidence == "counters"
    assert result.inputs["memory_utilization_from"] == "dram_throughput"
    assert result.utilization["memory"] == pytest.approx(0.015, abs=1e-3)  # not the 91% of L1/shared
    assert result.stop is None  # the FMA pipe at 55% and 18% of the FLOP roof: busy SMs, no reached roof
    assert result.decided_by.startswith("compute-bound: compute 78% (compute_throughput); memory 2% (dram_throughput)")
    assert "achieved occupancy 60%" in result.decided_by
    assert result.budget["compute"] == 2


def test_a_matmul_with_low_sm_and_dram_throughput_is_latency_bound() -> None:
    metrics = ncu_profile(0.3335e-3, 8.4e6, sm=32.0, dram=0.8, memory=36.0, occupancy=22.0)
    result = classify(metrics, H200, **MATMUL)
    assert result.bound == "latency" and result.evidence == "counters"
    assert "both below 40%" in result.decided_by and "achieved occupancy 22%" in result.decided_by
    assert result.budget["latency"] == 2


def test_a_streaming_kernel_with_busy_dram_is_memory_bound_and_near_the_roof_stops() -> None:
    metrics = ncu_profile(95e-6, 390e6, sm=18.0, dram=92.0, memory=92.0, occupancy=85.0)
    result = classify(metrics, H200, model_flops=32 * 2 ** 20, model_bytes=384 * 2 ** 20)
    assert result.bound == "memory" and result.evidence == "counters"
    assert result.stop is not None and result.stop.startswith("stop: within 3% of the memory roofline")
    assert result.budget == {"compute": 0, "memory": 0, "latency": 0}


def test_a_math_pipe_near_its_peak_is_a_reached_compute_roof() -> None:
    metrics = ncu_profile(1e-3, 1e6, sm=93.0, dram=1.0, fma=90.0)
    result = classify(metrics, H200, model_flops=0.5 * 67e12 * 1e-3, model_bytes=1e6)
    assert result.bound == "compute"
    assert result.stop is not None and "compute roofline (90% reached)" in result.stop


def test_without_counters_the_time_based_roofline_decides_and_says_so() -> None:
    time_only = derive(metric_set([Metric("kernel_time_s", 1e-3, "timer")]))
    result = classify(time_only, H200, model_flops=0.6 * 67e12 * 1e-3, model_bytes=1e6)
    assert result.bound == "compute" and result.evidence == "time"
    assert "compute 60% (ref.py flops(dims) / time / peak)" in result.decided_by


def test_the_memory_system_counter_alone_never_stands_in_for_dram() -> None:
    """An older metric set (no dram__throughput): L1/L2-busy 91% must not make a matmul memory-bound."""
    metrics = ncu_profile(0.1747e-3, 8.4e6, sm=78.0, memory=91.0)
    result = classify(metrics, H200, **MATMUL)
    assert result.bound == "compute" and result.evidence == "counters"  # DRAM from counted bytes over time
    assert result.inputs["memory_utilization_from"] == "profiler DRAM bytes / time / peak"


def test_float4_vector_add_dram_bytes_match_the_model_and_stop_near_the_ceiling() -> None:
    """The constructed H200-probe CSV (float4 vector add, N = 16M): DRAM bytes within 10% of bytes_moved and
    'near the ceiling' from DRAM bytes over time, whatever the memory-system counter says."""
    rows = ncu.parse_ncu_csv((DATA / "ncu_details_h200_vadd4.csv").read_text())
    metrics = derive(metric_set(ncu.normalize(rows[:1])))
    bytes_moved = 12 * 2 ** 24
    assert metrics["dram_bytes"].value / bytes_moved == pytest.approx(1.0, abs=0.10)
    result = classify(metrics, H200, model_flops=2 ** 24, model_bytes=bytes_moved)
    assert result.bound == "memory" and result.stop is not None and "memory roofline" in result.stop


def test_the_default_ncu_metric_set_gives_both_roofline_counters() -> None:
    assert "dram__throughput.avg.pct_of_peak_sustained_elapsed" in ncu.DEFAULT_METRICS
    assert "sm__throughput.avg.pct_of_peak_sustained_elapsed" in ncu.DEFAULT_METRICS
    assert {"dram_throughput", "compute_throughput"} <= set(CANONICAL)


@pytest.mark.parametrize("name", ["ncu_h200_matmul_naive_recorded.csv", "ncu_h200_matmul_lds_tiled_recorded.csv"])
def test_recorded_h200_matmul_counters_place_it_on_the_sms_not_dram(name: str) -> None:
    """Recorded on one H200 (tools/device/profile_check.sh, CASES=matmul, 1024^3): the SM counter at 78-81% with the
    FMA pipe at 13-14% and DRAM at 0.5%. The kernel is compute-bound by the counters, never memory-bound, and the
    sentence says that load/store and shared-memory issue, not arithmetic, keeps the SMs busy."""
    metrics = derive(metric_set(ncu.normalize(ncu.parse_ncu_csv((DATA / name).read_text()))))
    result = classify(metrics, H200, **MATMUL)
    assert result.bound == "compute" and result.evidence == "counters", result.decided_by
    assert result.utilization["memory"] is not None and result.utilization["memory"] < 0.02
    assert result.stop is None
    assert "math pipes are only 1" in result.decided_by and "not arithmetic" in result.decided_by
