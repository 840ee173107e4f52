"""The `dcuopt_probe` fixture: a test compile-probes a builtin call shape and the probe stays in the run dir."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_dcuopt.toolchains.hip import HipToolchain

TEST = '''
def test_lane_builtin(dcuopt_probe):
    record = dcuopt_probe("i32[0] = __builtin_amdgcn_readfirstlane(i32[1])", "gfx90a")
    assert record["status"] == "available", record
    missing = dcuopt_probe("i32[0] = __builtin_amdgcn_no_such_lane_op(i32[1])", "gfx90a")
    assert missing["status"] == "unavailable" and "undeclared identifier" in missing["compiler_message"]
'''


@pytest.mark.skipif(HipToolchain("gfx90a").compiler() is None, reason="no hipcc on this machine")
def test_a_test_probes_builtins_into_the_run_dir(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_probe=TEST)
    run_dir = tmp_path / "run"
    pytester.runpytest_subprocess(f"--dcuopt-run-dir={run_dir}", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    probes = json.loads((run_dir / "probes" / "probes.json").read_text())["probes"]
    assert [p["status"] for p in probes] == ["available", "unavailable"]
    assert all((run_dir / "probes" / p["log"]).is_file() for p in probes)
