"""`dcuopt compare-timers` end to end on a machine without a GPU: the harness column is measured for a CPU case, and
every GPU timer is listed with why it cannot run (its table and parsing: tests/unit/cli/test_compare_timers.py)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import CASES


def test_a_cpu_case_gets_the_harness_figure_and_the_gpu_timers_say_why_not(tmp_path: Path) -> None:
    shutil.copytree(CASES / "gate_slowdown", tmp_path / "gate_slowdown")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DCUOPT_GATE_")}
    done = subprocess.run([sys.executable, "-m", "pytest_dcuopt.cli.main", "compare-timers", "gate_slowdown",
                           "--branch", "steady", "--toolchain", "cpu", "--max-time", "0.2", "--work", "work",
                           "--pytest-args", "--dcuopt-min-samples=3", "--dcuopt-warmup=0.01"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == 'gate_slowdown / cpu / steady at {"N": 262144}'
    harness = next(line for line in lines if line.startswith("| harness |"))
    assert "| - (no ncu figure) | median of " in harness and "cold samples (host perf_counter_ns)" in harness
    for timer in ("do_bench", "nvbench", "ncu"):
        assert f"| {timer} | - | - | not measured: times GPU kernels; the cpu toolchain runs on the host" in \
            done.stdout, done.stdout
    result = json.loads((tmp_path / "work" / "compare-timers.json").read_text())
    assert result["dims"] == {"N": 262144} and result["figures"][0]["ms"] > 0
