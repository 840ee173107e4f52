"""Profiler output parsers and the normalized metrics, on recorded output (tests/data/profile/README.md says
which files are recorded, built from recorded output, or constructed)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_dcuopt.profile import hipprof, ncu, perf, rocprof
from pytest_dcuopt.profile.hipprof import PmcFormatError
from pytest_dcuopt.profile.kernels import KernelFilter, KernelRow, select_rows
from pytest_dcuopt.profile.metrics import Metric, derive, metric_set, rank_metrics
from tests.unit.profile.hipprof_stats import parse_stats_csv

DATA = Path(__file__).parents[2] / "data" / "profile"
K_READ = "_Z6k_readILi1EEvPKDv4_fmPf"
K_MMAC = "_Z11k_mmac_bf16ILi8EEviPf"


def recorded(name: str) -> str:
    return (DATA / name).read_text()


ELISION = ("...", "\u2026")  # how the research marks the values it left out
_RANGE = re.compile(r"^(?P<base>.+)\[(?P<first>\d+)\.\.(?P<last>\d+)\]$")


def recorded_header(line: str) -> list[str]:
    """The recorded header with its abridged `NAME[0..15]` notation written out as hipprof prints it."""
    columns = []
    for column in line.split(","):
        match = _RANGE.match(column)
        columns += ([f"{match['base']}[{i}]" for i in range(int(match["first"]), int(match["last"]) + 1)]
                    if match else [column])
    return columns


def recorded_rows(name: str) -> list[KernelRow]:
    """Each recorded dispatch row with exactly the columns the research recorded: the fields before the elision
    belong to the header's first columns, those after it to its last ones; the elided columns are absent."""
    header_line, *lines = recorded(name).splitlines()
    header = recorded_header(header_line)
    rows = []
    for line in lines:
        fields = line.split(",")
        cut = next(i for i, field in enumerate(fields) if field in ELISION)
        lead, tail = fields[:cut], fields[cut + 1:]
        columns = header[:len(lead)] + (header[-len(tail):] if tail else [])
        (row,) = hipprof.parse_pmc_csv(",".join(columns) + "\n" + ",".join(lead + tail) + "\n", name)
        rows.append(row)
    return rows


READ_RECORDED = "hipprof_pmc_read_gfx936_recorded.txt"


def test_the_recorded_header_has_the_documented_instance_counts() -> None:
    header = recorded_header(recorded(READ_RECORDED).splitlines()[0])
    assert sum(c.startswith("TA_TA_BUSY[") for c in header) == 16
    assert sum(c.startswith("TCC_EA_RDREQ[") for c in header) == 32
    assert header[-4:] == ["DispatchNs", "BeginNs", "EndNs", "CompleteNs"]


def test_recorded_hipprof_read_rows_sum_the_recorded_instance_columns_and_keep_the_fields() -> None:
    k_read, k_mmac = recorded_rows(READ_RECORDED)
    assert (k_read.index, k_read.kernel, k_mmac.index, k_mmac.kernel) == (0, K_READ, 3, K_MMAC)
    assert k_read.counters["GRBM_COUNT"] == 1292617 and k_read.counters["SQ_INSTS_VMEM_RD"] == 1048576
    # [0] = 52424 and [1] = 52432 are recorded; [2..15] are elided, so the sum covers the recorded two only
    assert k_read.counters["TA_FLAT_READ_WAVEFRONTS"] == 52424 + 52432
    assert "TA_FLAT_READ_WAVEFRONTS[0]" not in k_read.counters
    assert k_mmac.fields["arch_vgpr"] == "36" and k_mmac.fields["EndNs"] == "782810306819125"


def test_the_recorded_mmac_dispatch_normalizes_to_a_busy_vector_pipe_and_its_kernel_time() -> None:
    metrics = metric_set(hipprof.normalize(recorded_rows(READ_RECORDED)[1:], compute_units=80))
    # SQ_ACTIVE_INST_VALU 1342412800 / (GRBM_GUI_ACTIVE 17339115 * 80 CUs): the pipe is ~97% busy
    assert metrics["valu_utilization"].value == pytest.approx(0.9678, abs=1e-3)
    time_s = metrics["kernel_time_s"].value
    assert time_s == pytest.approx((782810306819125 - 782810295269852) * 1e-9)
    # two independent recorded clocks agree: GRBM_COUNT at the recorded 1.5 GHz vs EndNs - BeginNs, within 0.2%
    assert 17339115 / 1.5e9 == pytest.approx(time_s, rel=2e-3)
    assert metrics["instructions"].value == 671324160 and metrics["cycles"].value == 17339115
    assert (metrics["registers_per_thread"].value, metrics["scalar_registers"].value) == (36, 16)
    assert (metrics["grid_size"].value, metrics["workgroup_size"].value) == (327680, 512)


