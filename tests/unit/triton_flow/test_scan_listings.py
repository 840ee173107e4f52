"""`dcuopt triton scan` on real compiler output: Triton AOT builds for gfx90a / gfx942 / sm_90 (tests/data/triton_aot,
made here without a GPU) and a cubin TorchInductor built on an H200 (tests/data/triton_inductor_h200)."""
from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_dcuopt.toolchains.cuda import find_cuobjdump
from pytest_dcuopt.triton_flow.scan import amd_width, describe, sass_width, scan

DATA = Path(__file__).resolve().parents[2] / "data"
AOT = DATA / "triton_aot"
H200 = DATA / "triton_inductor_h200"


def only(result: dict, arch: str) -> dict:
    found = [f for f in result["functions"] if f["arch"] == arch]
    assert len(found) == 1, [(f["function"], f["arch"]) for f in result["functions"]]
    return found[0]


def memory(entry: dict) -> dict[tuple[str, str, int | None], int]:
    return {(m["space"], m["op"], m["width_bits"]): m["count"] for m in entry["memory"]}


def test_widths_are_read_from_the_mnemonic() -> None:
    assert [amd_width(t) for t in ("_dwordx4", "_dwordx2", "_dword", "_b128", "_ubyte", "_short_d16", "_u16")] == [
        128, 64, 32, 128, 8, 16, 16]
    assert [sass_width(m) for m in ("LDG.E.128", "LDG.E.64.CONSTANT", "LDG.E", "LDG.E.U16", "STG.E.U8")] == [
        128, 64, 32, 16, 8]


def test_pointer_range_gives_buffer_ops_on_both_amd_archs() -> None:
    """The add kernel was compiled with tt.pointer_range=32 on its pointers: every global access is a buffer op.
    Its size argument carries no divisibility hint, so the masked accesses stay 32 bits wide."""
    result = scan([AOT], kernel="add_kernel")
    for arch in ("gfx90a", "gfx942"):
        entry = only(result, arch)
        assert memory(entry) == {("buffer", "load", 32): 8, ("buffer", "store", 32): 4}
        assert entry["verdict"]["dominant_path"] == "buffer" and entry["verdict"]["dominant_share"] == 1.0
        assert entry["verdict"]["wide_128bit"] is False
    assert "latency.waitcnt_pipeline" in only(result, "gfx942")["signatures"]


def test_float_atomics_differ_between_gfx90a_and_gfx942() -> None:
    """tl.atomic_add on fp32: a global compare-and-swap loop on gfx90a, one buffer_atomic_add_f32 on gfx942."""
    result = scan([AOT], kernel="hist_kernel")
    gfx90a, gfx942 = only(result, "gfx90a"), only(result, "gfx942")
    assert gfx90a["atomics"] == {"global_atomic_cmpswap": 1}
    assert gfx90a["verdict"]["dominant_path"] == "global"
    assert gfx942["atomics"] == {"buffer_atomic_add_f32": 1}
    assert gfx942["verdict"]["dominant_path"] == "buffer"


def test_tl_dot_is_mfma_with_wide_buffer_loads() -> None:
    result = scan([AOT], kernel="dot_kernel")
    assert only(result, "gfx90a")["matrix"] == {"v_mfma_f32_32x32x8f16": 4}
    assert only(result, "gfx942")["matrix"] == {"v_mfma_f32_32x32x8_f16": 4}
    for arch in ("gfx90a", "gfx942"):
        entry = only(result, arch)
        assert memory(entry)[("buffer", "load", 128)] == 2 and entry["verdict"]["wide_128bit"]
        assert {"compute.mmac_tensor_core", "memory.vectorized_global_access"} <= set(entry["signatures"])


def test_sm90_sass_shows_hgmma_and_global_atomics() -> None:
    dot = only(scan([AOT / "sm90"], kernel="dot_kernel"), "sm_90a")
    assert dot["matrix"] == {"HGMMA.64x64x16.F32": 2}
    assert memory(dot)[("global", "load", 128)] == 4
    hist = only(scan([AOT / "sm90"], kernel="hist_kernel"), "sm_90a")
    assert hist["atomics"] == {"ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU": 2}


@pytest.mark.skipif(find_cuobjdump() is None, reason="no cuobjdump (Triton's bundled one or the CUDA toolkit's)")
def test_an_inductor_cubin_recorded_on_the_h200() -> None:
    """The autotuned GELU kernel (XBLOCK 512 over 16 warps: one fp16 per thread) moves 16 bits per access."""
    result = scan([H200 / "cache" / "triton"], kernel="triton_poi_fused_gelu_2")
    entry = only(result, "sm_90a")
    assert memory(entry) == {("global", "load", 16): 1, ("global", "store", 16): 1}
    assert entry["verdict"]["widest_bits"] == 16
    template = only(scan([H200 / "cache" / "triton"], kernel="triton_tem_fused_addmm_gelu_t_3"), "sm_90a")
    assert any(name.startswith("HGMMA.") for name in template["matrix"])


@pytest.mark.skipif(find_cuobjdump() is None, reason="no cuobjdump (Triton's bundled one or the CUDA toolkit's)")
def test_the_scan_records_the_dump_command_without_its_environment() -> None:
    """isa_scan.json's "tool" is the command that dumped a cubin: the tool and its arguments. The H200 run's
    (tests/data/triton_capture_h200/run2/isa_scan.json) began with `PATH=...`, the whole PATH cuobjdump ran with."""
    tool = find_cuobjdump()
    result = scan([H200 / "cache" / "triton"], kernel="triton_poi_fused_gelu_2")
    cubins = [entry for entry in result["files"] if entry["file"].endswith(".cubin")]
    assert cubins
    for entry in cubins:
        assert shlex.split(entry["tool"]) == [tool, "--dump-sass", entry["file"]]
        assert "PATH=" not in entry["tool"]


def test_an_unknown_kernel_is_said_not_skipped() -> None:
    result = scan([AOT / "gfx942"], kernel="no_such_kernel")
    assert result["functions"] == []
    assert any("no function matches --kernel 'no_such_kernel'" in gap and "add_kernel" in gap
               for gap in result["not_gathered"])
    assert any(line.startswith("not gathered:") for line in describe(result))


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton is not installed")
def test_a_fresh_aot_compile_scans_like_the_stored_fixtures(tmp_path: Path) -> None:
    """The stored fixtures are what this machine's Triton makes: recompile them and compare the scans."""
    subprocess.run([sys.executable, str(AOT / "make_fixtures.py"), str(tmp_path)], check=True, timeout=600,
                   capture_output=True)
    fresh, stored = scan([tmp_path]), scan([AOT])

    def key(result: dict) -> list[tuple]:
        return sorted((f["function"], f["arch"], str(f["memory"]), str(f["atomics"]), str(f["matrix"]))
                      for f in result["functions"])

    assert key(fresh) == key(stored)
