"""The `dcuopt` loop end to end on a CPU case: setup, open-iter, close-iter, finalize, each run twice.

Fixture: tests/data/loop_rowsum (a serial row-sum baseline; iteration 1's methods.json and branches: b1 is
several times faster, b2 is wrong). The commands run in this process (`main([...])`); each runs the harness in
a pytest subprocess. A pytest.ini and a conftest.py registering the `ablation` observer sit at the top of the
temporary tree, as in a project.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_dcuopt.cli.main import main
from tests.conftest import DATA
from tests.context import skip_if_no_gxx

LOOP = DATA / "loop_rowsum"
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

    assert dcuopt("open-iter", run_dir) == 0
    iteration = run_dir / "iterv1"
    shutil.copy(LOOP / "iter1" / "methods.json", iteration / "methods.json")
    assert dcuopt("open-iter", run_dir) == 0  # again: fills gaps, keeps what was written
    assert json.loads((iteration / "methods.json").read_text())["methods"][0]["id"] == "latency.ilp_unroll"
    assert (iteration / "branches" / "b2" / "kernel.cpp").read_text() == (case / "kernel.cpp").read_text()
    for branch in ("b1", "b2"):
        shutil.copy(LOOP / "iter1" / branch / "kernel.cpp", iteration / "branches" / branch / "kernel.cpp")

    assert dcuopt("close-iter", run_dir) == 0
    closed = state_of(run_dir)
    assert dcuopt("close-iter", run_dir) == 0  # safe to run twice: replaced, never appended
    again = state_of(run_dir)
    for state in (closed, again):
        (entry,) = state["history"]
        assert entry["status"] == "improved" and entry["champion"] == "b1", entry
        assert entry["speedup_interval"][0] > 1.2  # beyond noise by a wide margin
        assert entry["branches"]["b2"]["correct"] is False
        assert Path(state["best_file"]) == iteration / "champion" / "kernel.cpp"
        assert [m["id"] for m in state["selected_methods"]] == ["latency.ilp_unroll", "noop.placebo"]
        assert [m["id"] for m in state["effective_methods"]] == ["latency.ilp_unroll"]
        assert [m["id"] for m in state["ineffective_methods"]] == ["noop.placebo"]

    assert dcuopt("open-iter", run_dir) == 0
    second_iteration = run_dir / "iterv2"
    assert (second_iteration / "kernel.cpp").read_text() == (LOOP / "iter1" / "b1" / "kernel.cpp").read_text()
    methods = {"iter": 2, "methods": [{"id": "memory.prefetch", "name": "Nothing new", "axis": "memory",
                                       "description": "A slower and a wrong branch: no gain expected."}]}
    (second_iteration / "methods.json").write_text(json.dumps(methods))
    # b1: the serial first baseline, several times slower than the unrolled best; b2: wrong (drops the last column).
    # Neither may replace the best, whatever the machine's noise (the test asserts no timing beyond that margin).
    (second_iteration / "branches" / "b1" / "kernel.cpp").write_text((case / "kernel.cpp").read_text())
    (second_iteration / "branches" / "b2" / "kernel.cpp").write_text(
        (case / "kernel.cpp").read_text().replace("k < K; ++k", "k < K - 1; ++k"))
    assert dcuopt("close-iter", run_dir) == 0
    final = state_of(run_dir)
    assert [h["status"] for h in final["history"]] == ["improved", "no_gain"]
    assert Path(final["best_file"]) == iteration / "champion" / "kernel.cpp"  # slower or wrong never replaces it
    assert final["history"][1]["branches"]["b2"]["correct"] is False
    assert [m["id"] for m in final["ineffective_methods"]] == ["noop.placebo", "memory.prefetch"]

    assert dcuopt("finalize", run_dir) == 0
    summary = (run_dir / "summary.md").read_text()
    assert dcuopt("finalize", run_dir) == 0
    assert (run_dir / "summary.md").read_text() == summary
    assert "| 1 | improved | b1 |" in summary and "| 2 | no_gain | - |" in summary
    assert "**latency.ilp_unroll** (latency, iter 1) - removing it:" in summary
    assert (run_dir / "best_median.svg").read_text().startswith("<svg")
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
def test_close_iter_with_invalid_methods_runs_nothing(project, shared_build_cache, capsys) -> None:
    case = project / "rowsum"
    run_dir = project / "run"
    assert dcuopt("setup", case, "--run-dir", run_dir, "--branches", 1,
                  "--pytest-args", HARNESS_ARGS.format(cache=shared_build_cache)) == 0
    assert dcuopt("open-iter", run_dir) == 0
    capsys.readouterr()
    assert dcuopt("close-iter", run_dir) == 2  # the template has no methods yet
    assert "methods: [] should be non-empty" in capsys.readouterr().err
    assert not (run_dir / "iterv1" / "pytest").exists()
    assert state_of(run_dir)["history"] == []
