"""The plugin's own hooks (hookspec.py) fire where docs/architecture.md says, and writing results is robust."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CASES

HOOKS_CONFTEST = '''
import json, pathlib
LOG = pathlib.Path(__file__).parent / "hooks.jsonl"

def _log(**entry):
    with LOG.open("a") as handle:
        handle.write(json.dumps(entry) + "\\n")

def pytest_dcuopt_branch_built(variant, config):
    _log(hook="built", branch=variant.branch.name, ok=variant.setup_error is None,
         command=variant.artifact.command if variant.artifact else None)

def pytest_dcuopt_branch_checked(variant, config, failure):
    _log(hook="checked", branch=variant.branch.name, failed=failure is not None)

def pytest_dcuopt_branch_timed(variant, config, samples):
    _log(hook="timed", branch=variant.branch.name, samples=len(samples.seconds))

def pytest_dcuopt_update_branch_record(record, config):
    record.observations["from_hook"] = record.branch

def pytest_dcuopt_state_written(state, run_dir, config):
    _log(hook="written", run_dir=str(run_dir), cases=sorted(state["cases"]))
'''


def hook_log(pytester: pytest.Pytester) -> list[dict]:
    return [json.loads(line) for line in (pytester.path / "hooks.jsonl").read_text().splitlines()]


def test_every_hook_fires_with_the_branch_it_is_about(run_plugin, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(HOOKS_CONFTEST)
    result = run_plugin(CASES / "unwritten")
    result.assert_outcomes(passed=2, failed=1, skipped=1)  # skips_last fails correctness, so it is not timed
    log = hook_log(pytester)
    built = {e["branch"]: e for e in log if e["hook"] == "built"}
    assert set(built) == {"baseline", "skips_last"} and all(e["ok"] and "g++" in e["command"] for e in built.values())
    checked = {e["branch"]: e["failed"] for e in log if e["hook"] == "checked"}
    assert checked == {"baseline": False, "skips_last": True}
    timed = [e for e in log if e["hook"] == "timed"]
    assert [e["branch"] for e in timed] == ["baseline"] and timed[0]["samples"] >= 3
    written = [e for e in log if e["hook"] == "written"]
    assert len(written) == 1 and written[0]["cases"] == ["unwritten"]
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    branches = state["cases"]["unwritten"]["toolchains"]["cpu"]["branches"]
    assert {name: b["observations"]["from_hook"] for name, b in branches.items()} == {
        "baseline": "baseline", "skips_last": "skips_last"}


def test_a_failing_step_of_writing_results_keeps_the_others_and_fails_the_run(
        run_plugin, pytester: pytest.Pytester) -> None:
    pytester.makeconftest('''
def pytest_dcuopt_update_branch_record(record, config):
    raise RuntimeError("hook broke on " + record.branch)
''')
    result = run_plugin(CASES / "unwritten", args=("-k", "baseline"))
    assert result.ret != 0  # every test passed, but the results are incomplete: the run must not look green
    result.stdout.fnmatch_lines(["*writing the run's results failed in part*", "*hook broke on baseline*"])
    run_dir: Path = pytester.path / "run"
    state = json.loads((run_dir / "state.json").read_text())
    assert state["cases"]["unwritten"]["toolchains"]["cpu"]["branches"]["baseline"]["correct"] is True
    assert (run_dir / "summary.md").is_file()
