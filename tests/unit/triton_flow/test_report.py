"""The Triton decision rules on fixed scans: initialization-only kernels, GEMMs without matrix instructions, and the
AMDGCN_USE_BUFFER_OPS=1 experiment for AMD code off the buffer path."""
from __future__ import annotations

from typing import Any

from pytest_dcuopt.triton_flow import report


def scan(family: str, memory: list[dict[str, Any]], path: str, matrix: int = 0, name: str = "k") -> dict[str, Any]:
    total = sum(m["count"] for m in memory)
    return {"functions": [{"function": name, "file": "k.s", "family": family, "arch": "gfx90a", "memory": memory,
                           "signatures": [], "verdict": {"dominant_path": path, "global_memory_ops": total,
                                                         "widest_bits": 32, "wide_128bit": False, "atomics": 0,
                                                         "matrix_ops": matrix}}], "not_gathered": []}


LOAD = {"space": "global", "op": "load", "width_bits": 32, "count": 4}
STORE = {"space": "global", "op": "store", "width_bits": 32, "count": 2}
DOT = {"kernels": [], "counts": {"dot": 1, "load": 2, "store": 1}}


def test_a_kernel_that_only_stores_is_initialization_only() -> None:
    decision, reasons = report.decide(report.Inputs("k", scan=scan("amdgcn", [STORE], "global")))
    assert decision == report.REWRITE and reasons[0].startswith("initialization-only kernel")
    assert report.decide(report.Inputs("k", scan=scan("amdgcn", [LOAD, STORE], "global")))[0] == report.CONTINUE


def test_a_gemm_without_matrix_instructions_is_rewritten_and_with_them_tuned() -> None:
    decision, reasons = report.decide(report.Inputs("k", hints=DOT, scan=scan("amdgcn", [LOAD, STORE], "buffer")))
    assert decision == report.REWRITE and "GEMM-like kernel (tl.dot x1 in its source) with no matrix" in reasons[0]
    with_mfma = scan("amdgcn", [LOAD, STORE], "buffer", matrix=8)
    assert report.decide(report.Inputs("k", hints=DOT, scan=with_mfma))[0] == report.CONTINUE
    name = "triton_tem_fused_mm_0"
    template = report.decide(report.Inputs(name, scan=scan("sass", [LOAD, STORE], "global", name=name)))
    assert template[0] == report.REWRITE and "an Inductor template kernel" in template[1][0]


def test_amd_code_off_the_buffer_path_gets_the_buffer_ops_experiment() -> None:
    _, reasons = report.decide(report.Inputs("k", scan=scan("dcu", [LOAD, STORE], "global")))
    assert any("AMDGCN_USE_BUFFER_OPS=1" in r and "never set it by default" in r for r in reasons), reasons
    for family, path in (("amdgcn", "buffer"), ("sass", "global")):
        _, reasons = report.decide(report.Inputs("k", scan=scan(family, [LOAD, STORE], path)))
        assert not any("AMDGCN_USE_BUFFER_OPS" in r for r in reasons), (family, reasons)
