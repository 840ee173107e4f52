"""The plugin run for real (pytester subprocesses) on the fixture cases in tests/data/cases."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from pytest_dcuopt.report.state import validate_state
from tests.conftest import CASES, FAST


def state_of(pytester: pytest.Pytester) -> dict:
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    validate_state(state)
    return state


def branches(state: dict, case: str, toolchain: str = "cpu") -> dict:
    return state["cases"][case]["toolchains"][toolchain]["branches"]


def test_broken_branches_fail_with_shrunk_examples(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "tail_ignoring", CASES / "unwritten", CASES / "square_only",
                        args=("-k", "correctness"))
    result.assert_outcomes(passed=4, failed=3, deselected=7)
    state = state_of(pytester)

    tail = branches(state, "tail_ignoring")["vec8_no_tail"]["failure"]
    assert tail["dims"]["N"] % 8 != 0 and tail["dims"]["N"] < 8  # shrunk to a tiny tail-only size
    assert "never written" in tail["message"]
    assert tail["reproduce"].startswith(f"'{sys.executable}' -m pytest "
                                        "'tail_ignoring/ref.py::test_correctness_cpu[vec8_no_tail]'")

    unwritten = branches(state, "unwritten")["skips_last"]["failure"]
    assert unwritten["dims"] == {"N": 1} and "1 never written" in unwritten["message"]

    square = branches(state, "square_only")["assumes_square"]["failure"]
    dims = square["dims"]
    assert len({dims["M"], dims["N"], dims["K"]}) > 1  # only a non-square shape exposes it
    assert max(dims.values()) <= 3  # and Hypothesis shrank it to a tiny one

    for case, good in (("tail_ignoring", "vec8_with_tail"), ("tail_ignoring", "baseline"), ("unwritten", "baseline")):
        assert branches(state, case)[good]["correct"] is True
    result.stdout.fnmatch_lines(["*is wrong for dims=*",
                                 "*reproduce: *python* -m pytest *--dcuopt-dims=*--dcuopt-seed=*"])


def test_replaying_the_reported_example(run_plugin) -> None:
    result = run_plugin(CASES / "tail_ignoring", args=("-k", "correctness and vec8", "--dcuopt-dims={\"N\": 13}",
                                                      "--dcuopt-seed=7"))
    result.assert_outcomes(passed=1, failed=1, deselected=4)
    result.stdout.fnmatch_lines(["*vec8_no_tail is wrong for dims={\"N\": 13} seed=7*"])


def test_segfault_and_hang_fail_alone_and_the_rest_is_reported(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "segfault", CASES / "hang", args=("--dcuopt-timeout=3",))
    result.assert_outcomes(passed=8, failed=2, skipped=2)
    result.stdout.fnmatch_lines(["*null_write: the kernel's worker process died with signal SIGSEGV*"])
    result.stdout.fnmatch_lines(["*spin_forever: the kernel did not return within 3 s*"])
    state = state_of(pytester)
    for case, bad in (("segfault", "null_write"), ("hang", "spin_forever")):
        found = branches(state, case)
        assert found[bad]["correct"] is False and found[bad]["timing"] is None
        assert found[bad]["skipped"].startswith("not benchmarked")
        for good in ("baseline", "ok"):
            assert found[good]["correct"] is True
            assert found[good]["timing"]["median_ms"] > 0 and found[good]["timing"]["rounds"] >= 3
    assert (pytester.path / "run" / "summary.md").read_text().count("## ") >= 2


def test_state_and_summary_describe_every_branch(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "tail_ignoring")
    assert result.ret == 1
    state = state_of(pytester)
    found = branches(state, "tail_ignoring")
    assert set(found) == {"baseline", "vec8_no_tail", "vec8_with_tail"}
    base = found["baseline"]
    assert base["build"]["command"].split()[0].endswith(("g++", "c++")) and "-O3" in base["build"]["command"]
    assert base["speedup_vs_baseline"] == 1.0 and base["throughput"]["gbps"] > 0
    champion = state["cases"]["tail_ignoring"]["toolchains"]["cpu"]["champion"]
    assert champion in ("baseline", "vec8_with_tail") and found[champion]["champion"] is True
    summary = (pytester.path / "run" / "summary.md").read_text()
    assert "## tail_ignoring (cpu)" in summary and "**vec8_no_tail** is incorrect" in summary
    result.stdout.fnmatch_lines(["*dcuopt: branches per case*", "tail_ignoring [[]cpu[]]  champion: *"])


def test_benchmark_json_carries_the_measured_samples(run_plugin, pytester: pytest.Pytester) -> None:
    out = pytester.path / "bench.json"
    result = run_plugin(CASES / "signature_edge", args=("-k", "benchmark", f"--benchmark-json={out}"))
    result.assert_outcomes(passed=2, deselected=2)
    bench = json.loads(out.read_text())
    state = state_of(pytester)
    for entry in bench["benchmarks"]:
        branch = entry["param"]
        timing = branches(state, "signature_edge")[branch]["timing"]
        assert entry["group"] == "signature_edge/cpu"
        assert entry["stats"]["rounds"] == timing["rounds"]
        assert entry["stats"]["median"] * 1e3 == pytest.approx(timing["median_ms"], rel=1e-4)
        assert entry["extra_info"]["dcuopt_timer"] == "host perf_counter_ns"


def test_xdist_workers_report_to_one_state_file(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "signature_edge", CASES / "python_scale", args=("-n", "2"))
    result.assert_outcomes(passed=6)
    state = state_of(pytester)
    assert set(branches(state, "signature_edge")) == {"baseline", "omp_simd"}
    assert branches(state, "python_scale", "python")["baseline"]["correct"] is True


def test_python_toolchain_kernel(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "python_scale", args=("--dcuopt-toolchain=python",))
    result.assert_outcomes(passed=2)
    assert branches(state_of(pytester), "python_scale", "python")["baseline"]["timing"]["rounds"] >= 3


def test_missing_compiler_skips_with_the_reason(run_plugin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler-dcuopt")
    result = run_plugin(CASES / "signature_edge", args=("-rs",))
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines(["*cpu toolchain cannot run kernels here: no C++ compiler*apt-get install g++*"])


def make_case(root: Path, ref: str, dims: str, kernel: str) -> Path:
    root.mkdir()
    (root / "ref.py").write_text(ref)
    (root / "dims.json").write_text(dims)
    (root / "kernel.cpp").write_text(kernel)
    return root


GOOD_REF = "def reference(x, y, N):\n    y.copy_(x)\n"
GOOD_KERNEL = 'extern "C" void solve(const float* x, float* y, int N) { for (int i = 0; i < N; ++i) y[i] = x[i]; }\n'


@pytest.mark.parametrize(("ref", "dims", "kernel", "message"), [
    ("x = 1\n", '{"N": 8}', GOOD_KERNEL, "*defines no callable `reference(**kwargs)`*"),
    ("raise ImportError('nope')\n", '{"N": 8}', GOOD_KERNEL, "*importing*ref.py raised ImportError: nope*"),
    (GOOD_REF, '{"N": 8,', GOOD_KERNEL, "*dims.json is not valid JSON*"),
    (GOOD_REF, '{"N": "big"}', GOOD_KERNEL, "*dim 'N' = 'big' is not a number*"),
    (GOOD_REF, '{"N": 8}', 'extern "C" void solve(const float* x, thing_t* y, int N) {}', "*parameter 2*thing_t*"),
    (GOOD_REF, '{"N": 8}', 'extern "C" void solve(const float* x, float* y, int N) { undeclared(); }',
     "*error:*undeclared*was not declared*"),
    ("def reference(x, y, N):\n    raise ValueError('bad ref')\n", '{"N": 8}', GOOD_KERNEL,
     "*reference(**kwargs) raised ValueError: bad ref*"),
])
def test_bad_input_gets_a_clear_error(pytester: pytest.Pytester, shared_build_cache: Path,
                                      ref: str, dims: str, kernel: str, message: str) -> None:
    make_case(pytester.path / "bad", ref, dims, kernel)
    result = pytester.runpytest_subprocess("bad", f"--dcuopt-cache-dir={shared_build_cache}", *FAST,
                                           "--dcuopt-run-dir=run")
    assert result.ret == 1
    result.stdout.fnmatch_lines([message])


def test_seed_run_directory_is_a_case(pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    """The original skill's run_*/ layout: state.json, baseline/<file>, iterv<i>/branches/b<k>/kernel.<ext>."""
    source = CASES / "signature_edge"
    shutil.copy(source / "ref.py", pytester.path / "ref.py")
    run = pytester.path / "run_20260101_000000"
    (run / "baseline").mkdir(parents=True)
    shutil.copy(source / "kernel.cpp", run / "baseline" / "kernel.cpp")
    (run / "iterv1" / "branches" / "b1").mkdir(parents=True)
    shutil.copy(source / "branches" / "omp_simd" / "kernel.cpp", run / "iterv1" / "branches" / "b1" / "kernel.cpp")
    dims = json.loads((source / "dims.json").read_text())
    (run / "state.json").write_text(json.dumps({"ref_file": str(pytester.path / "ref.py"), "dims": dims}))
    result = pytester.runpytest_subprocess(run.name, f"--dcuopt-cache-dir={shared_build_cache}", *FAST,
                                           "--dcuopt-run-dir=out", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_correctness_cpu[[]iterv1-b1[]] PASSED*"])


def test_help_documents_every_option(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*kernel correctness and benchmarks (pytest_dcuopt)*", "*--dcuopt-toolchain=NAMES*",
                                 "*--dcuopt-run-dir=DIR*", "*--dcuopt-timeout=SECONDS*",
                                 "*fails its branch. Default: 60*"])
    markers = pytester.runpytest_subprocess("--markers")
    markers.stdout.fnmatch_lines(["*@pytest.mark.dcuopt(case, toolchain)*"])


