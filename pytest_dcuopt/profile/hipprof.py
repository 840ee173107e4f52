"""hipprof (DTK) and rocprof v1 output: the per-dispatch PMC CSV and joins.

Formats (recorded on gfx936 / BW1000 / DTK 25.10; see docs/profiling.md and tests/data/profile/):

* `hipprof --pmc-read|--pmc-write|--pmc --pmc-type 3 -o X <cmd>` writes `X.csv`: a header
  `Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,wave_size,sig[,obj],
  <counters>,DispatchNs,BeginNs,EndNs,CompleteNs`, one row per dispatch; multi-instance counters carry an `[i]`
  suffix (TA: 16 instances, TCC: 32) and are summed here. rocprof v1 writes the same layout (older runtimes:
  `vgpr,sgpr,fbar`), possibly after banner lines.

Counter semantics, as calibrated on gfx936 (kernel-roofline-analysis-tools `kra/pmc/hipprof_csv.py`): HBM read
bytes `64*(RDREQ-RDREQ_32B)+32*RDREQ_32B` (+ the EA1 terms), write bytes `64*WRREQ_64B+32*(WRREQ-WRREQ_64B)`;
`SQ_ACTIVE_INST_VALU` counts VALU issue slots (2 per MMAC 16x16x16), utilization = slots/(GRBM_GUI_ACTIVE*CUs).
"""
from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

from .kernels import KernelRow
from .metrics import Metric

_INSTANCE = re.compile(r"^(?P<base>.+?)\[(?P<i>\d+)\]$")
# Columns that describe the dispatch rather than count events.
FIELD_COLUMNS = ("KernelName", "gpu-id", "queue-id", "queue-index", "pid", "tid", "grd", "wgr", "lds", "scr",
                 "arch_vgpr", "accum_vgpr", "vgpr", "sgpr", "fbar", "wave_size", "sig", "obj",
                 "DispatchNs", "BeginNs", "EndNs", "CompleteNs")
# Exit statuses of a process killed by SIGABRT: as Python reports it, and as a shell does.
ABORT_STATUSES = (-6, 134)


class PmcFormatError(ValueError):
    """A file that is not a hipprof/rocprof PMC CSV."""


