"""The `profile` mark end to end (pytester, CPU): the branch runs under perf, the record names the kernel
counted, profile.json and state.json carry the result; a bad mark fails naming the bad key. The observer is
registered through a conftest.py implementing `pytest_dcuopt_observers` (as a plugin would)."""
from __future__ import annotations

import json
import platform
import shutil
from pathlib import Path

import pytest

from pytest_dcuopt.profile.profilers import PerfProfiler
from tests.conftest import KERNELS
from tests.context import skip_if_no_gxx

VADD = KERNELS / "vector_add"
REF = '''import pytest

shapes = {{"a": ("N",), "b": ("N",), "c": ("N",)}}
dim_ranges = {{"N": (1, 5000)}}


def reference(a, b, c, N):
    c.copy_(a + b)


def bytes_moved(N):
    return 12 * N


pytestmark = [{mark}]
'''
CONFTEST = '''from pytest_dcuopt.observe.profile import ProfileObserver


def pytest_dcuopt_observers(config):
    return [ProfileObserver()]
'''


def make_case(root: Path, name: str, mark: str) -> Path:
    case = root / name
    (case / "branches" / "openmp").mkdir(parents=True)
    shutil.copy(VADD / "kernel.cpp", case / "kernel.cpp")
    shutil.copy(VADD / "branches" / "openmp" / "kernel.cpp", case / "branches" / "openmp" / "kernel.cpp")
    (case / "dims.json").write_text(json.dumps({"N": 1 << 20}))
    (case / "ref.py").write_text(REF.format(mark=mark))
    return case


@skip_if_no_gxx
@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not found: `apt-get install linux-perf`")
def test_profile_mark_on_a_cpu_case(pytester: pytest.Pytester, shared_build_cache: Path, tmp_path: Path) -> None:
    good = make_case(tmp_path, "profiled", 'pytest.mark.profile(dims={"N": 1 << 22}, reason="bandwidth check")')
    bad = make_case(tmp_path, "badmark", 'pytest.mark.profile(metric=["instructions"])')
    for case in (good, bad):
        shutil.copytree(case, pytester.path / case.name)
    pytester.makeconftest(CONFTEST)
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess("profiled", "badmark", f"--dcuopt-cache-dir={shared_build_cache}",
                                           f"--dcuopt-run-dir={run_dir}", "-k", "test_profile", "-rs",
                                           "-p", "no:cacheprovider")
    hardware = PerfProfiler().hardware_verdict()
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 2  # both branches of the bad case, naming the key
    result.stdout.fnmatch_lines(["*profile mark (ref.py pytestmark): unknown keyword(s) ?'metric'?; allowed: metrics*"])
    if hardware is None:
        assert outcomes.get("passed") == 2
    else:
        assert outcomes.get("skipped") == 2
        result.stdout.fnmatch_lines(["*profile degraded for profiled/cpu/baseline: perf unavailable: hardware events*"])

    report = json.loads((run_dir / "profile.json").read_text())
    entries = {e["branch"]: e for e in report["profiles"] if e["case"] == "profiled"}
    assert set(entries) == {"baseline", "openmp"}
    baseline = entries["baseline"]
    assert baseline["dims"] == {"N": 1 << 22} and baseline["range"] == "perf-fifo"
    assert baseline["kernels"]["counted"] == [{"kernel": "solve", "index": 0}]
    assert baseline["target"]["calls"] == 2 and baseline["metrics"]["task_clock_s"]["value"] > 0
    assert baseline["roofline"]["inputs"]["bytes_from"] == "ref.py bytes_moved(dims)"
    assert Path(baseline["raw_files"][0]).is_file()
    # host code: the arch is the host's, so the registry's x86 features apply; x86 code has no register counts
    assert baseline["isa_dump"]["arch"] == platform.machine()
    assert baseline["registers"]["functions"] == {} and "no per-function register counts" in baseline["registers"][
        "reason"]

    state = json.loads((run_dir / "state.json").read_text())
    observed = state["cases"]["profiled"]["toolchains"]["cpu"]["branches"]["baseline"]["observations"]["profile"]
    assert observed["kernels_counted"] == ["solve"] and observed["report"] == "profile.json"
    assert observed["outcome"] == ("profiled" if hardware is None else "degraded")


