"""Parallel sweeps with benchmarks on (docs/gating.md "Parallel sweeps"): measurements on one device are
exclusive across xdist workers and across pytest sessions, and say so in their records; `-n 2` finds what `-n 0`
finds. Black-box: real pytest runs in subprocesses, then their state.json files. The lock directory is the test's own
($DCUOPT_LOCK_DIR), so other pytest sessions on this host neither wait for these runs nor disturb them."""
from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES, FAST

Hold = tuple[float, float, str]  # acquired_at, released_at, what held it


@pytest.fixture(autouse=True)
def own_lock_dir(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = pytester.path / "locks"
    monkeypatch.setenv("DCUOPT_LOCK_DIR", str(folder))
    return folder


def copy_cases(pytester: pytest.Pytester, *cases: Path) -> list[str]:
    for case in cases:
        if not (pytester.path / case.name).exists():
            shutil.copytree(case, pytester.path / case.name)
    return [case.name for case in cases]


def state_of(pytester: pytest.Pytester, run_dir: str) -> dict[str, Any]:
    return json.loads((pytester.path / run_dir / "state.json").read_text())


def records(state: dict[str, Any]) -> Iterator[tuple[tuple[str, str, str], dict[str, Any]]]:
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            for branch, record in result["branches"].items():
                yield (case, toolchain, branch), record


def holds(state: dict[str, Any], session: str) -> list[Hold]:
    """Every recorded hold of the device lock: each branch's timing and each interleaved A/B."""
    found = []
    for key, record in records(state):
        timing = record.get("timing") or {}
        for what, lock in (("timing", timing.get("device_lock")),
                           ("A/B", (timing.get("interleaved") or {}).get("device_lock"))):
            if lock is not None:
                assert lock["held"], (session, key, what, lock)
                found.append((lock["acquired_at"], lock["released_at"], f"{session} {'/'.join(key)} {what}"))
    return found


def overlaps(found: list[Hold]) -> list[tuple[Hold, Hold]]:
    return [(a, b) for a, b in itertools.combinations(sorted(found), 2) if b[0] < a[1]]


def test_two_sessions_started_at_once_never_time_at_the_same_moment(
        pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    names = copy_cases(pytester, CASES / "gate_slowdown")  # five correct CPU branches, four A/B runs
    sessions = {
        run_dir: subprocess.Popen(
            # Benchmarks only: checked calls hold the lock shared, so a session's correctness tests would pause for
            # every timing of the other, which would then finish its timings first and nothing would be contended.
            [sys.executable, "-m", "pytest", *names, f"--dcuopt-cache-dir={shared_build_cache}",
             f"--dcuopt-run-dir={pytester.path / run_dir}", *FAST, "-p", "no:xdist", "-k", "benchmark"],
            cwd=pytester.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for run_dir in ("first", "second")}
    outputs = {run_dir: process.communicate(timeout=600)[0] for run_dir, process in sessions.items()}
    for run_dir, process in sessions.items():
        assert process.returncode == 0, outputs[run_dir][-3000:]

    found: dict[str, list[Hold]] = {}
    for run_dir in sessions:
        state = state_of(pytester, run_dir)
        timed = {key[2]: record for key, record in records(state)}
        assert set(timed) == {"baseline", "steady", "slows_down", "speeds_up", "breaks"}  # complete: nothing lost
        assert all(record["correct"] is not False and record["timing"] for record in timed.values()), timed
        assert state["options"]["host_lock"] is True
        found[run_dir] = holds(state, run_dir)
        assert len(found[run_dir]) == 5 + 4, found[run_dir]  # every timing and every A/B held the lock

    first, second = found["first"], found["second"]
    assert min(h[0] for h in first) < max(h[1] for h in second) and min(h[0] for h in second) < max(
        h[1] for h in first), "the two sessions did not time during a common period: nothing was tested"
    assert overlaps(first + second) == []


def test_n2_finds_what_n0_finds_and_times_under_the_lock(
        pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    # Two small CPU cases with verdicts that do not depend on noise: in far_apart `direct` is tens of times faster
    # than the baseline (a load's swings are a few-fold); in xdist_merge `drops_tail` is wrong.
    names = copy_cases(pytester, CASES / "far_apart", CASES / "xdist_merge")
    states = {}
    for workers in ("0", "2"):
        result = pytester.runpytest_subprocess(*names, f"--dcuopt-cache-dir={shared_build_cache}",
                                               f"--dcuopt-run-dir={pytester.path / ('n' + workers)}", *FAST,
                                               "-n", workers)
        # drops_tail fails correctness; its benchmark skips when it runs after that in the same process, else (another
        # xdist worker) it fails on the boundary dims checked before timing.
        outcomes = result.parseoutcomes()
        assert (outcomes.get("passed"), outcomes.get("failed", 0) + outcomes.get("skipped", 0)) == (6, 2), outcomes
        result.stdout.fnmatch_lines(["FAILED xdist_merge/ref.py::test_correctness_cpu?drops_tail?*"])
        states[workers] = state_of(pytester, "n" + workers)
    serial, parallel = dict(records(states["0"])), dict(records(states["2"]))
    assert set(serial) == set(parallel) == {("far_apart", "cpu", "baseline"), ("far_apart", "cpu", "direct"),
                                            ("xdist_merge", "cpu", "baseline"), ("xdist_merge", "cpu", "drops_tail")}
    for key, record in serial.items():
        other = parallel[key]
        assert (other["correct"], other["champion"], other["timing"] is None) == (
            record["correct"], record["champion"], record["timing"] is None), key
    for state in states.values():
        assert {case: data["toolchains"]["cpu"]["champion"] for case, data in state["cases"].items()} == \
            {"far_apart": "direct", "xdist_merge": "baseline"}

    for workers, found in (("0", serial), ("2", parallel)):
        timed = {key: record["timing"] for key, record in found.items() if record["timing"]}
        assert len(timed) == 3, sorted(timed)
        assert {timing["concurrent_workers"] for timing in timed.values()} == {int(workers) or 1}
        assert all(timing["device_lock"]["held"] and timing["device_lock"]["name"] == "host-cpu"
                   for timing in timed.values()), timed
    assert overlaps(holds(states["2"], "-n 2")) == []  # the two workers never timed at once
