"""SASS splitting and resource parsing on real cuobjdump / ptxas output (tests/data/sass/README.md)."""
from __future__ import annotations

from pathlib import Path

from pytest_dcuopt.isa.sass import (
    instructions,
    parse_ptxas_verbose,
    parse_resource_usage,
    split_sass,
)
from pytest_dcuopt.isa.symbols import base_name, demangle, rename
from tests.context import skip_if_no_cxxfilt

DATA = Path(__file__).parent.parent / "data" / "sass"
VADD = "_ZN2dk5vadd4ILi256EEEvPK6float4S3_PS1_i"
SPILL = "_Z5spillPfi"
SMEM = "_Z11smem_reducePKfPfi"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_split_sass_of_a_shared_object_finds_each_kernel_and_drops_encodings() -> None:
    functions = split_sass(read("multi.sass.txt"))
    assert set(functions) == {VADD, SPILL, SMEM}  # the first, empty fatbin section adds nothing
    vadd = functions[VADD]
    assert "LDG.E.128.CONSTANT" in vadd and "STG.E.128" in vadd and "FADD" in vadd
    assert "/* 0x" not in vadd  # encodings are gone
    assert "ULDC UR4, c[0x0][0x228]" in " ".join(vadd.split())  # operands are kept as printed
    assert "LDS" in functions[SMEM] and "BAR.SYNC" in functions[SMEM]
    assert "STL" in functions[SPILL] and "LDL" in functions[SPILL]  # the spill code
    assert "LDS" not in vadd and "STL" not in vadd  # bodies do not run into each other


def test_split_sass_filters_by_arch_and_reads_a_cubin_dump() -> None:
    assert split_sass(read("multi.sass.txt"), arch="sm_90").keys() == split_sass(read("multi.sass.txt")).keys()
    assert split_sass(read("multi.sass.txt"), arch="sm_80") == {}
    cubin = split_sass(read("multi.cubin.sass.txt"), arch="sm_90")  # no fatbin headers; `.target sm_90`
    assert list(cubin) == [VADD]
    assert "STG.E.128" in cubin[VADD]


def test_instructions_strip_addresses() -> None:
    ops = instructions(split_sass(read("multi.sass.txt"))[VADD])
    assert ops[0].startswith("LDC R1")
    assert any(op.startswith("LDG.E.128.CONSTANT") for op in ops)
    assert "EXIT" in ops and ops[-1] == "NOP"  # the alignment padding after the trailing self-loop


def test_cuobjdump_resource_usage() -> None:
    usage = parse_resource_usage(read("multi.resource-usage.txt"))
    assert set(usage) == {VADD, SPILL, SMEM}
    assert (usage[VADD].registers, usage[VADD].shared_bytes, usage[VADD].scratch_bytes) == (22, 0, 0)
    assert usage[SPILL].registers == 32 and usage[SPILL].scratch_bytes == 112
    assert usage[SMEM].shared_bytes == 2048  # ptxas's 1024 + the 1 KiB sm_90 reserves per block


def test_ptxas_verbose_report() -> None:
    usage = parse_ptxas_verbose(read("multi.ptxas.txt"))
    assert set(usage) == {VADD, SPILL, SMEM}
    assert usage[VADD].to_json() == {"function": VADD, "registers": 22, "shared_bytes": 0, "scratch_bytes": 0,
                                     "spills": 0, "source": "ptxas -v"}
    assert (usage[SPILL].registers, usage[SPILL].scratch_bytes, usage[SPILL].spills) == (32, 112, 608)
    assert (usage[SMEM].registers, usage[SMEM].shared_bytes, usage[SMEM].spills) == (22, 1024, 0)


def test_ptxas_report_of_a_device_function_without_registers() -> None:
    text = ("ptxas info    : Function properties for _Z6helperf\n"
            "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n")
    usage = parse_ptxas_verbose(text)["_Z6helperf"]
    assert usage.registers is None and usage.scratch_bytes == 16 and usage.spills == 16


@skip_if_no_cxxfilt
def test_demangle_and_rename() -> None:
    names = demangle([VADD, SPILL, "solve"])
    assert names[VADD] == "void dk::vadd4<256>(float4 const*, float4 const*, float4*, int)"
    assert names[SPILL] == "spill(float*, int)"
    assert names["solve"] == "solve"
    renamed = rename({VADD: 1, f"{SPILL} [sm_80]": 2}, names)
    assert renamed == {names[VADD]: 1, "spill(float*, int) [sm_80]": 2}


def test_base_name() -> None:
    assert base_name("void dk::vadd4<256>(float4 const*, float4 const*, float4*, int)") == "vadd4"
    assert base_name("spill(float*, int)") == "spill"
    assert base_name("void ns::k<std::pair<int, float>, 4>(int)") == "k"
