"""`dcuopt triton capture` of a CPU torch.compile model: no tuned kernel, and it says Inductor made C++."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_dcuopt.cli import main as cli
from pytest_dcuopt.triton_flow.summarize import nothing_tuned_reason

MODEL = """import torch

@torch.compile
def f(x):
    return torch.sin(x) * 2 + 1

print(f(torch.randn(1000)).sum().item())
"""


def test_a_cpu_model_records_nothing_and_says_inductor_generated_cpp(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Importing torch._inductor (other tests in this process do) sets TORCHINDUCTOR_CACHE_DIR to the machine's
    # shared cache, which capture would then take as the user's: a warm cache compiles nothing. A user's shell has no
    # such value.
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    (tmp_path / "model.py").write_text(MODEL)
    assert cli.main(["triton", "capture", "--out", str(tmp_path / "out"), "--", "python",
                     str(tmp_path / "model.py")]) == 0
    out = capsys.readouterr().out
    assert "capture: 0 tuned kernel(s) recorded" in out
    assert "capture: Inductor generated C++ for the CPU (1 kernel(s): cpp_fused_" in out
    generated = json.loads((tmp_path / "out" / "capture-run.json").read_text())["generated"]
    assert generated["cpp"][0].startswith("cpp_fused_") and generated["triton"] == []


def test_triton_kernels_that_were_not_tuned_are_said_so() -> None:
    reason = nothing_tuned_reason({"output_code": ["a.py"], "cpp": [], "triton": ["triton_poi_fused_add_0"]})
    assert "1 Triton kernel(s) (triton_poi_fused_add_0) and autotuned none" in reason
    assert "compiled nothing" in nothing_tuned_reason({"output_code": [], "cpp": [], "triton": []})
