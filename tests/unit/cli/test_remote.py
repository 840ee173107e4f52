"""What `dcuopt pack` selects for an iteration (the best's profile, and its SQTT pass, joins after three flat
iterations), the plugin wheel it carries, and which ingested champion steps close-iter --ingested uses."""
from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt import __version__
from pytest_dcuopt.cli import finalize, plugin_wheel
from pytest_dcuopt.cli import pack as packing
from pytest_dcuopt.cli.close_iter import MEASURE_SELECTION
from pytest_dcuopt.cli.ingested import ingested_step
from pytest_dcuopt.cli.layout import INGESTED_NAME, LAYOUT_VERSION, LoopError, RunLayout, save_state
from pytest_dcuopt.cli.main import main


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
    pack = packing.iteration_pack(run_with(tmp_path, 3), None, [])
    assert pack.pytest_args[-2:] == ["-k", packing.TRIAGE_SELECTION]
    assert packing.TRIAGE_SELECTION == f"{MEASURE_SELECTION} or (test_profile and baseline)"
    shim = next(f for f in pack.files if f.name == "iterv4/ref.py")
    assert b"sqtt=True" in shim.data


def test_an_ordinary_pack_measures_without_profiles(tmp_path: Path) -> None:
    pack = packing.iteration_pack(run_with(tmp_path / "a", 2), None, [])
    assert pack.pytest_args[-2:] == ["-k", MEASURE_SELECTION]
    assert json.loads((tmp_path / "a" / "run" / "state.json").read_text())["history"][-1]["iter"] == 2


