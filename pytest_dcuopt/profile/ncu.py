"""Nsight Compute CSV (`ncu --import X.ncu-rep --csv --print-units base`), normalized.

Two layouts are read: the default `details` page (long: one row per kernel and metric, columns
`"ID","Process ID",...,"Kernel Name",...,"Section Name","Metric Name","Metric Unit","Metric Value"`) and the
`raw` page (wide: a header of metric names, a row of units, one row per kernel). Values may carry thousands
separators; units are converted to base units (bytes, seconds, fractions).
"""
from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

from .hipprof import PmcFormatError, dispatch_index
from .kernels import KernelRow
from .metrics import Metric

# The metric set asked for by default: time, DRAM traffic, SM / DRAM / memory-system throughput (the roofline's
# counters: sm__throughput against dram__throughput decides the bound), the FP32 FMA pipe, occupancy, L2, tensor
# pipe, FP32 instruction counts (for a FLOP count), shared-memory bank conflicts, launch resources.
DEFAULT_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "lts__t_sector_hit_rate.pct",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "smsp__inst_executed.sum",
    "launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "launch__grid_size", "launch__block_size",
)
_SCALE = {"": 1.0, "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
          "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
          "%": 0.01, "inst": 1.0, "cycle": 1.0, "register/thread": 1.0, "byte/block": 1.0, "Kbyte/block": 1e3,
          "block": 1.0, "thread": 1.0, "warp": 1.0}


def parse_ncu_csv(text: str, source: str = "<csv>") -> list[KernelRow]:
    lines = [line for line in text.splitlines() if line.startswith('"')]  # drop ==PROF== and program output
    if not lines:
        raise PmcFormatError(f"{source}: no CSV rows (ncu prints quoted CSV); did ncu profile any kernel?")
    table = list(csv.reader(io.StringIO("\n".join(lines))))
    header = table[0]
    if "Metric Name" in header:
        return _long(header, table[1:])
    return _wide(header, table[1:], source)


def _value(raw: str, unit: str) -> float | None:
    try:
        number = float(raw.replace(",", ""))
    except ValueError:
        return None
    return number * _SCALE.get(unit.strip(), 1.0)


def _long(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[KernelRow]:
    found: dict[int, KernelRow] = {}
    for values in rows:
        record = dict(zip(header, values, strict=False))
        index = dispatch_index(record.get("ID"), "ID")
        row = found.get(index)
        if row is None:
            row = found[index] = KernelRow(record.get("Kernel Name", ""), index, {},
                                           {k: record.get(k, "") for k in ("Block Size", "Grid Size", "Device", "CC")})
        number = _value(record.get("Metric Value", ""), record.get("Metric Unit", ""))
        if number is not None:
            row.counters[record.get("Metric Name", "")] = number
    return [found[i] for i in sorted(found)]


def _wide(header: Sequence[str], rows: Sequence[Sequence[str]], source: str) -> list[KernelRow]:
    if "Kernel Name" not in header or not rows:
        raise PmcFormatError(f"{source}: neither ncu's details page (a 'Metric Name' column) nor its raw page "
                             f"(a 'Kernel Name' column and a units row); header: {list(header)[:8]}")
    units, data = rows[0], rows[1:]
    found = []
    for values in data:
        record = dict(zip(header, values, strict=False))
        counters = {}
        for column, raw, unit in zip(header, values, units, strict=False):
            number = _value(raw, unit) if "__" in column else None
            if number is not None:
                counters[column] = number
        found.append(KernelRow(record.get("Kernel Name", ""), dispatch_index(record.get("ID"), "ID", source), counters,
                               {}))
    return found


_DIRECT: Mapping[str, tuple[str, ...]] = {  # normalized name -> ncu metrics (first found wins)
    "kernel_time_s": ("gpu__time_duration.sum",),
    "dram_read_bytes": ("dram__bytes_read.sum",),
    "dram_write_bytes": ("dram__bytes_write.sum",),
    "compute_throughput": ("sm__throughput.avg.pct_of_peak_sustained_elapsed",),
    "memory_throughput": ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",),
    "dram_throughput": ("dram__throughput.avg.pct_of_peak_sustained_elapsed",),
    "valu_utilization": ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",),
    "achieved_occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active",),
    "l2_hit_rate": ("lts__t_sector_hit_rate.pct",),
    "matrix_pipe_utilization": ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
    "lds_bank_conflicts": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",),
    "instructions": ("smsp__inst_executed.sum",),
    "registers_per_thread": ("launch__registers_per_thread",),
    "grid_size": ("launch__grid_size",),
    "workgroup_size": ("launch__block_size",),
}
_ADDITIVE = {"kernel_time_s", "dram_read_bytes", "dram_write_bytes", "lds_bank_conflicts", "instructions"}


def normalize(rows: Sequence[KernelRow]) -> list[Metric]:
    """Counted rows -> normalized metrics: additive ones summed, rates and resources the time-weighted mean/max."""
    metrics = []
    for name, candidates in _DIRECT.items():
        for counter in candidates:
            values = [(r.counters[counter], r.counters.get("gpu__time_duration.sum", 1.0)) for r in rows
                      if counter in r.counters]
            if not values:
                continue
            metrics.append(Metric(name, _combine(name, values), _how(name, counter, len(values))))
            break
    flops = _fp32_flops(rows)
    if flops is not None:
        metrics.append(Metric("flops", flops, "2*ffma + fadd + fmul thread instructions (FP32; tensor-core FLOPs "
                                              "are not counted by this set)"))
    shared = [r.counters.get("launch__shared_mem_per_block_static", 0.0)
              + r.counters.get("launch__shared_mem_per_block_dynamic", 0.0) for r in rows
              if "launch__shared_mem_per_block_static" in r.counters]
    if shared:
        metrics.append(Metric("lds_bytes", max(shared), "launch__shared_mem_per_block_static + _dynamic"))
    return metrics


def _combine(name: str, values: Sequence[tuple[float, float]]) -> float:
    if name in _ADDITIVE:
        return sum(v for v, _ in values)
    if name in ("registers_per_thread", "grid_size", "workgroup_size"):
        return max(v for v, _ in values)
    weight = sum(w for _, w in values) or 1.0
    return sum(v * w for v, w in values) / weight


def _how(name: str, counter: str, count: int) -> str:
    if count == 1:
        return counter
    return f"{counter} ({'sum' if name in _ADDITIVE else 'time-weighted mean or max'} over {count} kernels)"


def _fp32_flops(rows: Sequence[KernelRow]) -> float | None:
    names = tuple(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("ffma", "fadd", "fmul"))
    if not any(name in r.counters for r in rows for name in names):
        return None
    return sum(2 * r.counters.get(names[0], 0.0) + r.counters.get(names[1], 0.0) + r.counters.get(names[2], 0.0)
               for r in rows)
