"""The `dcuopt` loop end to end on a CPU case: setup, open-iter, close-iter, finalize, each run twice.

Fixture: tests/data/loop_rowsum (a serial row-sum baseline; iteration 1's branches: b1 is several times faster,
b2 is wrong). The commands run in this process (`main([...])`); each runs the harness in a pytest subprocess. A
pytest.ini and a conftest.py registering the `ablation` observer sit at the top of the temporary tree, as in a
project.

open-iter profiles the current best with the `profile` marker (perf on the CPU). What that gives depends on the
machine and is asserted as such: `profiled` where perf counts hardware events, else the marker's own
"degraded: perf unavailable: ..." verdict (this project's VM has no PMU).
"""
from __future__ import annotations

import importlib.util
import json
import platform
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from pytest_dcuopt.cli.main import main
from pytest_dcuopt.profile.profilers import PerfProfiler
from tests.conftest import CASES, DATA
from tests.context import skip_if_no_gxx

LOOP = DATA / "loop_rowsum"
ROWSUM = CASES / "ablation_rowsum"
REPO = Path(__file__).parents[2]
HARNESS_ARGS = ("--dcuopt-max-time=0.4 --dcuopt-min-samples=3 --dcuopt-warmup=0.01 --dcuopt-examples=10 "
                "--dcuopt-cache-dir={cache}")
REGISTER = ("from pytest_dcuopt.observe.ablation import AblationObserver\n\n\n"
            "def pytest_dcuopt_observers(config):\n    return [AblationObserver()]\n")


@pytest.fixture
def project(tmp_path: Path, shared_build_cache: Path) -> Path:
    shutil.copytree(LOOP / "case", tmp_path / "rowsum")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(REGISTER)
    return tmp_path


# The method registry has no placebo id: iteration 1's second method is a real id whose flag removes the fixture's
# block that adds zero (-DDCUOPT_NO_PLACEBO), so its ablation must show no effect.
UNROLL = {"id": "latency.ilp_unroll", "name": "Eight independent accumulators", "axis": "latency", "priority": 4,
          "description": "Break the serial float add chain into eight partial sums.",
          "ablation_flag": "-DDCUOPT_NO_UNROLL",
          "skipped_higher": [{"id": i, "reason": "no_trigger"} for i in
                             ("latency.waitcnt_pipeline", "latency.reduce_barrier",
                              "latency.wavefront_shuffle_ds_bpermute")]}
PLACEBO = {"id": "compute.launch_config_wave64", "name": "Placebo", "axis": "compute", "priority": 3,
           "description": "Adds zero; its ablation must show no effect.", "ablation_flag": "-DDCUOPT_NO_PLACEBO",
           "skipped_higher": [{"id": "compute.mmac_tensor_core", "reason": "feature_unavailable"},
                              {"id": "compute.mixed_precision_fp8_bf8", "reason": "feature_unavailable"}]}
COALESCE = {"id": "memory.coalesced_access", "name": "Nothing new", "axis": "memory", "priority": 1,
            "description": "A slower and a wrong branch: no gain expected."}


def expected_verdict() -> str:
    """The profile marker's verdict for a perf profile on this machine (a prefix of it when degraded)."""
    lacking = PerfProfiler().hardware_verdict()
    return "profiled" if lacking is None else "degraded: perf unavailable: hardware events"


def assert_profiled_honestly(iteration: Path) -> dict:
    """profile.json and budget.json of an opened iteration: the marker's verdict, no budget made up."""
    profile = json.loads((iteration / "profile.json").read_text())
    budget = json.loads((iteration / "budget.json").read_text())
    assert profile["verdict"].startswith(expected_verdict()), profile["verdict"]
    assert profile["profile"]["branch"] == "baseline" and profile["profile"]["tool"] == "perf stat"
    assert budget["verdict"] == profile["verdict"]
    assert (iteration / "profile_run" / "profile.json").is_file()
    return budget


def dcuopt(*argv: str) -> int:
    return main([str(a) for a in argv])


def state_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "state.json").read_text())


def runs(case: Path) -> list[Path]:
    return sorted(p for p in case.glob("run_*") if p.is_dir())


