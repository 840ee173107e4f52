"""Roofline classification and the axis budget (how many methods per axis the next iteration tries).

Inputs: the normalized metrics of one profiled call, the workload model of ref.py (`flops`, `bytes_moved`
at the profiled dims) and the device's ceilings (`data/peaks.json`, or a copy measured in this session).

1. Utilization of each ceiling, from the profiler's counters when it gives them, else from time:
   compute `u_c` = the busiest of the SM/CU counters (`compute_throughput`: ncu's sm__throughput; the VALU/FMA
   and matrix pipes), or achieved FLOP/s / peak FLOP/s (counted FLOPs, else the model's) when larger; memory
   `u_m` = DRAM throughput (`dram_throughput`: ncu's dram__throughput, a fraction of the DRAM peak) or DRAM
   bytes/s / peak bandwidth (counted bytes, else the model's), whichever is larger. ncu's
   gpu__compute_memory_throughput (`memory_throughput`) is the busiest of L1, L2 and DRAM: a tiled matmul
   that keeps its shared memory busy reads ~90% there with DRAM nearly idle, so it is never taken for the
   DRAM roof. `evidence` says what decided: "counters" (both axes from counters), "time" (the time-based
   roofline: no counter for either axis), "time and counters" (one axis each).
2. Bound: the axis closer to its ceiling, unless both are below `LATENCY_BELOW` (neither the pipes nor the
   memory is busy: launch cost, stalls, occupancy or tails dominate) -> latency. Nothing known -> unknown.
3. Stop: the bound axis's *roof* utilization at or above `STOP_AT` -> "stop: within X% of the <axis> roofline",
   budget 0. The roof is FLOP/s (or a math pipe's busy fraction) for compute and DRAM bandwidth for memory; a
   busy SM counter alone (its load/store or shared-memory pipe) is a bound, not a reached roof.
4. Gaps per axis: the binding axis gets its utilization (methods that cut its work pay in proportion to how
   binding it is), the other resource axis its own utilization, latency `1 - max(u)` (the room left to the
   nearest roof). Gaps below `MIN_GAP` count 0. The budget splits `TOTAL` methods in proportion to the gaps
   by largest remainder (ties: memory, latency, compute), at most `MAX_PER_AXIS` per axis.

Fixed against the original `roofline.py`: it never used time, FLOPs or bytes (every real gfx936 CSV gave
compute 1 / memory 2 / latency 0); it rounded with banker's rounding; a kernel near its peak still got three
methods; missing evidence became 0.5/0.5/0.5 (three fabricated methods); SQTT's mere presence forced latency.
Here unknown evidence gives 0/0/0 with the reason, and near-peak gives 0/0/0 with the stop message.
"""
from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from .metrics import Metric

AXES = ("compute", "memory", "latency")
TIE_ORDER = ("memory", "latency", "compute")
TOTAL = 3
MAX_PER_AXIS = 2
MIN_GAP = 0.10
LATENCY_BELOW = 0.40
STOP_AT = 0.85
OVER_CEILING = 1.05  # above this the ceiling, not the kernel, is wrong


@lru_cache(maxsize=1)
def load_peaks() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("data/peaks.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@dataclass(frozen=True)
class Ceilings:
    device: str  # peaks.json id, or what was measured
    peak_flops: float | None  # FLOP/s at `precision`
    peak_bandwidth: float | None  # B/s
    precision: str
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def ridge(self) -> float | None:
        if self.peak_flops and self.peak_bandwidth:
            return self.peak_flops / self.peak_bandwidth
        return None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ridge_flop_per_byte": self.ridge}


def find_device(arch: str | None, device_name: str | None) -> tuple[dict[str, Any] | None, str]:
    """The peaks.json entry for a device: by marketing name first, else by arch when exactly one entry has it."""
    devices = load_peaks()["devices"]
    bare_arch = (arch or "").split(":", 1)[0]
    if device_name:
        for entry in devices:
            if any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", device_name, re.IGNORECASE)
                   for n in entry["names"]):
                return entry, f"peaks.json entry {entry['id']!r} (device name {device_name!r})"
    same_arch = [e for e in devices if bare_arch and fnmatch.fnmatch(bare_arch, e["arch"])]
    if len(same_arch) == 1:
        return same_arch[0], f"peaks.json entry {same_arch[0]['id']!r} (arch {bare_arch})"
    if same_arch:
        return None, (f"arch {bare_arch} matches {[e['id'] for e in same_arch]} in peaks.json and the device name "
                      f"{device_name!r} none of them: add the device's name to one entry")
    return None, f"no peaks.json entry for arch {arch!r} / device {device_name!r}"


