"""Worker processes over a run: a case's workers end when the run moves on to another case (their buffers and GPU
contexts are not held while other cases run), and every start after the first takes the spare worker started ahead
(run/spare_workers.py); `--dcuopt-spare-workers 0` turns that off. What is counted is what the OS shows: the worker
supervisors below the pytest process, seen from a hook at each test's setup."""
from __future__ import annotations

import json

import pytest

from tests.conftest import CASES
from tests.plugin.test_end_to_end import state_of

COUNT_WORKERS = '''
import json, os
from pathlib import Path


def live_worker_supervisors():
    """Children of this pytest process that carry a worker token (one per started worker, spare included)."""
    found = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        parent = int(stat[stat.rfind(")") + 2:].split()[1])
        if parent == os.getpid() and b"DCUOPT_WORKER_TOKEN=" in environ:
            found += 1
    return found


def pytest_runtest_setup(item):
    with open(Path(str(item.config.rootpath)) / "live.jsonl", "a") as out:
        out.write(json.dumps({"test": item.nodeid, "workers": live_worker_supervisors()}) + "\\n")
'''


def live_counts(pytester: pytest.Pytester) -> list[dict]:
    return [json.loads(line) for line in (pytester.path / "live.jsonl").read_text().splitlines()]


def worker_starts(state: dict, case: str) -> dict[str, dict]:
    branches = state["cases"][case]["toolchains"]["cpu"]["branches"]
    return {name: branch["device"].get("worker_start") for name, branch in branches.items() if branch["device"]}


@pytest.mark.parametrize("spares", [2, 0], ids=["two-spares", "no-spares"])
def test_a_cases_workers_end_when_the_run_moves_on_and_later_starts_take_the_spare(
        run_plugin, pytester: pytest.Pytester, spares: int) -> None:
    pytester.makeconftest(COUNT_WORKERS)
    args = ("--dcuopt-toolchain=cpu", "-p", "no:randomly", f"--dcuopt-spare-workers={spares}")
    spare = spares > 0
    result = run_plugin(CASES / "xdist_merge", CASES / "inplace_reverse", args=args)
    result.assert_outcomes(passed=4, failed=1, skipped=1)  # drops_tail fails its correctness test, as designed
    rows = live_counts(pytester)
    first_of_second_case = next(row for row in rows if row["test"].startswith("inplace_reverse"))
    # xdist_merge's two workers have ended; what is left are the spares started after its last worker's load
    assert first_of_second_case["workers"] == spares, rows
    assert max(row["workers"] for row in rows) == 2 + spares, rows  # both branches of a case live at once

    state = state_of(pytester)
    first, later = worker_starts(state, "xdist_merge"), worker_starts(state, "inplace_reverse")
    assert set(first) == set(later) == {"baseline"}  # a timed branch records its worker's start (not drops_tail)
    assert first["baseline"]["spare"] is False  # the run's first start
    assert later["baseline"]["spare"] is spare  # started after xdist_merge's workers: the spare, when there is one
    assert all(start["seconds"] > 0 for start in (first["baseline"], later["baseline"]))
    assert state["options"]["spare_workers"] == spares
