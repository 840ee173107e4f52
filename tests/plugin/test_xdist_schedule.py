"""`pytest -n 2` hands a branch's tests to one worker (run/schedule.py): its benchmarks at every size run where its
correctness test ran, so no other worker starts it and checks it again before timing; a branch whose baseline ran on
the other worker still gets its interleaved A/B (stages.baseline_for). Real runs, read from `-v` and state.json."""
from __future__ import annotations

import json
import re
import shutil
from collections import defaultdict

import pytest

from tests.conftest import CASES, FAST

RESULT_LINE = re.compile(r"^\[(gw\d+)\] .*?(?:PASSED|FAILED|SKIPPED|ERROR) (\S+::test_\w+\[[^\]]+\])", re.MULTILINE)


def workers_per_branch(output: str) -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for worker, nodeid in RESULT_LINE.findall(output):
        branch = nodeid.split("[", 1)[1].split("-", 1)[0].rstrip("]")
        seen[branch].add(worker)
    return dict(seen)


@pytest.fixture
def run_sweep(pytester: pytest.Pytester, shared_build_cache, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DCUOPT_LOCK_DIR", str(pytester.path / "locks"))
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    def run(*args: str, case: str = "bench_sizes") -> pytest.RunResult:
        if not (pytester.path / case).exists():
            shutil.copytree(CASES / case, pytester.path / case)
        return pytester.runpytest_subprocess(case, "-n", "2", "-v", "--dcuopt-toolchain=cpu",
                                             f"--dcuopt-cache-dir={shared_build_cache}",
                                             f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, *args)

    return run


def test_each_branchs_tests_run_on_one_worker(run_sweep) -> None:
    result = run_sweep("--dcuopt-interleave=0")
    result.assert_outcomes(passed=8, failed=1)  # wrong_past_64k is wrong at the large size only, as designed
    seen = workers_per_branch(result.stdout.str())
    assert set(seen) == {"baseline", "unrolled4", "wrong_past_64k"}, result.stdout.str()[-3000:]
    assert all(len(workers) == 1 for workers in seen.values()), seen
    assert set().union(*seen.values()) == {"gw0", "gw1"}, seen  # and both workers had work


def test_xdists_own_scheduling_is_kept_on_request(run_sweep) -> None:
    result = run_sweep("--dcuopt-xdist-schedule=xdist", "--dcuopt-interleave=0")
    result.assert_outcomes(passed=8, failed=1)
    seen = workers_per_branch(result.stdout.str())
    assert set(seen) == {"baseline", "unrolled4", "wrong_past_64k"}  # every test ran; where is xdist's choice


def test_the_ab_against_a_baseline_that_ran_on_the_other_worker(run_sweep, pytester: pytest.Pytester) -> None:
    """Two branches, two workers: one unit each, so the baseline's tests always run on the other worker. The
    branch's benchmark builds the baseline from the cache, checks it once at the default dims and times the pair
    under the lock, as a serial run does. far_apart's `direct` is tens of times faster than its baseline, so the
    A/B's direction shows whatever the machine's load (the A/B's arithmetic is unit-tested)."""
    result = run_sweep(case="far_apart")
    result.assert_outcomes(passed=4)
    seen = workers_per_branch(result.stdout.str())
    assert len(seen["baseline"]) == len(seen["direct"]) == 1 and seen["baseline"] != seen["direct"], seen
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    branches = state["cases"]["far_apart"]["toolchains"]["cpu"]["branches"]
    interleaved = branches["direct"]["timing"]["interleaved"]
    assert interleaved["rounds"] >= 1 and interleaved["speedup"] > 4, interleaved
    assert interleaved["device_lock"]["held"]
    assert branches["direct"]["speedup_vs_baseline"] == pytest.approx(interleaved["speedup"], rel=1e-3)
    assert branches["baseline"]["correct"] is True and branches["baseline"]["timing"] is not None


def test_the_controller_removes_the_calibrations_its_workers_shared(run_sweep, pytester: pytest.Pytester) -> None:
    shared = pytester.path / "locks" / "calibrations-0123abcd"  # what the workers of run 0123abcd write (GPU only)
    shared.mkdir(parents=True)
    (shared / "gpu-0.json").write_text("{}")
    result = run_sweep("--testrunuid=0123abcd", "-k", "test_correctness_cpu and baseline")  # removed whatever ran
    assert result.ret in (0, 1), result.stdout.str()[-2000:]
    assert not shared.exists()