def test_the_packed_plugin_is_a_wheel_of_every_package_file_with_the_pytest_entry_point() -> None:
    wheel = plugin_wheel.plugin_wheel()
    package = Path(packing.__file__).resolve().parents[1]
    expected = {f"pytest_dcuopt/{p.relative_to(package).as_posix()}" for p in package.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    with zipfile.ZipFile(io.BytesIO(wheel.data)) as archive:
        names = set(archive.namelist())
        info = f"pytest_dcuopt-{__version__}.dist-info"
        assert names - expected == {f"{info}/{n}" for n in ("METADATA", "WHEEL", "entry_points.txt", "RECORD")}
        assert expected <= names and "pytest_dcuopt/toolchains/cuda_sync_hooks.h" in names
        assert archive.read("pytest_dcuopt/cli/pack.py") == (package / "cli" / "pack.py").read_bytes()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        record = archive.read(f"{info}/RECORD").decode().splitlines()
    pyproject = (package.parent / "pyproject.toml").read_text()
    declared = pyproject.split("[project.entry-points.pytest11]\n", 1)[1].split("\n\n", 1)[0]
    name, module = plugin_wheel.PYTEST_ENTRY_POINT
    assert declared == f'{name} = "{module}"'  # one name: loaded once
    assert f"{name} = {module}" in entry_points
    assert len(record) == len(names) and wheel.name == f"pytest_dcuopt-{__version__}-py3-none-any.whl"


def ingested_run_dir(tmp_path: Path, steps: dict[str, Any] | None) -> RunLayout:
    layout = RunLayout(tmp_path / "run")
    (layout.iteration(1) / "ablation").mkdir(parents=True)
    layout.harness_dir(1).mkdir(parents=True)
    (layout.harness_dir(1) / INGESTED_NAME).write_text(json.dumps({"manifest": {"iteration": 1}, "steps": steps}))
    return layout


def test_an_ingested_champion_step_is_used_only_for_the_champion_the_remote_run_chose(tmp_path: Path) -> None:
    ran = {"status": "ran", "command": "python -m pytest x", "exit_status": 0, "folder": "ablation"}
    steps = {"champion": {"status": "chosen", "champion": "b1", "min_gain": 0.02}, "ablation": ran}
    layout = ingested_run_dir(tmp_path / "a", steps)
    found = ingested_step(layout, 1, "ablation", "b1", 0.02)
    assert not isinstance(found, str) and found.run_dir == layout.iteration(1) / "ablation"
    assert found.result.command == ("python", "-m", "pytest", "x")
    other = ingested_step(layout, 1, "ablation", "b2", 0.05)
    assert isinstance(other, str) and "chose b1 (min gain 0.02)" in other and "--min-gain 0.05" in other
    skipped = {**steps, "ablation": {"status": "not run", "reason": "no method in methods.json has an ablation_flag"}}
    reason = ingested_step(ingested_run_dir(tmp_path / "b", skipped), 1, "ablation", "b1", 0.02)
    assert reason == ("the remote run did not run the champion's ablation: no method in methods.json has an "
                      "ablation_flag")
    older = ingested_step(ingested_run_dir(tmp_path / "c", None), 1, "ablation", "b1", 0.02)
    assert isinstance(older, str) and "ran the measurement only" in older


def test_the_champions_rule_is_refused_for_a_case_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "case"
    case.mkdir()
    (case / "ref.py").write_text("def reference(a, b, N):\n    b.copy_(a)\n")
    (case / "kernel.cpp").write_text('extern "C" void solve(const float* a, float* b, int N) {}\n')
    (case / "dims.json").write_text('{"N": 8}\n')
    assert main(["pack", str(case), "--min-gain", "0.1", "-o", str(tmp_path / "p.tar.gz")]) == 2
    assert "--min-gain 0.1 is for packing a step of a run directory" in capsys.readouterr().err
    assert main(["pack", str(case), "--final", "-o", str(tmp_path / "p.tar.gz")]) == 2
    assert "--final is for packing a step of a run directory" in capsys.readouterr().err
    assert not (tmp_path / "p.tar.gz").exists()


def test_a_head_to_head_is_packed_only_when_a_branch_replaced_the_first_baseline(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = run_with(tmp_path, 1)  # one iteration closed without a promotion: the best is the first baseline
    state = json.loads((run_dir / "state.json").read_text())
    save_state(RunLayout(run_dir), {**state, "baseline_file": state["iterations"]["2"]["baseline_file"],
                                    "best_file": state["iterations"]["2"]["baseline_file"]})
    assert main(["pack", str(run_dir), "--final"]) == 2
    assert "no branch of" in capsys.readouterr().err and not (run_dir / "final.pack.tar.gz").exists()


def test_open_iter_waits_for_the_profile_made_elsewhere_and_finalize_for_the_head_to_head(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = run_with(tmp_path, 0)
    state = json.loads((run_dir / "state.json").read_text())
    baseline = state["iterations"]["1"]["baseline_file"]
    save_state(RunLayout(run_dir), {**state, "iterations": {}, "best_file": baseline, "baseline_file": baseline,
                                    "iterations_total": 2, "branches": 2, "roofline_history": []})
    assert main(["open-iter", str(run_dir), "--ingested"]) == 0  # nothing is profiled here: no pytest run at all
    assert f"dcuopt pack {run_dir} --profile" in capsys.readouterr().out
    record = json.loads((run_dir / "state.json").read_text())["iterations"]["1"]
    assert record["profile"]["status"] == "pending" and record["status"] == "open"
    assert (run_dir / "iterv1" / "ref.py").is_file() and not (run_dir / "iterv1" / "budget.json").exists()
    assert not (run_dir / "iterv1" / "analysis.md").exists()  # the templates carry the budget: they wait for it
    assert main(["close-iter", str(run_dir), "--ingested"]) == 2
    assert "budget.json is missing" in capsys.readouterr().err.replace(str(run_dir / "iterv1") + "/", "")
    assert main(["pack", str(run_dir), "--profile", "-o", str(tmp_path / "profile.tar.gz")]) == 0
    with tarfile.open(tmp_path / "profile.tar.gz") as packed:
        manifest = json.loads(packed.extractfile("dcuopt-pack-iterv1-profile/manifest.json").read())  # type: ignore
    assert manifest["kind"] == "profile" and manifest["pytest_args"][-2:] == ["-k", "test_profile and baseline"]
    layout = RunLayout(run_dir)
    state = json.loads((run_dir / "state.json").read_text())
    assert finalize.head_to_head(layout, state, ingested=True) is None  # nothing promoted: nothing to time
    other = Path(baseline).with_name("other.cpp")
    other.write_text(Path(baseline).read_text() + "// the final best\n")
    state = {**state, "best_file": str(other), "history": [{"iter": 1, "status": "improved"}]}
    with pytest.raises(LoopError, match=re.escape(f"`dcuopt pack {run_dir} --final`, run it on the device host")):
        finalize.head_to_head(layout, state, ingested=True)


def test_a_profile_made_here_without_the_device_is_not_kept_when_the_device_is_elsewhere(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = run_with(tmp_path, 0)
    state = json.loads((run_dir / "state.json").read_text())
    record = state["iterations"]["1"]
    save_state(RunLayout(run_dir), {**state, "best_file": record["baseline_file"], "iterations_total": 2,
                                    "branches": 2, "roofline_history": []})
    iteration = run_dir / "iterv1"
    iteration.mkdir()
    # What a plain open-iter wrote on a machine without the device: a profile and a budget of nothing.
    (iteration / "profile.json").write_text(json.dumps({"iter": 1, "verdict": "unavailable: no device here"}))
    (iteration / "budget.json").write_text(json.dumps({
        "iter": 1, "baseline_sha256": record["baseline_sha256"], "verdict": "unavailable: no device here",
        "bound": "unknown", "budget": None, "stop": None, "arch": None, "reason": "no roofline",
        "created_at": "2026-12-05T00:00:00+00:00"}))
    assert main(["open-iter", str(run_dir), "--ingested"]) == 0
    assert json.loads((run_dir / "state.json").read_text())["iterations"]["1"]["profile"]["status"] == "pending"
    assert f"dcuopt pack {run_dir} --profile" in capsys.readouterr().out
    assert not (iteration / "budget.json").exists() and not (iteration / "profile.json").exists()
    assert main(["close-iter", str(run_dir), "--ingested"]) == 2  # no budget of the best: nothing to check against