def test_the_recorded_read_dispatch_has_no_bytes_or_time_because_those_columns_are_elided() -> None:
    metrics = metric_set(hipprof.normalize(recorded_rows(READ_RECORDED)[:1], compute_units=80))
    assert metrics["valu_utilization"].value == pytest.approx(9490944 / (1292617 * 80))
    assert "dram_read_bytes" not in metrics and "kernel_time_s" not in metrics  # absent, never 0


def synthetic_write_group(read: list[KernelRow]) -> list[KernelRow]:
    """No write-group row is recorded (the research gives its column names only): SYNTHETIC counters on the
    recorded rows' dispatch identity, as a second `--pmc-write` run of the same program would report them."""
    return [hipprof.parse_pmc_csv(
        "Index,KernelName,TCC_EA_WRREQ[0],TCC_EA_WRREQ[1],TCC_EA_WRREQ_64B[0],TCC_EA_WRREQ_64B[1],BeginNs,EndNs\n"
        f"{row.index},{row.kernel},100,60,90,50,1,2\n")[0] for row in read]


def test_read_and_write_groups_join_by_dispatch_into_the_calibrated_bytes() -> None:
    read = recorded_rows(READ_RECORDED)
    joined = hipprof.join_by_dispatch({"pmc_read": read, "pmc_write": synthetic_write_group(read)})
    assert joined[0].counters["GRBM_COUNT"] == 1292617 and joined[0].counters["TCC_EA_WRREQ"] == 160
    assert joined[0].fields["pmc_write.BeginNs"] == "1"  # the later run's timestamps kept apart
    metrics = metric_set(hipprof.normalize(joined[1:], compute_units=80))
    assert metrics["dram_write_bytes"].value == 64 * 140 + 32 * 20  # 64 B per 64-byte request, 32 B per other
    assert metrics["kernel_time_s"].value == pytest.approx(11549273e-9)  # the first (read) group's times


def test_a_join_of_runs_that_launched_different_kernels_is_refused_naming_the_dispatch() -> None:
    read = recorded_rows(READ_RECORDED)
    write = synthetic_write_group(read)
    write[1].kernel = "_Z5otherv"
    with pytest.raises(PmcFormatError, match=r"dispatch 3 is '_Z11k_mmac_bf16ILi8EEviPf'.*'_Z5otherv'"):
        hipprof.join_by_dispatch({"pmc_read": read, "pmc_write": write})


def test_calibrated_read_bytes_formula() -> None:
    assert hipprof.read_bytes({"TCC_EA_RDREQ": 10, "TCC_EA_RDREQ_32B": 4, "TCC_EA1_RDREQ": 2}) == 64 * 6 + 32 * 4 + 128


def test_recorded_rocprof_v1_csv_after_banner_lines_parses_with_the_same_reader() -> None:
    rows = hipprof.parse_pmc_csv(recorded("rocprof_v1_copy_kernel.csv"))
    assert len(rows) == 1 and rows[0].kernel == "copy_kernel(float*, float*, int, int) [clone .kd]"
    assert rows[0].counters == {"GPUBusy": 100.0, "Wavefronts": 262144.0, "VALUInsts": 11.0}
    assert KernelFilter.from_symbols(["_Z11copy_kernelPfS_ii"], {"_Z11copy_kernelPfS_ii": "copy_kernel(float*, "
                                                                 "float*, int, int)"}).matches(rows[0].kernel)


def test_a_file_that_is_not_a_pmc_csv_is_refused_with_its_first_line() -> None:
    with pytest.raises(PmcFormatError, match=r"no header line starting with 'Index,'.*HIP_PROF:on"):
        hipprof.parse_pmc_csv("HIP_PROF:on Fri Oct  9 15:55:35 2026\nHIP_PROF:finish\n")


def test_recorded_hipkernel_stats_table() -> None:
    stats = parse_stats_csv(recorded("hipprof_gfx936.hipkernel.csv"))
    assert stats[0].name == "chunk_fwd_kernel_o"
    assert stats[1].calls == 111 and stats[1].average_ns == 2266816


@pytest.mark.parametrize(("returncode", "stderr", "expected"), [
    (-6, "", True), (134, "", True), (1, "terminate called ... Aborted (core dumped)", True), (1, "no device", False),
    (0, "", False)])
def test_signal_6_abort_detection(returncode: int, stderr: str, expected: bool) -> None:
    assert hipprof.aborted(returncode, stderr) is expected