def test_bad_option_values_are_rejected(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--dcuopt-timeout=-1")
    result.stderr.fnmatch_lines(["*'-1' must be greater than 0*"])
    result = pytester.runpytest_subprocess("--dcuopt-seed=3")
    result.stderr.fnmatch_lines(["*--dcuopt-seed replays one example and needs --dcuopt-dims too*"])


def test_hand_written_test_beside_a_case(pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    shutil.copytree(CASES / "tail_ignoring", pytester.path / "tail_ignoring")
    (pytester.path / "tail_ignoring" / "test_sizes.py").write_text(
        "def test_multiples_of_eight(dcuopt_case):\n"
        "    for n in (8, 64, 1000):\n"
        "        dcuopt_case.check('vec8_no_tail', {'N': n})\n"
        "\n"
        "def test_odd_size(dcuopt_case):\n"
        "    dcuopt_case.check('vec8_no_tail', {'N': 9}, seed=3)\n"
        "\n"
        "def test_unknown_branch(dcuopt_case):\n"
        "    dcuopt_case.check('nope')\n")
    result = pytester.runpytest_subprocess("tail_ignoring/test_sizes.py", f"--dcuopt-cache-dir={shared_build_cache}",
                                           *FAST, "--dcuopt-run-dir=run")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*vec8_no_tail is wrong for dims={\"N\": 9} seed=3*"])
    result.stdout.fnmatch_lines(
        ["*has no branch 'nope'; branches: [[]'baseline', 'vec8_no_tail', 'vec8_with_tail'[]]*"])
    result.stdout.no_fnmatch_line("*During handling*")


def test_interleaved_ab_decides_the_speedup(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "signature_edge", args=("-k", "benchmark", "--dcuopt-interleave=3"))
    result.assert_outcomes(passed=2, deselected=2)
    found = branches(state_of(pytester), "signature_edge")
    ab = found["omp_simd"]["timing"]["interleaved"]
    assert ab["rounds"] == 3 and min(ab["samples"]) >= 9  # at least 3 samples per round per side
    assert found["omp_simd"]["speedup_vs_baseline"] == pytest.approx(ab["speedup"])
    assert "interleaved" not in found["baseline"]["timing"]


def test_the_old_backend_option_still_selects_toolchains_and_says_it_is_deprecated(
        run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASES / "unwritten", args=("--dcuopt-backend=cpu", "-k", "correctness and baseline"))
    result.assert_outcomes(passed=1, deselected=3)  # benchmark x2 and the other branch's correctness
    result.stdout.fnmatch_lines(["*--dcuopt-backend is the old name of --dcuopt-toolchain*"])
    assert list(state_of(pytester)["cases"]["unwritten"]["toolchains"]) == ["cpu"]
