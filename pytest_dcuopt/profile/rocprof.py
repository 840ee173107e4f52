"""rocprofv3 counter collection output (`--pmc ... --output-format csv`): `*_counter_collection.csv`.

Long format, one row per (dispatch, counter): `Correlation_Id, Dispatch_Id, Agent_Id, Queue_Id, Process_Id,
Thread_Id, Grid_Size, Kernel_Id, Kernel_Name, Workgroup_Size, LDS_Block_Size, Scratch_Size, VGPR_Count,
Accum_VGPR_Count, SGPR_Count, Counter_Name, Counter_Value, Start_Timestamp, End_Timestamp` (the layout of
the rocprofiler-sdk documentation; no recorded sample from a real machine is in this repository). Rows are
pivoted into one KernelRow per dispatch with the hipprof column names, so `hipprof.normalize` applies
(rocprofv3 derived counters already sum their instances, e.g. `TCC_HIT_sum` -> `TCC_HIT`).
"""
from __future__ import annotations

import csv

from .hipprof import PmcFormatError, dispatch_index
from .kernels import KernelRow

_FIELDS = {"Grid_Size": "grd", "Workgroup_Size": "wgr", "LDS_Block_Size": "lds", "Scratch_Size": "scr",
           "VGPR_Count": "arch_vgpr", "Accum_VGPR_Count": "accum_vgpr", "SGPR_Count": "sgpr",
           "Start_Timestamp": "BeginNs", "End_Timestamp": "EndNs"}


def parse_counter_collection(text: str, source: str = "<csv>") -> list[KernelRow]:
    reader = csv.DictReader(text.splitlines())  # splitlines: a bare \r ends a line, not the parse
    needed = {"Dispatch_Id", "Kernel_Name", "Counter_Name", "Counter_Value"}
    if not reader.fieldnames or not needed <= set(reader.fieldnames):
        raise PmcFormatError(f"{source}: not a rocprofv3 counter_collection CSV; it needs columns {sorted(needed)}, "
                             f"found {reader.fieldnames}")
    rows: dict[int, KernelRow] = {}
    for record in reader:
        index = dispatch_index(record["Dispatch_Id"], "Dispatch_Id", source)
        row = rows.get(index)
        if row is None:
            fields = {ours: record[theirs] for theirs, ours in _FIELDS.items() if record.get(theirs)}
            row = rows[index] = KernelRow(record["Kernel_Name"], index, {}, {"KernelName": record["Kernel_Name"],
                                                                              **fields})
        name, value = record["Counter_Name"], _counter_value(record["Counter_Value"])
        if name is None or value is None:  # a short (cut) row, or a value that is not a number
            raise PmcFormatError(f"{source}: dispatch {index} has counter {name!r} = {record['Counter_Value']!r}, not "
                                 "a number (a truncated or garbled line?). Re-run the profiler.")
        name = name.removesuffix("_sum")
        row.counters[name] = row.counters.get(name, 0.0) + value
    return [rows[i] for i in sorted(rows)]


def _counter_value(raw: str | None) -> float | None:
    try:
        return float(raw or "")
    except ValueError:
        return None
