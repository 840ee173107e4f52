"""`dcuopt triton scan` of a recorded Hygon listing: the DCU family, so MMAC and matrix reads are credited."""
from __future__ import annotations

from pathlib import Path

from pytest_dcuopt.triton_flow.scan import read_listing, scan

GFX936 = Path(__file__).resolve().parents[2] / "data" / "isa" / "dcu" / "recorded_gfx936.s"


def test_a_gfx936_listing_is_read_as_the_dcu_family() -> None:
    listing = read_listing(GFX936)
    assert (listing.family, listing.arch) == ("dcu", "gfx936")


def test_mmac_and_matrix_reads_are_credited_to_their_methods() -> None:
    result = scan([GFX936])
    by_name = {f["function"]: f for f in result["functions"]}
    assert {f["family"] for f in result["functions"]} == {"dcu"}
    assert "compute.mmac_tensor_core" in by_name["_Z11k_mmac_bf16ILi8EEviPf"]["signatures"]
    assert "memory.ds_read_matrix_layout" in by_name["_Z17gemm_f16_pipelinev"]["signatures"]
