"""Profiler output parsers and the normalized metrics, on recorded output (tests/data/profile/README.md says
which files are recorded, built from recorded output, or constructed)."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.profile import hipprof, ncu, perf, rocprof
from pytest_dcuopt.profile.hipprof import PmcFormatError
from pytest_dcuopt.profile.kernels import KernelFilter, KernelRow, select_rows
from pytest_dcuopt.profile.metrics import derive, metric_set, rank_metrics

DATA = Path(__file__).parents[1] / "data" / "profile"
K_READ = "_Z6k_readILi1EEvPKDv4_fmPf"
K_MMAC = "_Z11k_mmac_bf16ILi8EEviPf"


def recorded(name: str) -> str:
    return (DATA / name).read_text()


def joined_gfx936() -> list[KernelRow]:
    read = hipprof.parse_pmc_csv(recorded("hipprof_pmc_read_gfx936.csv"))
    write = hipprof.parse_pmc_csv(recorded("hipprof_pmc_write_gfx936.csv"))
    return hipprof.join_by_dispatch({"pmc_read": read, "pmc_write": write})


def test_recorded_hipprof_read_csv_sums_the_instance_columns_and_keeps_the_recorded_fields() -> None:
    rows = hipprof.parse_pmc_csv(recorded("hipprof_pmc_read_gfx936.csv"))
    assert [(r.index, r.kernel) for r in rows] == [(0, K_READ), (3, K_MMAC)]
    k_read = rows[0].counters
    assert k_read["GRBM_COUNT"] == 1292617 and k_read["SQ_INSTS_VMEM_RD"] == 1048576  # recorded values
    assert k_read["TA_FLAT_READ_WAVEFRONTS"] == 1048576  # 16 instances summed ([0]=52424, [1]=52432 recorded)
    assert k_read["TCC_EA_RDREQ"] == 16777216  # 32 instances summed
    assert "TCC_EA_RDREQ[0]" not in k_read
    assert rows[1].fields["arch_vgpr"] == "36" and rows[1].fields["EndNs"] == "782810306819125"


def test_read_and_write_groups_join_by_dispatch_into_the_calibrated_bytes() -> None:
    rows = joined_gfx936()
    assert rows[0].counters["TCC_EA_WRREQ"] == 2560 and rows[0].counters["TCC_EA_RDREQ"] == 16777216
    metrics = metric_set(hipprof.normalize(rows[:1], compute_units=80))
    assert metrics["dram_read_bytes"].value == 64 * 16777216  # 1 GiB: 64 B per request, no 32-byte requests
    assert metrics["dram_write_bytes"].value == 64 * 2560  # every write request was a 64-byte one
    assert metrics["kernel_time_s"].value == pytest.approx(861745e-9)
    assert metrics["valu_utilization"].value == pytest.approx(9490944 / (1292617 * 80))
    derived = derive(metrics)
    assert derived["achieved_bandwidth_gbs"].value == pytest.approx((2**30 + 64 * 2560) / 861745e-9 / 1e9)


def test_the_mmac_dispatch_shows_a_busy_vector_pipe_from_its_recorded_counters() -> None:
    metrics = metric_set(hipprof.normalize(joined_gfx936()[1:], compute_units=80))
    # SQ_ACTIVE_INST_VALU 1342412800 / (GRBM_GUI_ACTIVE 17339115 * 80 CUs): the pipe is ~97% busy
    assert metrics["valu_utilization"].value == pytest.approx(0.9678, abs=1e-3)
    assert metrics["kernel_time_s"].value == pytest.approx((782810306819125 - 782810295269852) * 1e-9)
    assert metrics["registers_per_thread"].value == 36


def test_a_join_of_runs_that_launched_different_kernels_is_refused_naming_the_dispatch() -> None:
    read = hipprof.parse_pmc_csv(recorded("hipprof_pmc_read_gfx936.csv"))
    write = hipprof.parse_pmc_csv(recorded("hipprof_pmc_write_gfx936.csv"))
    write[1].kernel = "_Z5otherv"
    with pytest.raises(PmcFormatError, match=r"dispatch 3 is '_Z11k_mmac_bf16ILi8EEviPf'.*'_Z5otherv'"):
        hipprof.join_by_dispatch({"pmc_read": read, "pmc_write": write})


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
    stats = hipprof.parse_stats_csv(recorded("hipprof_gfx936.hipkernel.csv"))
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
    metrics = derive(metric_set(hipprof.normalize(joined_gfx936()[:1], compute_units=80)))
    top = rank_metrics(metrics, "memory", top=3)
    assert all(t["axis"] == "memory" for t in top)
    assert top[0]["name"] == "vmem_issue_utilization"  # the worst memory-axis fraction, not the largest number
    assert rank_metrics(metrics, "compute", top=1)[0]["name"] == "valu_utilization"
