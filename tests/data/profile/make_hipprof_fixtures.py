"""Writes hipprof_pmc_read_gfx936.csv and hipprof_pmc_write_gfx936.csv (run once; the CSVs are committed).

What is recorded and what is filled in, exactly:
* RECORDED (../shared/research/dcu-tool-formats.md §2.5 and seed-workflow.md §5.6, from
  LearnMF/kernel-roofline-analysis-tools results/pmc-semantics-gfx936-20261009/cal_pmc-read.csv@a178361, gfx936
  BW1000, DTK 25.10): the header layout of both groups (column names, order, instance counts TA x16, TCC x32),
  and the leading fields of two dispatches: index 0 `_Z6k_readILi1EEvPKDv4_fmPf` up to
  TA_FLAT_READ_WAVEFRONTS[1], and index 3 `_Z11k_mmac_bf16ILi8EEviPf` up to SQ_WAIT_INST_LDS plus its four
  timestamps.
* FILLED (the research elides them with "..."): the remaining per-instance counter values and k_read's
  timestamps. They are chosen to follow the microbenchmark's known work: k_read reads 1 GiB (1,048,576
  wave loads x 64 lanes x 16 B = 16,777,216 64-byte TCC_EA_RDREQ) in GRBM_COUNT / 1.5 GHz = 861,745 ns;
  k_mmac_bf16 touches almost no memory. The write group repeats the same dispatches.
"""
from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
LEAD = "Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,accum_vgpr,sgpr,wave_size,sig"
SQ = "GRBM_COUNT,GRBM_GUI_ACTIVE,SQ_ACTIVE_INST_VALU,SQ_INSTS_FLAT_LDS_ONLY,SQ_INSTS_LDS,SQ_INSTS_VALU," \
     "SQ_INSTS_VMEM_RD,SQ_INSTS_VMEM_WR,SQ_LDS_BANK_CONFLICT,SQ_WAIT_INST_LDS"
TIMES = "DispatchNs,BeginNs,EndNs,CompleteNs"


def instances(name: str, count: int) -> list[str]:
    return [f"{name}[{i}]" for i in range(count)]


def spread(total: int, count: int, first: tuple[int, ...] = ()) -> list[int]:
    rest = total - sum(first)
    left = count - len(first)
    values = [rest // left] * left
    values[-1] += rest - sum(values)
    return [*first, *values]


def header(group: str) -> str:
    direction = "READ" if group == "read" else "WRITE"
    columns = [LEAD, SQ, *instances(f"TA_FLAT_{direction}_WAVEFRONTS", 16), *instances("TA_TA_BUSY", 16)]
    if group == "read":
        columns += [*instances("TCC_EA_RDREQ", 32), *instances("TCC_EA_RDREQ_32B", 32), *instances("TCC_EA1_RDREQ", 32),
                    *instances("TCC_EA1_RDREQ_32B", 32)]
    else:
        columns += [*instances("TCC_EA_WRREQ", 32), *instances("TCC_EA_WRREQ_64B", 32), *instances("TCC_EA1_WRREQ", 32),
                    *instances("TCC_EA1_WRREQ_64B", 32)]
    return ",".join([*columns, *instances("TCP_TCP_TA_DATA_STALL_CYCLES", 16), TIMES])


def numbers(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


READ_LEAD = "0,_Z6k_readILi1EEvPKDv4_fmPf,0,0,8,673718,673718,163840,512,0,0,16,0,32,64,0x0"
READ_SQ = [1292617, 1292617, 9490944, 0, 0, 9490944, 1048576, 0, 0, 0]
READ_TIMES = [782809001000000, 782809001200000, 782809002061745, 782809002100000]
MMAC_LEAD = "3,_Z11k_mmac_bf16ILi8EEviPf,0,0,14,673718,673718,327680,512,0,0,36,0,16,64,0x0"
MMAC_SQ = [17339115, 17339115, 1342412800, 0, 0, 671324160, 0, 0, 0, 0]
MMAC_TIMES = [782810293152234, 782810295269852, 782810306819125, 782810312174785]


def read_rows() -> list[str]:
    k_read = [*READ_SQ, *spread(1048576, 16, (52424, 52432)), *[1000000] * 16, *spread(16777216, 32),
              *[0] * 32, *[0] * 32, *[0] * 32, *[200000] * 16, *READ_TIMES]
    k_mmac = [*MMAC_SQ, *[0] * 16, *[40000] * 16, *[0] * 32, *[0] * 32, *[0] * 32, *[0] * 32, *[1000] * 16,
              *MMAC_TIMES]
    return [f"{READ_LEAD},{numbers(k_read)}", f"{MMAC_LEAD},{numbers(k_mmac)}"]


def write_rows() -> list[str]:
    k_read = [*READ_SQ[:7], 2560, 0, 0, *spread(2560, 16), *[1000000] * 16, *spread(2560, 32), *spread(2560, 32),
              *[0] * 32, *[0] * 32, *[200000] * 16, *READ_TIMES]
    k_mmac = [*MMAC_SQ[:7], 5120, 0, 0, *spread(5120, 16), *[40000] * 16, *spread(5120, 32), *spread(5120, 32),
              *[0] * 32, *[0] * 32, *[1000] * 16, *MMAC_TIMES]
    return [f"{READ_LEAD},{numbers(k_read)}", f"{MMAC_LEAD},{numbers(k_mmac)}"]


if __name__ == "__main__":
    (HERE / "hipprof_pmc_read_gfx936.csv").write_text("\n".join([header("read"), *read_rows()]) + "\n")
    (HERE / "hipprof_pmc_write_gfx936.csv").write_text("\n".join([header("write"), *write_rows()]) + "\n")