def ceilings_for(arch: str | None, device_name: str | None, precision: str = "fp32",
                 measured_bandwidth: float | None = None, measured_source: str = "") -> Ceilings:
    entry, found = find_device(arch, device_name)
    sources: dict[str, str] = {"device": found}
    peak_flops = peak_bw = None
    if entry is not None:
        tflops = entry["flops_tflops"].get(precision)
        peak_flops = tflops * 1e12 if tflops else None
        sources["flops"] = (f"{precision} {tflops} TFLOP/s: {entry['sources']['flops_tflops']}" if tflops else
                            f"no {precision} peak in peaks.json for {entry['id']}: compute ceiling unknown")
        bandwidth = entry["bandwidth_gbs"]
        measured = sorted(((v, k) for k, v in bandwidth.items() if k.startswith("measured") and v), reverse=True)
        chosen = ((measured[0][1], measured[0][0]) if measured else
                  ("theoretical", bandwidth["theoretical"]) if bandwidth.get("theoretical") else None)
        if chosen:
            peak_bw = chosen[1] * 1e9
            sources["bandwidth"] = f"{chosen[0]} {chosen[1]} GB/s: {entry['sources']['bandwidth_gbs']}"
    if measured_bandwidth:
        peak_bw = measured_bandwidth
        sources["bandwidth"] = f"measured in this session: {measured_source}"
    if peak_bw is None:
        sources.setdefault("bandwidth", "memory ceiling unknown (no peaks.json entry and no measured copy)")
    if peak_flops is None:
        sources.setdefault("flops", "compute ceiling unknown (no peaks.json entry for this device)")
    return Ceilings(entry["id"] if entry else (device_name or arch or "unknown"), peak_flops, peak_bw, precision,
                    sources)


# Counters that measure how busy each axis is, by normalized name (metrics.py), first the most direct.
COMPUTE_COUNTERS = ("compute_throughput", "valu_utilization", "matrix_pipe_utilization")
ROOF_COMPUTE_COUNTERS = ("valu_utilization", "matrix_pipe_utilization")  # a math pipe near its peak is the roof
MEMORY_COUNTERS = ("dram_throughput",)


