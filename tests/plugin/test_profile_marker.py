"""The `profile` mark end to end (pytester, CPU): the branch runs under perf, the record names the kernel
counted, profile.json and state.json carry the result; a bad mark fails naming the bad key. The observer is
registered through a conftest.py implementing `pytest_dcuopt_observers` (as a plugin would)."""
from __future__ import annotations

import json
import platform
import shutil
from pathlib import Path

import pytest

from pytest_dcuopt.profile.backends import PerfBackend
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
    hardware = PerfBackend().hardware_verdict()
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
