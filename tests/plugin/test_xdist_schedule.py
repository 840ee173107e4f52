"""`pytest -n 2` hands a branch's tests to one worker (run/schedule.py): its benchmarks at every size run where its
correctness test ran, so no other worker starts it and checks it again before timing. Real runs, read from `-v`."""
from __future__ import annotations

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
    shutil.copytree(CASES / "bench_sizes", pytester.path / "bench_sizes")

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess("bench_sizes", "-n", "2", "-v", "--dcuopt-toolchain=cpu",
                                             "--dcuopt-interleave=0", f"--dcuopt-cache-dir={shared_build_cache}",
                                             f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, *args)

    return run


def test_each_branchs_tests_run_on_one_worker(run_sweep) -> None:
    result = run_sweep()
    result.assert_outcomes(passed=8, failed=1)  # wrong_past_64k is wrong at the large size only, as designed
    seen = workers_per_branch(result.stdout.str())
    assert set(seen) == {"baseline", "unrolled4", "wrong_past_64k"}, result.stdout.str()[-3000:]
    assert all(len(workers) == 1 for workers in seen.values()), seen
    assert set().union(*seen.values()) == {"gw0", "gw1"}, seen  # and both workers had work


def test_xdists_own_scheduling_is_kept_on_request(run_sweep) -> None:
    result = run_sweep("--dcuopt-xdist-schedule=xdist")
    result.assert_outcomes(passed=8, failed=1)
    seen = workers_per_branch(result.stdout.str())
    assert set(seen) == {"baseline", "unrolled4", "wrong_past_64k"}  # every test ran; where is xdist's choice