@dataclass
class Roofline:
    bound: str  # compute | memory | latency | unknown
    utilization: dict[str, float | None]
    gaps: dict[str, float]
    budget: dict[str, int]
    stop: str | None
    inputs: dict[str, Any]
    notes: list[str]
    evidence: str = "none"  # counters | time | time and counters | none
    decided_by: str = ""  # the sentence: which figures placed the kernel

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def classify(metrics: Mapping[str, Metric], ceilings: Ceilings, model_flops: float | None = None,
             model_bytes: float | None = None, time_s: float | None = None) -> Roofline:
    """Bound, stop verdict and axis budget of one profiled call (see the module docstring)."""
    notes: list[str] = []
    time = time_s if time_s is not None else _value(metrics, "kernel_time_s")
    flops, flops_from = _pick(_value(metrics, "flops"), model_flops, "profiler FLOP count", "ref.py flops(dims)")
    nbytes, bytes_from = _pick(_value(metrics, "dram_bytes"), model_bytes, "profiler DRAM bytes",
                               "ref.py bytes_moved(dims)")
    u_c = _credible(_fraction(flops, time, ceilings.peak_flops), "compute", ceilings.sources.get("flops"), notes)
    u_m = _credible(_fraction(nbytes, time, ceilings.peak_bandwidth), "memory", ceilings.sources.get("bandwidth"),
                    notes)
    roof_c, roof_m = u_c, u_m
    roof_c, _ = _raise_to_counter(roof_c, metrics, ROOF_COMPUTE_COUNTERS, [])
    roof_m, _ = _raise_to_counter(roof_m, metrics, MEMORY_COUNTERS, [])
    u_c, c_from = _raise_to_counter(u_c, metrics, COMPUTE_COUNTERS, notes, f"{flops_from} / time / peak")
    u_m, m_from = _raise_to_counter(u_m, metrics, MEMORY_COUNTERS, notes, f"{bytes_from} / time / peak")
    if time is None:
        notes.append("no kernel time: utilizations from counters only")
    inputs = {"time_s": time, "flops": flops, "flops_from": flops_from, "bytes": nbytes, "bytes_from": bytes_from,
              "arithmetic_intensity": (flops / nbytes) if flops and nbytes else None,
              "compute_utilization_from": c_from, "memory_utilization_from": m_from,
              "roof_utilization": {"compute": roof_c, "memory": roof_m}, "ceilings": ceilings.to_json(),
              "constants": {"TOTAL": TOTAL, "MAX_PER_AXIS": MAX_PER_AXIS, "MIN_GAP": MIN_GAP,
                            "LATENCY_BELOW": LATENCY_BELOW, "STOP_AT": STOP_AT}}
    utilization: dict[str, float | None] = {"compute": u_c, "memory": u_m}
    evidence = _evidence(c_from, m_from)
    known = {axis: u for axis, u in utilization.items() if u is not None}
    if not known:
        notes.append("no ceiling utilization could be computed (no time, or no ceilings, or no FLOP/byte count): "
                      "budget 0/0/0 rather than a guess")
        return Roofline("unknown", utilization, dict.fromkeys(AXES, 0.0), dict.fromkeys(AXES, 0), None, inputs, notes,
                        evidence, "nothing: no counter and no time-based utilization")
    nearest = max(known, key=lambda axis: (known[axis], axis == "memory"))
    top = known[nearest]
    bound = nearest if top >= LATENCY_BELOW else "latency"
    decided = _decided_by(bound, utilization, {"compute": c_from, "memory": m_from}, metrics)
    roof = {"compute": roof_c, "memory": roof_m}[nearest]
    if bound == nearest and roof is not None and roof >= STOP_AT:
        stop = f"stop: within {100 * (1 - min(roof, 1.0)):.0f}% of the {nearest} roofline ({100 * roof:.0f}% reached)"
        return Roofline(nearest, utilization, dict.fromkeys(AXES, 0.0), dict.fromkeys(AXES, 0), stop, inputs, notes,
                        evidence, decided)
    gaps = {"compute": u_c or 0.0, "memory": u_m or 0.0, "latency": max(0.0, 1.0 - top)}
    if len(known) < 2:
        notes.append(f"{'compute' if u_c is None else 'memory'} ceiling unknown: that axis gets no methods")
    return Roofline(bound, utilization, {a: round(g, 4) for a, g in gaps.items()}, allocate_budget(gaps), None,
                    inputs, notes, evidence, decided)


def _evidence(compute_from: str, memory_from: str) -> str:
    """counters: both axes from the profiler (a throughput counter, or counted FLOPs/bytes over the kernel time);
    time: both from ref.py's model over the time; none: neither axis known."""
    known = [source for source in (compute_from, memory_from) if source != "unknown"]
    counted = [not source.startswith("ref.py") for source in known]
    if not known:
        return "none"
    if all(counted) and len(known) == 2:
        return "counters"
    return "time and counters" if any(counted) else "time"


