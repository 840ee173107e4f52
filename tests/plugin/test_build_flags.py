"""Build flags take one route: a flag given with --dcuopt-flags is what the branch's build, its worker's load, the
ablated builds (the run's flags, then the switch) and the profile target's load all take.

The toolchain and the profiler are installed from outside the package (a .dist-info with entry points in the run's
folder, as `pip install` leaves it): the cpu toolchain under another name that writes, at each build and load, the
flags it holds and the build it is handed; a profiler that runs the profile target and times the range."""
from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST
from tests.context import skip_if_no_gxx
from tests.plugin.test_profile_marker import WALLTIME

PROBE = "-DDCUOPT_FLAG_PROBE=7"
FLAGGED = '''
import json, sys
from pathlib import Path

from pytest_dcuopt.toolchains.cpu import CpuToolchain

LOG = Path(__file__).with_name("flags.jsonl")


def _log(where, flags, artifact):
    with LOG.open("a") as handle:
        handle.write(json.dumps({"where": where, "flags": list(flags), "key": artifact.key}) + "\\n")


class FlaggedCpu(CpuToolchain):
    name = "flagged"

    def build(self, source, cache):
        artifact = super().build(source, cache)
        _log("build", self.extra_flags, artifact)
        return artifact

    def load(self, artifact, params):
        _log(sys.modules["__main__"].__spec__.name, self.extra_flags, artifact)
        return super().load(artifact, params)
'''
ENTRY_POINTS = ("[pytest_dcuopt.toolchains]\nflagged = flagged_toolchain:FlaggedCpu\n\n"
                "[pytest_dcuopt.profilers]\nwalltime = walltime_profiler:WallTime\n")


@skip_if_no_gxx
def test_a_flag_reaches_the_build_the_worker_the_ablation_and_the_profile_alike(
        pytester: pytest.Pytester, shared_build_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this suite may itself run under -n
    (pytester.path / "flagged_toolchain.py").write_text(FLAGGED)
    (pytester.path / "walltime_profiler.py").write_text(WALLTIME.replace('("cpu", "x86")', '("flagged", "x86")'))
    info = pytester.path / "flagged_toolchain-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: flagged-toolchain\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    case = pytester.path / "ablation_rowsum"
    shutil.copytree(CASES / "ablation_rowsum", case)
    ref = case / "ref.py"
    ref.write_text(ref.read_text() + '\npytestmark = [pytest.mark.profile(reason="the flags of the target")]\n')
    result = pytester.runpytest_subprocess(
        "ablation_rowsum", "--dcuopt-toolchain=flagged", f"--dcuopt-flags={PROBE}",
        "-k", "test_correctness or test_ablation or test_profile", f"--dcuopt-cache-dir={shared_build_cache}",
        f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, "-rs")
    result.assert_outcomes(passed=5)  # 2 correctness, 1 ablation, 2 profiles

    entries = [json.loads(line) for line in (pytester.path / "flags.jsonl").read_text().splitlines()]
    built: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for entry in entries:
        if entry["where"] == "build":
            built[entry["key"]].add(tuple(entry["flags"]))
    ablated = {(PROBE, "-DDCUOPT_NO_UNROLL"), (PROBE, "-DDCUOPT_NO_PLACEBO"),
               (PROBE, "-DDCUOPT_NO_UNROLL", "-DDCUOPT_NO_PLACEBO")}
    assert set().union(*built.values()) == {(PROBE,), *ablated}, dict(built)
    assert all(len(flags) == 1 for flags in built.values()), dict(built)  # a build's key says its flags
    loads = [e for e in entries if e["where"] != "build"]
    assert {e["where"] for e in loads} == {"pytest_dcuopt.run.worker", "pytest_dcuopt.run.profile_target"}
    for load in loads:  # every load holds the flags its artifact was built with
        assert built[load["key"]] == {tuple(load["flags"])}, (load, dict(built))
    worker_loaded = {tuple(e["flags"]) for e in loads if e["where"] == "pytest_dcuopt.run.worker"}
    assert worker_loaded == {(PROBE,), *ablated}
    assert {tuple(e["flags"]) for e in loads if e["where"] == "pytest_dcuopt.run.profile_target"} == {(PROBE,)}
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    commands = [b["build"]["command"] for b in state["cases"]["ablation_rowsum"]["toolchains"]["flagged"][
        "branches"].values()]
    assert len(commands) == 2 and all(PROBE in command for command in commands), commands
