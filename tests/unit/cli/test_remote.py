"""What `dcuopt pack` selects for an iteration: the best's profile (and its SQTT pass) joins after three flat
iterations."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pytest_dcuopt.cli import remote
from pytest_dcuopt.cli.close_iter import MEASURE_SELECTION
from pytest_dcuopt.cli.layout import LAYOUT_VERSION, RunLayout, save_state


def run_with(tmp_path: Path, flat: int) -> Path:
    run_dir = tmp_path / "run"
    (run_dir / "baseline").mkdir(parents=True)
    baseline = run_dir / "baseline" / "kernel.cpp"
    baseline.write_text('extern "C" void solve(const float* a, float* b, int N) {}\n')
    (tmp_path / "ref.py").write_text("def reference(a, b, N):\n    b.copy_(a)\n")
    history = [{"iter": i, "status": "no_gain", "speedup_vs_best_before": None} for i in range(1, flat + 1)]
    index = flat + 1
    state = {"layout_version": LAYOUT_VERSION, "run_dir": str(run_dir), "toolchain": "cpu",
             "ref_file": str(tmp_path / "ref.py"), "dims": {"N": 8},
             "noise_threshold_pct": 2.0, "pytest_args": [], "history": history, "ncu_num": 5,
             "iterations": {str(index): {"baseline_file": str(baseline), "status": "open",
                                         "baseline_sha256": hashlib.sha256(baseline.read_bytes()).hexdigest()}}}
    save_state(RunLayout(run_dir), state)
    return run_dir


def test_a_pack_after_three_flat_iterations_runs_the_bests_profile_too(tmp_path: Path) -> None:
    pack = remote.iteration_pack(run_with(tmp_path, 3), None, [])
    assert pack.pytest_args[-2:] == ["-k", remote.TRIAGE_SELECTION]
    assert remote.TRIAGE_SELECTION == f"{MEASURE_SELECTION} or (test_profile and baseline)"
    shim = next(f for f in pack.files if f.name == "iterv4/ref.py")
    assert b"sqtt=True" in shim.data


def test_an_ordinary_pack_measures_without_profiles(tmp_path: Path) -> None:
    pack = remote.iteration_pack(run_with(tmp_path / "a", 2), None, [])
    assert pack.pytest_args[-2:] == ["-k", MEASURE_SELECTION]
    assert json.loads((tmp_path / "a" / "run" / "state.json").read_text())["history"][-1]["iter"] == 2