@skip_if_no_gxx
def test_two_iteration_loop_is_idempotent_and_promotes_only_a_correct_faster_branch(project, shared_build_cache,
                                                                                     capsys) -> None:
    case = project / "rowsum"
    args = HARNESS_ARGS.format(cache=shared_build_cache)
    assert dcuopt("setup", case, "--iterations", 2, "--branches", 2, "--pytest-args", args) == 0
    assert dcuopt("setup", case, "--iterations", 2, "--branches", 2, "--pytest-args", args) == 0
    first, second = runs(case)  # a second setup is a second, equally valid run (never a clash in one second)
    run_dir = second
    shutil.rmtree(first)
    state = state_of(run_dir)
    assert (state["toolchain"], state["iterations_total"], state["branches"]) == ("cpu", 2, 2)
    assert Path(state["best_file"]) == run_dir / "baseline" / "kernel.cpp"
    assert (run_dir / "env.json").is_file() and (run_dir / "baseline" / "preflight" / "state.json").is_file()
    bench = json.loads((run_dir / "baseline" / "bench.json").read_text())  # the preflight timed the baseline
    assert bench["median_ms"] > 0 and state["best_metric_ms"] == bench["median_ms"], bench

    assert dcuopt("open-iter", run_dir) == 0
    iteration = run_dir / "iterv1"
    budget = assert_profiled_honestly(iteration)
    # ref.py has no flops/bytes_moved and perf counts neither: the roofline cannot place the kernel, so no budget.
    assert budget["budget"] is None and budget["bound"] == "unknown"
    assert "no ceiling utilization could be computed" in budget["reason"]
    assert "none (the roofline could not place the kernel" in json.loads(
        (iteration / "methods.json").read_text())["$comment"]
    assert state_of(run_dir)["iterations"]["1"]["profile"]["budget"] is None
    (history,) = state_of(run_dir)["roofline_history"]
    assert (history["iter"], history["bound"], history["arch"]) == (1, "unknown", platform.machine())
    assert "no per-function register counts" in budget["registers"]["reason"]  # x86 code has none
    (iteration / "methods.json").write_text(json.dumps({"iter": 1, "methods": [UNROLL, PLACEBO]}))
    assert dcuopt("open-iter", run_dir) == 0  # again: fills gaps, keeps what was written (and the profile)
    assert json.loads((iteration / "methods.json").read_text())["methods"][0]["id"] == "latency.ilp_unroll"
    assert json.loads((iteration / "budget.json").read_text())["created_at"] == budget["created_at"]
    assert (iteration / "branches" / "b2" / "kernel.cpp").read_text() == (case / "kernel.cpp").read_text()
    for branch in ("b1", "b2"):
        shutil.copy(LOOP / "iter1" / branch / "kernel.cpp", iteration / "branches" / branch / "kernel.cpp")

    assert dcuopt("close-iter", run_dir) == 0
    closed = state_of(run_dir)
    assert dcuopt("close-iter", run_dir) == 0  # safe to run twice: replaced, never appended
    again = state_of(run_dir)
    # The decisions are measured, on effects many times the noise: b1 is several times faster than the serial
    # baseline, and the ablation adds rounds (up to 12) while a method's interval holds both an effect and none.
    for state in (closed, again):
        (entry,) = state["history"]
        assert entry["status"] == "improved" and entry["champion"] == "b1", entry
        assert entry["speedup_interval"][0] > 1.2  # beyond noise by a wide margin
        assert entry["branches"]["b2"]["correct"] is False
        assert Path(state["best_file"]) == iteration / "champion" / "kernel.cpp"
        assert [m["id"] for m in state["selected_methods"]] == ["latency.ilp_unroll", "compute.launch_config_wave64"]
        effective = [m["id"] for m in state["effective_methods"]]
        ineffective = [m["id"] for m in state["ineffective_methods"]]
        assert effective[:1] == ["latency.ilp_unroll"], state["effective_methods"]  # a several-fold effect
        # The placebo: measured and classified by its ablation (a few-percent question a loaded machine can tilt;
        # docs/loop.md has the five-run figure); no ISA signature on x86, so never implementation_failed.
        inconclusive = [m["id"] for m in state["inconclusive_methods"]]
        assert "compute.launch_config_wave64" in effective + ineffective + inconclusive
        assert state["iterations"]["1"]["validation_notes"][0].startswith("[budget] not applied")
        # The champion is profiled as the best was (the seed profiles both); its entry joins the roofline history.
        assert [(r["iter"], r["stage"]) for r in state["roofline_history"]] == [(1, "best before"), (1, "champion")]
    champion_profile = json.loads((iteration / "champion_profile.json").read_text())
    assert champion_profile["branch"] == "b1" and champion_profile["verdict"].startswith(expected_verdict())

    assert dcuopt("open-iter", run_dir) == 0
    second_iteration = run_dir / "iterv2"
    assert (second_iteration / "kernel.cpp").read_text() == (LOOP / "iter1" / "b1" / "kernel.cpp").read_text()
    assert_profiled_honestly(second_iteration)
    # The bound is still unknown, so a method iteration 1 tried is not selectable again (the registry's history rule).
    (second_iteration / "methods.json").write_text(json.dumps({"iter": 2, "methods": [UNROLL]}))
    capsys.readouterr()
    assert dcuopt("close-iter", run_dir) == 2
    assert "[history] latency.ilp_unroll was tried in iteration 1" in capsys.readouterr().err
    assert not (second_iteration / "pytest").exists()
    (second_iteration / "methods.json").write_text(json.dumps({"iter": 2, "methods": [COALESCE]}))
    # b1: the serial first baseline, several times slower than the unrolled best; b2: wrong (drops the last column).
    # Neither may replace the best, whatever the machine's noise (the test asserts no timing beyond that margin).
    (second_iteration / "branches" / "b1" / "kernel.cpp").write_text((case / "kernel.cpp").read_text())
    (second_iteration / "branches" / "b2" / "kernel.cpp").write_text(
        (case / "kernel.cpp").read_text().replace("k < K; ++k", "k < K - 1; ++k"))
    assert dcuopt("close-iter", run_dir) == 0
    final = state_of(run_dir)
    final_best = final["best_file"]
    assert [h["status"] for h in final["history"]] == ["improved", "no_gain"]
    assert Path(final["best_file"]) == iteration / "champion" / "kernel.cpp"  # slower or wrong never replaces it
    assert final["history"][1]["branches"]["b2"]["correct"] is False
    assert [m["id"] for m in final["ineffective_methods"]][-1] == "memory.coalesced_access"  # no promotion

    assert dcuopt("finalize", run_dir) == 0
    summary = (run_dir / "summary.md").read_text()
    # The headline is the first baseline and the final best timed head to head (several-fold apart), kept and reused.
    final = json.loads((run_dir / "final" / "head_to_head.json").read_text())
    assert final["correct"] is True and final["speedup"] > 1.2 and final["best_file"] == final_best, final
    assert "timed head to head in one run" in summary
    assert dcuopt("finalize", run_dir) == 0
    assert (run_dir / "summary.md").read_text() == summary
    assert "| 1 | improved | b1 |" in summary and "| 2 | no_gain | - |" in summary
    assert "**latency.ilp_unroll** (latency, iter 1) - removing it:" in summary
    assert (run_dir / "best_median.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "![best median per iteration](best_median.png)" in summary
    assert "[iterv1__cpu.branches.png](iterv1__cpu.branches.png)" in summary
    assert (run_dir / "iterv1__cpu.branches.png").is_file()
    assert "iterations of" in _open_iter_error(run_dir, capsys)


def _open_iter_error(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert dcuopt("open-iter", run_dir) == 2
    return capsys.readouterr().err


@skip_if_no_gxx
def test_setup_refuses_a_wrong_baseline_and_names_the_failure(project, shared_build_cache, capsys) -> None:
    case = project / "rowsum"
    shutil.copy(LOOP / "iter1" / "b2" / "kernel.cpp", case / "kernel.cpp")
    assert dcuopt("setup", case, "--pytest-args", HARNESS_ARGS.format(cache=shared_build_cache)) == 2
    err = capsys.readouterr().err
    assert "preflight of" in err and "cpu:" in err
    assert runs(case) == []  # nothing is created for a baseline that does not pass


@skip_if_no_gxx
def test_timing_budget_and_close_iter_with_invalid_methods_runs_nothing(project, shared_build_cache, capsys) -> None:
    case = project / "rowsum"
    with (case / "ref.py").open("a") as ref:  # a workload model: the roofline can place the kernel by its time
        ref.write("\n\ndef bytes_moved(M, K):\n    return 4 * M * K + 4 * M\n")
    run_dir = project / "run"
    assert dcuopt("setup", case, "--run-dir", run_dir, "--branches", 1,
                  "--pytest-args", HARNESS_ARGS.format(cache=shared_build_cache)) == 0
    assert dcuopt("open-iter", run_dir) == 0
    iteration = run_dir / "iterv1"
    budget = assert_profiled_honestly(iteration)
    counts = budget["budget"]
    assert budget["bound"] in ("memory", "latency") and counts["compute"] == 0  # the CPU has no compute ceiling
    assert budget["inputs"]["bytes_from"] == "ref.py bytes_moved(dims)"
    assert budget["total"] == sum(counts.values()) and (budget["total"] > 0 or budget["stop"])
    if budget["verdict"] != "profiled":
        assert budget["basis"].startswith("timing only, the profiler's counters are unavailable (perf stat degraded)")
    line = f"compute 0, memory {counts['memory']}, latency {counts['latency']}"
    assert line in json.loads((iteration / "methods.json").read_text())["$comment"]
    assert line in (iteration / "analysis.md").read_text()
    capsys.readouterr()
    assert dcuopt("close-iter", run_dir) == 2  # the template has no methods yet
    assert "methods: [] should be non-empty" in capsys.readouterr().err
    too_many = [dict(UNROLL, id=f"latency.{i}", priority=p, skipped_higher=[]) for p, i in
                enumerate(("waitcnt_pipeline", "reduce_barrier", "wavefront_shuffle_ds_bpermute"), 1)]
    (iteration / "methods.json").write_text(json.dumps({"iter": 1, "methods": [
        {**m, "ablation_flag": f"-DNO_{k}"} for k, m in enumerate(too_many)]}))
    assert dcuopt("close-iter", run_dir) == 2  # three latency methods: at most 2 per axis, never all 3
    assert f"[budget] 3 latency method(s) selected, the axis budget is {counts['latency']}" in capsys.readouterr().err
    assert not (iteration / "pytest").exists()
    assert state_of(run_dir)["history"] == []


def loop_check() -> ModuleType:
    """tools/device/loop_check.py, the driver the H200 runs (tools/device/loop_check.sh), loaded by path."""
    spec = importlib.util.spec_from_file_location("loop_check", REPO / "tools" / "device" / "loop_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@skip_if_no_gxx
def test_the_device_loop_script_runs_the_same_loop_and_ablation_on_the_cpu(tmp_path, shared_build_cache) -> None:
    """What tools/device/loop_check.sh runs on the H200 (there on the CUDA fixture), here on the CPU fixture."""
    driver, harness = loop_check(), HARNESS_ARGS.format(cache=shared_build_cache)
    # The loop's decisions are measured on a ~2x effect; the ablation adds rounds while it is inconclusive.
    out, work = tmp_path / "out", tmp_path / "work"
    assert driver.main(["loop", "--case", str(ROWSUM), "--fast",
                        str(ROWSUM / "branches" / "unrolled" / "kernel.cpp"), "--real-flag=-DDCUOPT_NO_UNROLL",
                        "--placebo-flag=-DDCUOPT_NO_PLACEBO", "--toolchain", "cpu", "--work",
                        str(work), "--out", str(out), "--pytest-args", harness]) == 0
    report = json.loads((out / "loop-summary.json").read_text())
    assert [step["exit"] for step in report["steps"]] == [0] * 7, report["steps"]
    checks = report["checks"]
    first = checks["iteration1"]
    real, placebo = first["selected_methods"]  # proposed from the budget; the flags go to the first two
    assert checks["second_close_same_decisions"] is True and checks["iteration2_not_promoted"] is True, checks
    assert first["history"] == [[1, "improved", "b1"]]
    # The second close measured again; the placebo's bucket (noise) is reported, every other decision compared.
    assert checks["second_close_not_compared"]["method"] == placebo
    assert first["effective_methods"][0] == real and placebo in first["effective_methods"] + first[
        "ineffective_methods"] + first["inconclusive_methods"]
    for name in ("summary.md", "state.json", "iterv1/methods.json", "iterv1/attribution.json", "iterv2/budget.json"):
        assert (out / "loop" / name).is_file(), name

    # Two repeats: a disturbed round widens the interval, and the ablation adds rounds until the ~2x unroll clears
    # "no effect", so both find it.
    assert driver.main(["ablate", "--case", str(ROWSUM), "--toolchain", "cpu", "--times", "2", "--work",
                        str(work), "--out", str(out), "--pytest-args", harness]) == 0
    repeat = json.loads((out / "ablation-repeat.json").read_text())
    unroll, placebo = repeat["tally"]["latency.ilp_unroll"], repeat["tally"]["noop.placebo"]
    assert len(repeat["runs"]) == 2 and unroll == {"effective": 2}, repeat
    assert sum(placebo.values()) == 2 and set(placebo) <= {"effective", "ineffective", "inconclusive"}
    tally = "Tally: latency.ilp_unroll: " + ", ".join(f"{b} {n}/2" for b, n in unroll.items())
    assert tally in (out / "ablation-repeat.md").read_text()
