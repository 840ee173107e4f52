"""ISA parsers on real tool output (tests/data/isa, see its README) and on the recorded DCU samples."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.isa import amdgcn, dcu, elf
from pytest_dcuopt.isa.functions import split_asm, split_objdump
from pytest_dcuopt.isa.instruction_lines import instructions, parse_amdgcn, parse_sass, parse_x86
from pytest_dcuopt.isa.model import UNSPLIT
from pytest_dcuopt.isa.sass import parse_resource_usage, split_sass
from pytest_dcuopt.isa.symbols import base_name

ISA = Path(__file__).parents[2] / "data" / "isa"


def read(relative: str) -> str:
    return (ISA / relative).read_text()


# ----- AMDGCN: llvm-objdump, .s, code objects, resources ---------------------------------------
def test_llvm_objdump_is_split_per_kernel_and_lines_lose_address_and_encoding() -> None:
    functions = split_objdump(read("amdgcn/features.gfx90a.objdump.txt"))
    assert "_Z8lds_tilePKfPfi" in functions and "_Z9mfma_tilePKDv4_DF16_S1_PDv16_f" in functions
    found = parse_amdgcn(functions["_Z9streamingPKfPfi"])
    texts = [i.text for i in found]
    assert "global_load_dword v2, v[2:3], off glc slc" in texts
    assert all("//" not in t and "0000" not in t for t in texts)
    assert found[0].line >= 1 and found[0].mnemonic == found[0].text.split()[0]


def test_each_kernel_holds_only_its_own_instructions() -> None:
    functions = split_objdump(read("amdgcn/features.gfx90a.objdump.txt"))
    mnemonics = {name: {i.mnemonic for i in parse_amdgcn(body)} for name, body in functions.items()}
    assert "v_mfma_f32_32x32x8f16" in mnemonics["_Z9mfma_tilePKDv4_DF16_S1_PDv16_f"]
    assert not any("v_mfma_f32_32x32x8f16" in m for n, m in mnemonics.items() if "mfma" not in n)
    assert "ds_bpermute_b32" in mnemonics["_Z11shfl_reducePKfPfi"]
    assert "ds_bpermute_b32" not in mnemonics["_Z8lds_tilePKfPfi"]


def test_compiler_assembly_is_split_at_function_labels_and_ends() -> None:
    text = read("amdgcn/features.gfx906.s")
    functions = split_asm(text)
    assert len(functions) == 9
    body = functions["_Z8lds_tilePKfPfi"]
    assert "s_barrier" in body and ".amdhsa_kernel" not in body.split(".section")[0]
    assert parse_amdgcn(body)[-1].mnemonic == "s_endpgm"
    resources = amdgcn.asm_resources(functions, text)
    assert resources["_Z8lds_tilePKfPfi"].shared_bytes == 1024
    assert resources["_Z13private_arrayPKiPfi"].scratch_bytes and resources["_Z13private_arrayPKiPfi"].scratch_bytes > 0


def test_code_object_and_metadata_come_out_of_a_hip_shared_object_without_tools() -> None:
    blob = (ISA / "amdgcn/vadd4.gfx90a.so").read_bytes()
    objects = amdgcn.code_objects(blob, "gfx90a")
    assert list(objects) == ["hipv4-amdgcn-amd-amdhsa--gfx90a"]
    resources = amdgcn.metadata_resources(next(iter(objects.values())))
    usage = resources["_Z5vadd4PK15HIP_vector_typeIfLj4EES2_PS0_i"]
    assert (usage.registers, usage.sgprs, usage.agprs, usage.spills, usage.shared_bytes, usage.scratch_bytes) == \
        (14, 11, 0, 0, 0, 0)
    with pytest.raises(elf.ElfError, match="no code object for gfx906"):
        amdgcn.code_objects(blob, "gfx906")


def test_resource_remarks_of_clang_are_read_per_function() -> None:
    spill = amdgcn.remark_resources(read("amdgcn/spill.gfx90a.remarks.txt"))["_Z12spill_kernelPKfPfi"]
    assert spill.spills == 38 and spill.scratch_bytes == 84 and spill.occupancy == 8 and spill.registers == 64
    features = amdgcn.remark_resources(read("amdgcn/features.gfx90a.remarks.txt"))
    assert features["_Z8lds_tilePKfPfi"].shared_bytes == 1024
    assert len(features) == 9


def test_resources_merge_keeps_metadata_and_fills_gaps_from_remarks() -> None:
    blob = (ISA / "amdgcn/vadd4.gfx90a.so").read_bytes()
    metadata = amdgcn.metadata_resources(next(iter(amdgcn.code_objects(blob, "gfx90a").values())))
    remarks = {n: amdgcn.ResourceUsage(n, registers=99, occupancy=8, source="remarks") for n in metadata}
    merged = amdgcn.merge_resources(metadata, remarks)
    usage = next(iter(merged.values()))
    assert usage.registers == 14 and usage.occupancy == 8 and "remarks" in usage.source


def test_recorded_gfx936_metadata_values_map_to_resources() -> None:
    """Recorded: the AMDGPU metadata of a real gfx936 Triton kernel (dcu-tool-formats.md section 2.8)."""
    entry = {".name": "triton_kernel", ".sgpr_count": 106, ".sgpr_spill_count": 668, ".vgpr_count": 225,
             ".vgpr_spill_count": 3449, ".wavefront_size": 64}
    usage = amdgcn._from_metadata(entry)
    assert (usage.registers, usage.sgprs, usage.spills) == (225, 106, 668 + 3449)


# ----- Hygon DCU: recorded samples ------------------------------------------------------------
def test_recorded_dcu_assembly_splits_into_its_kernels() -> None:
    functions = dcu.split_listing(read("dcu/recorded_gfx936.s"))
    assert set(functions) == {"_Z11k_mmac_bf16ILi8EEviPf", "_Z12k_mmac_f32x8ILi8EEviPf", "_Z9mmac_testPDv4_f",
                              "_Z17gemm_f16_pipelinev", "_Z15lds_direct_loadv", "_Z10microbenchv"}
    gemm = [i.text for i in parse_amdgcn(functions["_Z17gemm_f16_pipelinev"])]
    assert "ds_read_m32x16_b16 v[20:23], $43" in gemm
    assert "v_mmac_f32_16x16x16_f16 v[0:3], v[20:21], v[16:17], v[0:3]" in gemm


def test_recorded_dtk_objdump_and_assumed_dccobjdump_layouts_split() -> None:
    tensile = dcu.split_listing(read("dcu/recorded_gfx936.llvm-objdump.txt"))
    assert [i.mnemonic for i in parse_amdgcn(tensile["Cijk_Alik_Bljk_BBH_MT256x256x16_ISA936_MAC_MMAC"])] == \
        ["v_mmac_f32_16x16x16_bf16"] * 2
    assumed = dcu.split_listing(read("dcu/assumed_dccobjdump_layout.txt"))
    assert list(assumed) == ["_Z17gemm_f16_pipelinev", "_Z11k_mmac_bf16ILi8EEviPf"]
    first = parse_amdgcn(assumed["_Z17gemm_f16_pipelinev"])[0]
    assert first.text == "buffer_load_dwordx4 v[48:51], $33, s[36:39], s45 offen"


def test_listing_without_function_boundaries_is_kept_unsplit() -> None:
    functions = dcu.split_listing("\ts_load_dword s0, s[4:5], 0x4\n"
                                  "\tv_mmac_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]\n")
    assert list(functions) == [UNSPLIT]
    assert dcu.split_listing("no instructions at all\n") == {}


def test_dccobjdump_command_matches_the_issue() -> None:
    command = dcu.dccobjdump_command("dccobjdump", Path("/b/kernel.so"), "gfx936:sramecc+:xnack-")
    assert command == ["dccobjdump", "--inputs=/b/kernel.so", "--architecture=gfx936", "--show-sass",
                       "--show-instruction-encoding", "--separate-functions"]


def test_dccobjdump_side_files_are_read(tmp_path: Path) -> None:
    """DTK writes .ISA files into its working directory; a fake dccobjdump does the same."""
    fake = tmp_path / "dccobjdump"
    fake.write_text(f"#!/bin/sh\ncp {ISA / 'dcu/recorded_gfx936.s'} ./kernel.co.ISA\necho 'ELF header only'\n")
    fake.chmod(0o755)
    result, text = dcu.run_dccobjdump(str(fake), tmp_path / "kernel.so", "gfx936")
    assert result.ok and "ELF header only" in text and "kernel.co.ISA" in text
    assert "_Z17gemm_f16_pipelinev" in dcu.split_listing(text)


# ----- x86 and SASS ---------------------------------------------------------------------------
def test_x86_objdump_lines() -> None:
    functions = split_objdump(read("x86/features.x86.objdump.txt"))
    texts = [i.text for i in parse_x86(functions["stream_store"])]
    assert "vmovntps YMMWORD PTR [rsi+rax*1],ymm0" in texts
    lock = [i for i in parse_x86(functions["atomic_count"]) if "lock" in i.text]
    assert lock and lock[0].mnemonic == "inc" and lock[0].text.startswith("lock inc")


def test_sass_lines_from_the_cuda_splitter_keep_predicates_and_modifiers() -> None:
    functions = split_sass(read("sass/features.sm_90.sass.txt"))
    found = parse_sass(functions["vec4_copy"])
    assert any(i.mnemonic == "LDG.E.128.CONSTANT" for i in found)
    assert any(i.text.startswith("@P0 EXIT") or i.text.startswith("@!P0") or i.mnemonic == "EXIT" for i in found)
    spill = {i.mnemonic for i in parse_sass(functions["spill_kernel"])}
    assert {"STL", "LDL"} & spill
    usage = parse_resource_usage(read("sass/features.sm_90.resources.txt"))["spill_kernel"]
    assert usage.scratch_bytes == 192


@pytest.mark.parametrize("family", ["x86", "amdgcn", "dcu", "sass"])
def test_instructions_dispatches_by_family(family: str) -> None:
    assert instructions("", family) == []
    with pytest.raises(ValueError, match="unknown ISA family 'arm'"):
        instructions("", "arm")


def test_base_name_of_demangled_symbols() -> None:
    assert base_name("vector_add_float4(float4 const*, float4 const*, float4*, int)") == "vector_add_float4"
    assert base_name("ns::k<float, 4>(float const*)") == "k"
    assert base_name("solve") == "solve"