def _decided_by(bound: str, utilization: Mapping[str, float | None], sources: Mapping[str, str],
                metrics: Mapping[str, Metric]) -> str:
    parts = [f"{axis} {100 * u:.0f}% ({sources[axis]})" for axis, u in utilization.items() if u is not None]
    occupancy = _value(metrics, "achieved_occupancy")
    if occupancy is not None:
        parts.append(f"achieved occupancy {100 * occupancy:.0f}%")
    why = (f"both below {100 * LATENCY_BELOW:.0f}%: neither the SMs/CUs nor DRAM is busy" if bound == "latency"
           else f"{bound} is the busier axis")
    pipes = [u for u in (_value(metrics, name) for name in ROOF_COMPUTE_COUNTERS) if u is not None]
    busiest_pipe = max(pipes, default=None)
    if bound == "compute" and sources["compute"] == "compute_throughput" and busiest_pipe is not None \
            and utilization["compute"] is not None and busiest_pipe < 0.5 * utilization["compute"]:
        # The SM counter is the busiest of its units: with idle math pipes, load/store and shared-memory issue
        # keep it busy. Cutting instructions per FLOP (register tiling, wider loads) is what pays, not faster math.
        why += (f"; its math pipes are only {100 * busiest_pipe:.0f}% busy, so load/store and shared-memory "
                "instruction issue, not arithmetic, keeps the SMs busy")
    return f"{bound}-bound: {'; '.join(parts)} - {why}"


def allocate_budget(gaps: Mapping[str, float], total: int = TOTAL, cap: int = MAX_PER_AXIS) -> dict[str, int]:
    """Split `total` methods over the axes in proportion to `gaps` (largest remainder, at most `cap` each)."""
    weights = {a: (g if g >= MIN_GAP else 0.0) for a, g in ((a, float(gaps.get(a, 0.0))) for a in AXES)}
    mass = sum(weights.values())
    budget = dict.fromkeys(AXES, 0)
    if mass <= 0:
        return budget
    quota = {a: total * w / mass for a, w in weights.items()}
    for axis in AXES:
        budget[axis] = min(cap, math.floor(quota[axis] + 1e-9))
    order = sorted((a for a in AXES if weights[a] > 0), key=lambda a: (-(quota[a] - budget[a]), TIE_ORDER.index(a)))
    while sum(budget.values()) < total:
        open_axes = [a for a in order if budget[a] < cap]
        if not open_axes:
            break  # fewer axes with evidence than `total` needs: the budget stays smaller, never padded
        budget[open_axes[0]] += 1
        order = sorted(open_axes, key=lambda a: (-(quota[a] - budget[a]), TIE_ORDER.index(a)))
    return budget


def _value(metrics: Mapping[str, Metric], name: str) -> float | None:
    metric = metrics.get(name)
    return metric.value if metric is not None else None


def _pick(counted: float | None, model: float | None, counted_name: str, model_name: str) -> tuple[float | None, str]:
    if counted:
        return counted, counted_name
    if model:
        return model, model_name
    return None, "unknown"


def _fraction(amount: float | None, time: float | None, peak: float | None) -> float | None:
    if not amount or not time or not peak or time <= 0:
        return None
    return amount / time / peak


def _credible(value: float | None, axis: str, source: str | None, notes: list[str]) -> float | None:
    """A utilization above the ceiling means the ceiling is wrong for this machine (e.g. a copy that did not
    use every core): that ceiling is dropped and said so, rather than reporting a kernel at 200% of it."""
    if value is not None and value > OVER_CEILING:
        notes.append(f"achieved {100 * value:.0f}% of the {axis} ceiling ({source}): the ceiling is too low for "
                     "this machine, so the axis is treated as unknown")
        return None
    return value


def _raise_to_counter(value: float | None, metrics: Mapping[str, Metric], names: tuple[str, ...],
                      notes: list[str], computed_from: str = "achieved / peak") -> tuple[float | None, str]:
    """A pipe/throughput counter that says the unit is busier than the FLOP/byte model wins (the model misses
    overheads such as address math or cache traffic); the record names which source decided."""
    source = computed_from if value is not None else "unknown"
    for name in names:
        counter = _value(metrics, name)
        if counter is not None and (value is None or counter > value):
            if value is not None:
                notes.append(f"{name} {counter:.3f} exceeds the model's {value:.3f}: the counter is used")
            value, source = counter, name
    return value, source
