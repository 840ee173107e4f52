"""A case made by `dcuopt triton to-case` on a machine without a GPU backend skips with Inductor's words."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_dcuopt.triton_flow.to_case import to_case

CAPTURE = (Path(__file__).resolve().parents[2] / "data" / "triton_capture_h200" / "cap"
           / "triton_per_fused__softmax_add_exp_prepare_softmax_online_sub_4_4")
GPU_BACKEND = subprocess.run([sys.executable, "-c", "from torch._inductor.runtime import triton_helpers; "
                              "triton_helpers.set_driver_to_gpu()"], capture_output=True, timeout=300).returncode == 0


@pytest.mark.skipif(GPU_BACKEND, reason="a GPU backend is active here: the case runs instead of skipping")
def test_the_case_skips_with_inductors_reason_instead_of_failing(tmp_path: Path) -> None:
    capture = tmp_path / "cap" / CAPTURE.name
    capture.mkdir(parents=True)
    for name in ("capture.json", "kernel.py"):
        shutil.copy2(CAPTURE / name, capture / name)
    to_case(capture, tmp_path / "case")
    done = subprocess.run([sys.executable, "-m", "pytest", str(tmp_path / "case"), "--dcuopt-toolchain", "triton",
                           "-q", "-rs", "-p", "no:cacheprovider", f"--dcuopt-run-dir={tmp_path / 'run'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 skipped" in done.stdout and "Could not find an active GPU backend" in done.stdout
