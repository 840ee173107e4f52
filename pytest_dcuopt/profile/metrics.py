"""The normalized metric set: one name, one unit and one meaning per metric, whatever the profiler.

Every profiler turns its raw counters into `Metric`s named here (`CANONICAL`), each saying which raw
counters or formula it came from, so a record can be traced back to the tool's own columns. A metric a
tool does not give is absent, never 0. `rank_metrics` orders them by relevance to the bottleneck (the
axis the roofline names first, then how far each utilization is from its ideal), not by raw magnitude.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

FRACTION = "fraction"  # 0..1; percentages are converted on the way in


@dataclass(frozen=True)
class MetricInfo:
    unit: str
    axis: str  # compute | memory | latency | time | resources
    meaning: str
    good: str = ""  # "high" or "low" for fractions whose ideal is 1 or 0; "" when no direction applies


CANONICAL: dict[str, MetricInfo] = {
    "kernel_time_s": MetricInfo("s", "time", "device time of the kernel(s) under test, one call"),
    "dram_read_bytes": MetricInfo("bytes", "memory", "bytes read from DRAM/HBM"),
    "dram_write_bytes": MetricInfo("bytes", "memory", "bytes written to DRAM/HBM"),
    "dram_bytes": MetricInfo("bytes", "memory", "DRAM/HBM bytes read plus written"),
    "achieved_bandwidth_gbs": MetricInfo("GB/s", "memory", "DRAM/HBM bytes per second of kernel time (1e9 B/s)"),
    "flops": MetricInfo("FLOP", "compute", "floating-point operations counted by the profiler"),
    "flop_rate_gflops": MetricInfo("GFLOP/s", "compute", "counted FLOPs per second of kernel time"),
    "compute_throughput": MetricInfo(FRACTION, "compute", "SM/CU pipe throughput, fraction of its peak", "high"),
    "memory_throughput": MetricInfo(FRACTION, "memory", "busiest memory unit (L1/shared, L2 or DRAM), fraction of "
                                    "its peak; not the DRAM roof", "high"),
    "dram_throughput": MetricInfo(FRACTION, "memory", "DRAM/HBM throughput, fraction of its peak", "high"),
    "valu_utilization": MetricInfo(FRACTION, "compute", "vector ALU busy fraction: VALU issue slots used / available "
                                   "(DCU/AMD), FP32 FMA pipe active cycles (NVIDIA)", "high"),
    "matrix_pipe_utilization": MetricInfo(FRACTION, "compute", "matrix pipe (MMAC/MFMA/tensor) active fraction",
                                          "high"),
    "vmem_issue_utilization": MetricInfo(FRACTION, "memory", "texture-addresser busy / (CUs x cycles)", "high"),
    "l2_hit_rate": MetricInfo(FRACTION, "memory", "L2 hits / L2 accesses", "high"),
    "lds_bank_conflict_rate": MetricInfo(FRACTION, "memory",
                                         "LDS/shared bank-conflict cycles per LDS/shared instruction (capped at 1)",
                                         "low"),
    "lds_bank_conflicts": MetricInfo("count", "memory", "LDS/shared-memory bank conflicts (cycles or events)"),
    "achieved_occupancy": MetricInfo(FRACTION, "latency", "active warps/waves / maximum per SM/CU", "high"),
    "memory_stall_fraction": MetricInfo(FRACTION, "latency", "cycles the vector memory path stalled / busy cycles",
                                        "low"),
    "instructions": MetricInfo("count", "compute", "instructions retired (CPU) or wave-instructions issued"),
    "cycles": MetricInfo("count", "latency", "core cycles (CPU) or GPU busy cycles"),
    "ipc": MetricInfo("count/cycle", "latency", "instructions per cycle (CPU)"),
    "task_clock_s": MetricInfo("s", "time", "CPU time of all threads inside the profiled range (perf task-clock)"),
    "registers_per_thread": MetricInfo("count", "resources", "architectural vector registers per thread/lane"),
    "accum_registers_per_thread": MetricInfo("count", "resources", "accumulation registers per lane (AGPRs)"),
    "scalar_registers": MetricInfo("count", "resources", "scalar registers per wave"),
    "lds_bytes": MetricInfo("bytes", "resources", "LDS/shared memory per workgroup/block"),
    "scratch_bytes": MetricInfo("bytes", "resources", "scratch (private/local) memory per lane"),
    "grid_size": MetricInfo("count", "resources", "work-items/threads launched"),
    "workgroup_size": MetricInfo("count", "resources", "work-items/threads per workgroup/block"),
}


@dataclass(frozen=True)
class Metric:
    name: str
    value: float
    source: str  # the raw counter(s) or formula

    def __post_init__(self) -> None:
        if self.name not in CANONICAL:
            raise KeyError(f"{self.name!r} is not a normalized metric name; known: {', '.join(sorted(CANONICAL))}")

    @property
    def unit(self) -> str:
        return CANONICAL[self.name].unit

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "unit": self.unit, "source": self.source}


def metric_set(metrics: Iterable[Metric]) -> dict[str, Metric]:
    return {m.name: m for m in metrics}


def derive(metrics: Mapping[str, Metric]) -> dict[str, Metric]:
    """Add what follows from the others (bytes total, bandwidth, FLOP rate, IPC), when its inputs are there."""
    found = dict(metrics)
    read, write = found.get("dram_read_bytes"), found.get("dram_write_bytes")
    if "dram_bytes" not in found and read is not None and write is not None:
        found["dram_bytes"] = Metric("dram_bytes", read.value + write.value, "dram_read_bytes + dram_write_bytes")
    time = found.get("kernel_time_s")
    if time is not None and time.value > 0:
        total = found.get("dram_bytes")
        if total is not None and "achieved_bandwidth_gbs" not in found:
            found["achieved_bandwidth_gbs"] = Metric("achieved_bandwidth_gbs", total.value / time.value / 1e9,
                                                     "dram_bytes / kernel_time_s")
        flops = found.get("flops")
        if flops is not None and "flop_rate_gflops" not in found:
            found["flop_rate_gflops"] = Metric("flop_rate_gflops", flops.value / time.value / 1e9,
                                               "flops / kernel_time_s")
    instructions, cycles = found.get("instructions"), found.get("cycles")
    if instructions is not None and cycles is not None and cycles.value > 0 and "ipc" not in found:
        found["ipc"] = Metric("ipc", instructions.value / cycles.value, "instructions / cycles")
    return found


def badness(metric: Metric) -> float:
    """How far a directional fraction is from its ideal (0 = ideal, 1 = worst); 0 for metrics without one."""
    info = CANONICAL[metric.name]
    if info.unit != FRACTION or not info.good:
        return 0.0
    value = min(1.0, max(0.0, metric.value))
    return 1.0 - value if info.good == "high" else value


def rank_metrics(metrics: Mapping[str, Metric], bound: str | None, top: int = 5) -> list[dict[str, Any]]:
    """The top-`top` metrics by relevance to `bound` (compute/memory/latency): that axis first, then the
    worst directional fractions; raw magnitudes never decide (bytes and ratios are not comparable)."""
    def key(metric: Metric) -> tuple[int, float, str]:
        info = CANONICAL[metric.name]
        on_axis = 0 if info.axis == bound else 1 if info.axis in ("compute", "memory", "latency") else 2
        return (on_axis, -badness(metric), metric.name)

    ranked = sorted(metrics.values(), key=key)[:top]
    return [{"name": m.name, **m.to_json(), "axis": CANONICAL[m.name].axis, "badness": round(badness(m), 4),
             "why": _why(m, bound)} for m in ranked]


def _why(metric: Metric, bound: str | None) -> str:
    info = CANONICAL[metric.name]
    relation = "on the bottleneck axis" if info.axis == bound else f"{info.axis} axis"
    return f"{info.meaning} ({relation})"