def test_ncu_details_csv_constructed_from_the_h200_probe_numbers() -> None:
    rows = ncu.parse_ncu_csv(recorded("ncu_details_h200_vadd4.csv"))
    assert [r.kernel.split("(")[0] for r in rows] == ["vadd4", "void at::native::vectorized_elementwise_kernel<4, "
                                                       "at::native::FillFunctor<float>, std::array<char *, 1>>"]
    kernels = KernelFilter.from_symbols(["_Z5vadd4PKfS0_Pfi"], {"_Z5vadd4PKfS0_Pfi": "vadd4(float const*, "
                                                                 "float const*, float*, int)"})
    chosen = select_rows(rows, kernels, last_call_only=False)
    assert [r.kernel for r in chosen.counted] == [rows[0].kernel] and chosen.problem is None
    assert chosen.to_json()["dropped"] == [{"kernel": rows[1].kernel, "rows": 1}]
    metrics = derive(metric_set(ncu.normalize(chosen.counted)))
    assert metrics["kernel_time_s"].value == pytest.approx(45536e-9)
    assert metrics["dram_bytes"].value == 134224384 + 48251136
    assert metrics["memory_throughput"].value == pytest.approx(0.912)
    assert metrics["registers_per_thread"].value == 22
    assert metrics["flops"].value == 16777216  # fadd only


def test_ncu_wide_raw_page_with_a_units_row() -> None:
    text = ('"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum"\n'
            '"","","usecond","Mbyte"\n"0","k(int)","2.5","1.5"\n')
    row = ncu.parse_ncu_csv(text)[0]
    assert row.counters == {"gpu__time_duration.sum": pytest.approx(2.5e-6), "dram__bytes_read.sum": 1.5e6}


def test_constructed_rocprofv3_long_format_pivots_to_one_row_per_dispatch() -> None:
    rows = rocprof.parse_counter_collection(recorded("rocprofv3_counter_collection.csv"))
    assert len(rows) == 1
    metrics = metric_set(hipprof.normalize(rows, compute_units=None))
    assert metrics["l2_hit_rate"].value == pytest.approx(0.25)
    assert metrics["dram_read_bytes"].value == 64 * 131072
    assert metrics["kernel_time_s"].value == pytest.approx(10000e-9)


def test_recorded_perf_stat_on_a_vm_without_pmu_reports_unsupported_events_not_zeros() -> None:
    stat = perf.parse_perf_stat(recorded("perf_stat_vm_no_pmu.csv"))
    assert stat.counters["task-clock"] == 2.14 and stat.units["task-clock"] == "msec"
    assert "instructions" not in stat.counters and stat.unsupported["instructions"] == "<not supported>"
    assert perf.missing_hardware(stat) == ["instructions <not supported>", "cycles <not supported>"]
    metrics = metric_set(perf.normalize(stat, 0.0021))
    assert metrics["task_clock_s"].value == pytest.approx(0.00214) and "instructions" not in metrics


def test_perf_control_messages_glued_to_a_line_do_not_break_the_parse() -> None:
    stat = perf.parse_perf_stat("50.07,msec,task-clock,50069991,100.00,0.093,CPUs utilized\n"
                                "0,,page-faults,50069991,100.00,0.000,/secEvents disabled\nEvents enabled\n")
    assert stat.counters == {"task-clock": 50.07, "page-faults": 0.0}


def test_without_a_range_the_profiled_call_is_the_second_half_of_the_matching_rows() -> None:
    rows = [KernelRow("fill", 0), KernelRow("_Z1kv", 1), KernelRow("copy", 2), KernelRow("_Z1kv", 3)]
    kernels = KernelFilter({"_Z1kv": "k()"})
    chosen = select_rows(rows, kernels, last_call_only=True)
    assert [r.index for r in chosen.counted] == [3]
    assert {d["kernel"]: d["rows"] for d in chosen.to_json()["dropped"]} == {"fill": 1, "copy": 1, "_Z1kv": 1}
    odd = select_rows(rows[:2], kernels, last_call_only=True)
    assert odd.counted == [] and "not an even split" in (odd.problem or "")
    nothing = select_rows(rows[:1], kernels, last_call_only=True)
    assert "no profiled kernel matches" in (nothing.problem or "") and "fill" in (nothing.problem or "")


def test_top_metrics_are_ranked_by_the_bottleneck_axis_not_by_magnitude() -> None:
    metrics = derive(metric_set([Metric("valu_utilization", 0.09, "synthetic"),
                                 Metric("vmem_issue_utilization", 0.40, "synthetic"),
                                 Metric("l2_hit_rate", 0.90, "synthetic"), Metric("dram_read_bytes", 1e9, "synthetic"),
                                 Metric("instructions", 9e6, "synthetic")]))
    top = rank_metrics(metrics, "memory", top=3)
    assert all(t["axis"] == "memory" for t in top)
    assert top[0]["name"] == "vmem_issue_utilization"  # the worst memory-axis fraction, not the largest number
    assert rank_metrics(metrics, "compute", top=1)[0]["name"] == "valu_utilization"