def parse_pmc_csv(text: str, source: str = "<csv>") -> list[KernelRow]:
    """One KernelRow per dispatch; `[i]` instance columns summed into their base counter."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if line.startswith("Index,")), None)
    if start is None:
        raise PmcFormatError(f"{source}: no header line starting with 'Index,' (hipprof --pmc-type 3 / rocprof v1 "
                             f"CSV); first line: {lines[0][:120] if lines else '(empty file)'!r}")
    reader = csv.reader(io.StringIO("\n".join(lines[start:])))
    header = next(reader)
    rows = []
    for record in reader:
        if not record or len(record) != len(header):
            continue  # a truncated last line of an aborted run
        rows.append(_row(dict(zip(header, record, strict=True))))
    return rows


def _row(values: Mapping[str, str]) -> KernelRow:
    counters: dict[str, float] = {}
    fields: dict[str, str] = {}
    for column, raw in values.items():
        if column == "Index":
            continue
        if column in FIELD_COLUMNS:
            fields[column] = raw
            continue
        match = _INSTANCE.match(column)
        base = match.group("base") if match else column
        number = _number(raw)
        if number is not None:
            counters[base] = counters.get(base, 0.0) + number
    return KernelRow(fields.get("KernelName", "").strip().strip('"'), dispatch_index(values.get("Index"), "Index"),
                     counters, fields)


def dispatch_index(raw: str | None, column: str, source: str = "the profiler's CSV") -> int:
    """A dispatch index cell as an int (empty: 0); PmcFormatError naming the cell when it is not an integer."""
    try:
        return int(raw or 0)
    except (TypeError, ValueError):
        raise PmcFormatError(f"{source}: the dispatch index column {column!r} holds {str(raw)[:40]!r}, not an integer: "
                             "a repeated header or a garbled line (a profiler run cut short?). Re-run the profiler."
                             ) from None


def _number(raw: str) -> float | None:
    try:
        return float(raw.replace(",", ""))
    except ValueError:
        return None


def join_by_dispatch(groups: Mapping[str, Sequence[KernelRow]]) -> list[KernelRow]:
    """Join separate runs (`--pmc-read`, `--pmc-write`, ...) into one row per dispatch.

    The runs are the same program, so dispatch `Index` and kernel name must agree row for row; counters of
    the later groups are added to the first group's row (their timestamps are the later run's and are kept
    as `<group>.BeginNs`). A mismatch raises, naming the dispatch: joining different kernels would mix them.
    """
    names = list(groups)
    if not names:
        return []
    first = names[0]
    joined = [KernelRow(r.kernel, r.index, dict(r.counters), dict(r.fields)) for r in groups[first]]
    for name in names[1:]:
        other = groups[name]
        if len(other) != len(joined):
            raise PmcFormatError(f"cannot join hipprof groups {first!r} and {name!r}: {len(joined)} vs {len(other)} "
                                 "dispatches (the runs launched different kernels)")
        for row, extra in zip(joined, other, strict=True):
            if (row.index, row.kernel) != (extra.index, extra.kernel):
                raise PmcFormatError(f"cannot join hipprof groups {first!r} and {name!r}: dispatch {row.index} is "
                                     f"{row.kernel!r} in one and {extra.index} {extra.kernel!r} in the other")
            for counter, value in extra.counters.items():
                row.counters.setdefault(counter, value)
            for key in ("BeginNs", "EndNs"):
                if key in extra.fields:
                    row.fields[f"{name}.{key}"] = extra.fields[key]
    return joined


def aborted(returncode: int, stderr: str) -> bool:
    """hipprof killed by SIGABRT (the default `--pmc` group at queue creation on some gfx936 DTK builds)."""
    return returncode in ABORT_STATUSES or "signal 6" in stderr or "Aborted" in stderr


def normalize(rows: Sequence[KernelRow], compute_units: int | None) -> list[Metric]:
    """The normalized metrics of the counted rows (one call of the kernel under test, possibly several
    dispatches: counters and times add up; resources are the largest of any dispatch)."""
    total = _sum_counters(rows)
    metrics: list[Metric] = []
    time_ns = sum(_span(r) for r in rows)
    if time_ns > 0:
        metrics.append(Metric("kernel_time_s", time_ns * 1e-9, "sum of EndNs - BeginNs over the counted dispatches"))
    if "TCC_EA_RDREQ" in total:
        metrics.append(Metric("dram_read_bytes", read_bytes(total),
                              "64*(TCC_EA_RDREQ-TCC_EA_RDREQ_32B)+32*TCC_EA_RDREQ_32B (+EA1 terms), instances summed"))
    if "TCC_EA_WRREQ" in total:
        metrics.append(Metric("dram_write_bytes", write_bytes(total),
                              "64*TCC_EA_WRREQ_64B+32*(TCC_EA_WRREQ-TCC_EA_WRREQ_64B) (+EA1 terms)"))
    metrics += _utilizations(total, compute_units)
    if "TCC_HIT" in total and "TCC_MISS" in total and total["TCC_HIT"] + total["TCC_MISS"] > 0:
        metrics.append(Metric("l2_hit_rate", total["TCC_HIT"] / (total["TCC_HIT"] + total["TCC_MISS"]),
                              "TCC_HIT / (TCC_HIT + TCC_MISS)"))
    if "SQ_LDS_BANK_CONFLICT" in total:
        metrics.append(Metric("lds_bank_conflicts", total["SQ_LDS_BANK_CONFLICT"], "SQ_LDS_BANK_CONFLICT (cycles)"))
        lds = total.get("SQ_INSTS_LDS", 0.0)
        if lds > 0:
            metrics.append(Metric("lds_bank_conflict_rate", min(1.0, total["SQ_LDS_BANK_CONFLICT"] / lds),
                                  "SQ_LDS_BANK_CONFLICT / SQ_INSTS_LDS"))
    if "SQ_INSTS_VALU" in total:
        metrics.append(Metric("instructions", total["SQ_INSTS_VALU"],
                              "SQ_INSTS_VALU (wave-instructions, MMAC included)"))
    if "GRBM_GUI_ACTIVE" in total:
        metrics.append(Metric("cycles", total["GRBM_GUI_ACTIVE"], "GRBM_GUI_ACTIVE (GPU busy cycles)"))
    return metrics + _resources(rows)


def _sum_counters(rows: Sequence[KernelRow]) -> dict[str, float]:
    total: dict[str, float] = {}
    for row in rows:
        for name, value in row.counters.items():
            total[name] = total.get(name, 0.0) + value
    return total


def _span(row: KernelRow) -> float:
    try:
        return float(row.fields["EndNs"]) - float(row.fields["BeginNs"])
    except (KeyError, ValueError):
        return 0.0


def read_bytes(c: Mapping[str, float]) -> float:
    def part(prefix: str) -> float:
        requests, small = c.get(f"{prefix}_RDREQ", 0.0), c.get(f"{prefix}_RDREQ_32B", 0.0)
        return 64 * (requests - small) + 32 * small

    return part("TCC_EA") + part("TCC_EA1")


def write_bytes(c: Mapping[str, float]) -> float:
    def part(prefix: str) -> float:
        requests, large = c.get(f"{prefix}_WRREQ", 0.0), c.get(f"{prefix}_WRREQ_64B", 0.0)
        return 64 * large + 32 * (requests - large)

    return part("TCC_EA") + part("TCC_EA1")


def _utilizations(total: Mapping[str, float], compute_units: int | None) -> list[Metric]:
    busy = total.get("GRBM_GUI_ACTIVE", 0.0)
    if not compute_units or busy <= 0:
        return []
    slots = busy * compute_units
    found = []
    if "SQ_ACTIVE_INST_VALU" in total:
        found.append(Metric("valu_utilization", min(1.0, total["SQ_ACTIVE_INST_VALU"] / slots),
                            f"SQ_ACTIVE_INST_VALU / (GRBM_GUI_ACTIVE * {compute_units} CUs)"))
    if "TA_TA_BUSY" in total:
        found.append(Metric("vmem_issue_utilization", min(1.0, total["TA_TA_BUSY"] / slots),
                            f"sum TA_TA_BUSY[i] / (GRBM_GUI_ACTIVE * {compute_units} CUs)"))
    if "TCP_TCP_TA_DATA_STALL_CYCLES" in total and "TA_TA_BUSY" in total and total["TA_TA_BUSY"] > 0:
        found.append(Metric("memory_stall_fraction",
                            min(1.0, total["TCP_TCP_TA_DATA_STALL_CYCLES"] / total["TA_TA_BUSY"]),
                            "sum TCP_TCP_TA_DATA_STALL_CYCLES[i] / sum TA_TA_BUSY[i]"))
    return found


def _resources(rows: Sequence[KernelRow]) -> list[Metric]:
    columns = {"registers_per_thread": ("arch_vgpr", "vgpr"), "accum_registers_per_thread": ("accum_vgpr",),
               "scalar_registers": ("sgpr",), "lds_bytes": ("lds",), "scratch_bytes": ("scr",),
               "grid_size": ("grd",), "workgroup_size": ("wgr",)}
    found = []
    for metric, names in columns.items():
        values = [float(r.fields[n]) for r in rows for n in names if _number(r.fields.get(n, "")) is not None]
        if values:
            found.append(Metric(metric, max(values), f"{'/'.join(names)} column (largest over counted dispatches)"))
    return found