@skip_if_no_gxx
@pytest.mark.skipif(shutil.which("perf") is None, reason="perf not found: `apt-get install linux-perf`")
def test_under_xdist_the_profile_work_folders_land_in_the_controllers_run(
        pytester: pytest.Pytester, shared_build_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this suite may itself run under -n
    case = make_case(tmp_path, "profiled", 'pytest.mark.profile(reason="where the raw files go")')
    shutil.copytree(case, pytester.path / case.name)
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest_subprocess("profiled", f"--dcuopt-cache-dir={shared_build_cache}", "-n", "2",
                                           "-k", "test_profile", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("skipped", 0) == 2, result.stdout.str()
    runs = sorted((pytester.path / ".dcuopt" / "runs").glob("run_*"))
    assert len(runs) == 1, f"one run, one folder; found {[r.name for r in runs]}"
    run = runs[0]
    assert (run / "state.json").is_file()
    report = json.loads((run / "profile.json").read_text())
    workdirs = {e["branch"]: Path(e["workdir"]) for e in report["profiles"]}
    assert set(workdirs) == {"baseline", "openmp"}
    for branch, folder in workdirs.items():
        assert folder == (run / "profile" / f"profiled__cpu__{branch}").resolve()
        assert (folder / "request.pickle").is_file()


WALLTIME = '''"""A profiler from outside pytest_dcuopt: the wall time of the profiled range, no tool."""
from pytest_dcuopt.profile.profilers import RANGE_NONE, Collected
from pytest_dcuopt.profile.kernels import KernelRow
from pytest_dcuopt.profile.metrics import Metric
from pytest_dcuopt.external_tools import run_tool


class WallTime:
    name = "walltime"
    tool = "the profile target's own clock"
    range_kind = RANGE_NONE
    serves = (("cpu", "x86"),)

    def missing(self):
        return None

    def range_request(self, workdir):
        return {}

    def collect(self, job):
        run = run_tool(list(job.target), timeout=job.timeout_s)
        if not run.ok:
            return Collected(runs=[run], failure=run.stderr[-2000:])
        return Collected(rows=[KernelRow("solve", 0), KernelRow("solve", 1)], runs=[run])  # warm-up, profiled

    def normalize(self, rows, collected, target):
        return [Metric("kernel_time_s", float(target["range_wall_s"]), "walltime: the profiled range")]
'''


@skip_if_no_gxx
def test_a_profiler_installed_from_outside_the_package_profiles_the_toolchain_it_serves(
        pytester: pytest.Pytester, shared_build_cache: Path, tmp_path: Path) -> None:
    """A distribution on the path (a .dist-info with an entry point, as `pip install` leaves it) registers a
    profiler under `pytest_dcuopt.profilers`; it serves the cpu toolchain's x86 code, so it replaces perf there."""
    case = make_case(tmp_path, "profiled", 'pytest.mark.profile(reason="through the installed profiler")')
    shutil.copytree(case, pytester.path / case.name)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(walltime_profiler=WALLTIME)
    info = pytester.path / "walltime_profiler-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: walltime-profiler\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest_dcuopt.profilers]\nwalltime = walltime_profiler:WallTime\n")
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess("profiled", f"--dcuopt-cache-dir={shared_build_cache}",
                                           f"--dcuopt-run-dir={run_dir}", "-k", "test_profile", "-rs",
                                           "-p", "no:cacheprovider")
    assert result.parseoutcomes().get("passed") == 2, result.stdout.str()
    entries = json.loads((run_dir / "profile.json").read_text())["profiles"]
    assert [(e["branch"], e["profiler"], e["outcome"]) for e in sorted(entries, key=lambda e: e["branch"])] == [
        ("baseline", "walltime", "profiled"), ("openmp", "walltime", "profiled")]
    assert all(e["metrics"]["kernel_time_s"]["source"] == "walltime: the profiled range" for e in entries)
