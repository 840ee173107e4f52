"""`dcuopt triton ...` end to end on this CPU machine, on material recorded on one NVIDIA H200
(tests/data/triton_inductor_h200) and Triton AOT builds (tests/data/triton_aot); and a captured kernel made
into a harness case that the plugin tests in Triton's interpreter.

Every `next:` command a step prints is run as printed (with this interpreter's bin folder on PATH, where the
`dcuopt` console script is installed)."""
from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
H200 = DATA / "triton_inductor_h200"
GELU = "triton_poi_fused_gelu_2"
BIN = Path(sys.executable).parent
_MISSING = [name for name in ("triton", "torch") if importlib.util.find_spec(name) is None]


def dcuopt(cwd: Path, *argv: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([sys.executable, "-m", "pytest_dcuopt.cli.main", "triton", *map(str, argv)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def run_printed(cwd: Path, stdout: str) -> subprocess.CompletedProcess[str]:
    line = next(line for line in stdout.splitlines() if line.startswith("next: "))
    argv = shlex.split(line[len("next: "):])
    assert argv[0] == "dcuopt" or Path(argv[0]).name.startswith("python"), line
    if argv[0] == "dcuopt" and shutil.which("dcuopt", path=str(BIN)) is None:
        pytest.skip(f"the dcuopt console script is not installed in {BIN} (pip install the package)")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_summarize_collect_scan_inspect_report_on_the_h200_recording(tmp_path: Path) -> None:
    summary = dcuopt(tmp_path, "summarize", H200 / "inductor.log", "--json", "s.json", "--markdown", "s.md")
    assert summary.returncode == 0, summary.stderr
    assert (f"{GELU} (inductor log): 2 configs, best XBLOCK: 512, num_warps: 8, num_ctas: 1, num_stages: 1, "
            "maxnreg: None at 0.1716 ms") in summary.stdout
    collected = dcuopt(tmp_path, "collect", "--cache", H200 / "cache", "--kernel", GELU, "--log",
                       H200 / "inductor.log", "--out", "art")
    assert collected.returncode == 0, collected.stderr
    assert "2 compiled variant(s) (1 matching the winner)" in collected.stdout
    printed = run_printed(tmp_path, collected.stdout)  # the scan it proposes
    from pytest_dcuopt.toolchains.cuda import find_cuobjdump

    if find_cuobjdump() is not None:
        assert printed.returncode == 0, printed.stderr
        assert "global_load/16b x1, global_store/16b x1" in printed.stdout
    inspected = dcuopt(tmp_path, "inspect", next((tmp_path / "art" / "generated").glob("coyl*.py")), "--json",
                       "meta.json")
    assert "in_out_ptr0:*fp16 [div=16 range=-]" in inspected.stdout
    scan_arg = ["--scan", "art/isa_scan.json"] if (tmp_path / "art" / "isa_scan.json").is_file() else []
    reported = dcuopt(tmp_path, "report", "--kernel", GELU, "--summary", "s.json", "--inspect", "meta.json",
                      *scan_arg, "--out", "report.md")
    assert reported.returncode == 0, reported.stderr
    assert reported.stdout.startswith("decision: continue Triton tuning")
    text = (tmp_path / "report.md").read_text()
    # coordinate descent's winner is the config Inductor uses; the scanned variant is that one
    assert ("Config Inductor uses: XBLOCK: 512, num_warps: 16, num_ctas: 1, num_stages: 1, maxnreg: None at "
            "0.1404") in text
    assert ("| coordinate descent | XBLOCK: 512, num_warps: 16, num_ctas: 1, num_stages: 1, maxnreg: None | 0.1404 | "
            "Inductor uses this |") in text
    assert "- matches the config Inductor uses (XBLOCK: 512, num_warps: 16" in text
    assert "- eager-fallback timing (report --fallback MODEL.py on the GPU)" in text


def test_scan_of_aot_output_and_a_wrong_path(tmp_path: Path) -> None:
    found = dcuopt(tmp_path, "scan", DATA / "triton_aot" / "gfx942", "--kernel", "hist_kernel", "--json", "x.json")
    assert found.returncode == 0, found.stderr
    assert "hist_kernel [amdgcn gfx942]" in found.stdout and "buffer_atomic_add_f32 x1" in found.stdout
    assert json.loads((tmp_path / "x.json").read_text())["functions"][0]["atomics"] == {"buffer_atomic_add_f32": 1}
    missing = dcuopt(tmp_path, "scan", tmp_path / "nothing-here")
    assert missing.returncode == 2 and "does not exist; give an .amdgcn/.s/.sass/.cubin file" in missing.stderr


@pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed")
def test_env_records_buffer_ops_and_what_is_missing(tmp_path: Path) -> None:
    found = dcuopt(tmp_path, "env", "--json", "env.json")
    assert found.returncode == 0, found.stderr
    env = json.loads((tmp_path / "env.json").read_text())
    assert env["python"]["torch"] and env["python"]["triton"]
    assert "AMDGCN_USE_BUFFER_OPS" in env["env"]
    if not env["python"]["devices"]:
        assert "no GPU visible to torch: capture, run and the fallback timing need one" in env["not_available"]


@pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed")
def test_a_captured_kernel_becomes_a_case_the_harness_tests(tmp_path: Path) -> None:
    """The recorder writes a capture (real tensors, a real @triton.jit kernel), to-case turns it into a case with
    an eager oracle, and the plugin runs that case's correctness test in Triton's interpreter."""
    import torch

    from pytest_dcuopt.triton_flow.capture import Recorder
    from tests.unit.triton_flow import test_capture_flow as helpers

    source = tmp_path / "generated.py"
    source.write_text(helpers.KERNEL_SOURCE)
    autotuner = helpers.autotuner_for(source)
    recorder = Recorder(tmp_path / "cap")
    args = (torch.randn(3000), torch.empty(3000), 3000)
    recorder.after(autotuner, recorder.before(autotuner, args), {helpers.Launcher(1024, 4, 16): 0.01}, 0.1)
    oracle = tmp_path / "eager.py"
    oracle.write_text("def double(in_ptr0, out_ptr0, xnumel):\n    out_ptr0.copy_(2 * in_ptr0)\n")
    made = dcuopt(tmp_path, "to-case", tmp_path / "cap" / "triton_poi_double_0_1", "--out", tmp_path / "double",
                  "--reference", f"{oracle}:double")
    assert made.returncode == 0, made.stderr
    result = run_printed(tmp_path, made.stdout)  # `python -m pytest <case> --dcuopt-toolchain triton`
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout  # correctness against the oracle, and the benchmark


@pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed")
def test_the_pytest_option_switches_capture_on(pytester: pytest.Pytester) -> None:
    """--dcuopt-triton-capture DIR installs the hook in the pytest process and exports DIR to child processes;
    without it (and without the variable) nothing is installed."""
    pytester.makepyfile(test_probe="""
        import os
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner

        def test_hook():
            hook = getattr(CachingAutotuner.benchmark_all_configs, "dcuopt_capture", None)
            want = os.environ.get("WANT_DIR")
            assert os.environ.get("DCUOPT_TRITON_CAPTURE") == want
            assert (hook is None) if want is None else (str(hook.root) == want)
    """)
    folder = pytester.path / "cap"
    os.environ["WANT_DIR"] = str(folder.resolve())
    try:
        on = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--dcuopt-triton-capture={folder}",
                                           "test_probe.py", "--dcuopt-run-dir=r1")
    finally:
        del os.environ["WANT_DIR"]
    on.assert_outcomes(passed=1)
    assert folder.is_dir()
    off_env = {k: v for k, v in os.environ.items() if k != "DCUOPT_TRITON_CAPTURE"}
    off = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_probe.py",
                          "--dcuopt-run-dir=r2"], cwd=pytester.path, env=off_env, capture_output=True, text=True,
                         timeout=300)
    assert off.returncode == 0 and "1 passed" in off.stdout, off.stdout[-2000:]
