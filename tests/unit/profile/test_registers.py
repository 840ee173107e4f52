"""Register pressure and the wave64 occupancy it allows, from fixed resource counts."""
from __future__ import annotations

from pytest_dcuopt.isa.model import ResourceUsage
from pytest_dcuopt.profile.registers import register_pressure


def one(usage: ResourceUsage, arch: str | None) -> dict:
    return register_pressure({usage.function: usage}, arch)["functions"][usage.function]


def test_cdna2_counts_vgprs_and_agprs_in_one_file_of_eight_waves() -> None:
    found = one(ResourceUsage("k", registers=96, agprs=32, sgprs=40, shared_bytes=4096, scratch_bytes=0), "gfx90a")
    assert found["waves_per_simd"] == 4 and found["occupancy_fraction"] == 0.5  # 512 / 128
    assert found["occupancy_from"].startswith("estimated from VGPR/SGPR counts, CDNA2/3")
    assert (found["vgprs"], found["agprs"], found["sgprs"], found["lds_bytes"]) == (96, 32, 40, 4096)


def test_gcn_gfx9_has_256_vgprs_and_ten_waves_and_sgprs_can_limit() -> None:
    assert one(ResourceUsage("k", registers=128, sgprs=32), "gfx906")["waves_per_simd"] == 2
    assert one(ResourceUsage("k", registers=24, sgprs=32), "gfx906")["waves_per_simd"] == 10
    assert one(ResourceUsage("k", registers=24, sgprs=100), "gfx906")["waves_per_simd"] == 7  # 800 // 112


def test_the_compilers_occupancy_wins_over_the_estimate() -> None:
    found = one(ResourceUsage("k", registers=24, sgprs=32, occupancy=6, source="remarks"), "gfx90a")
    assert found["waves_per_simd"] == 6 and found["occupancy_from"].startswith("compiler remark")


def test_a_hygon_arch_says_its_register_file_is_assumed_and_scratch_is_flagged() -> None:
    found = register_pressure({"k": ResourceUsage("k", registers=64, sgprs=20, scratch_bytes=16)}, "gfx936")
    assert "gfx936: a Hygon DCU; its register file is assumed" in found["note"]
    assert found["functions"]["k"]["waves_per_simd"] == 4 and "scratch" in found["warning"]


def test_without_counts_there_is_a_reason_not_a_number() -> None:
    found = register_pressure({}, None)
    assert found["functions"] == {} and "no per-function register counts" in found["reason"]
    unknown = one(ResourceUsage("k", registers=64), "sm_90")
    assert "waves_per_simd" not in unknown and "no wave64 register file" in unknown["occupancy_from"]
