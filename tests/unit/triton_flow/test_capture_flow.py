"""capture's recorder, to-case and report, on this CPU machine.

The recorder is driven with real torch tensors and real Triton objects (a @triton.jit function, triton.Config);
the autotuner around them is a plain object with the attributes Inductor's CachingAutotuner has, because a
CachingAutotuner cannot be built without a GPU. The hook itself is installed on (and removed from) the real
CachingAutotuner class. The H200 run of the whole chain is tools/device/triton_capture.sh.
"""
from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_dcuopt.triton_flow import capture, report, summarize, to_case
from pytest_dcuopt.triton_flow.flow_files import FlowError

_MISSING = [name for name in ("triton", "torch") if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed")

KERNEL_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def triton_poi_double_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, 2.0 * tl.load(in_ptr0 + xindex, mask=xmask), mask=xmask)


class Tuned:  # what Inductor's decorator leaves under the kernel's name: an object whose .fn is the JIT function
    def __init__(self, fn):
        self.fn = fn


triton_poi_double_0 = Tuned(triton_poi_double_0)
'''


def autotuner_for(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("captured_demo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return SimpleNamespace(fn=module.triton_poi_double_0.fn, mutated_arg_names=[])


class Launcher:
    """A compiled config's attributes as Inductor's launchers carry them (hashable: timings are keyed by it)."""

    def __init__(self, block: int, warps: int, regs: int) -> None:
        import triton

        self.config = triton.Config({"XBLOCK": block}, num_warps=warps, num_stages=1)
        self.n_regs, self.n_spills, self.shared = regs, 0, 0


@pytest.fixture
def captured(tmp_path: Path) -> Path:
    """A capture folder written by the recorder for one kernel with two timed configs."""
    import torch

    source = tmp_path / "generated.py"
    source.write_text(KERNEL_SOURCE)
    autotuner = autotuner_for(source)
    recorder = capture.Recorder(tmp_path / "cap")
    x = torch.arange(1000, dtype=torch.float32)
    out = torch.empty(1000, dtype=torch.float32)
    snapshot = recorder.before(autotuner, (x, out, 1000))
    x.add_(1)  # the kernel's inputs are kept as they were before it ran
    recorder.after(autotuner, snapshot, {Launcher(256, 4, 20): 0.02, Launcher(1024, 8, 18): 0.01}, 0.5)
    return tmp_path / "cap"


def test_the_recorder_writes_a_folder_per_kernel(captured: Path) -> None:
    import torch

    folder = captured / "triton_poi_double_0_1"
    record = json.loads((folder / "capture.json").read_text())
    assert record["arg_names"] == ["in_ptr0", "out_ptr0", "xnumel", "XBLOCK"]
    assert record["args"][0] == {"name": "in_ptr0", "shape": [1000], "stride": [1], "dtype": "torch.float32",
                                 "storage_offset": 0, "device": "cpu", "bytes": 4000}
    assert record["args"][2] == {"name": "xnumel", "value": 1000}
    assert record["best"]["kwargs"] == {"XBLOCK": 1024} and record["best"]["num_warps"] == 8
    # no bandwidth from Inductor's host-timed benchmark (the H200 capture printed a meaningless 66 GB/s)
    assert record["footprint_bytes"] == 8000 and "footprint_gbps" not in record
    assert "not a device time" in record["timing"]
    inputs = torch.load(folder / "inputs.pt")
    assert torch.equal(inputs["in_ptr0"], torch.arange(1000, dtype=torch.float32))
    assert (folder / "kernel.py").read_text() == KERNEL_SOURCE
    assert "from pytest_dcuopt.triton_flow.replay import main" in (folder / "run.py").read_text()
    log = (captured / capture.READABLE_LOG).read_text()
    assert "1024" in log and "GB/s" not in log and "no bandwidth derived" in log


def test_a_kernel_compiled_in_inductors_subprocess_pool_is_found_by_the_autotuners_filename(tmp_path: Path) -> None:
    """torch 2.11 on the H200: kernels compiled in the subprocess pool come back pickled, their JIT function's
    `fn` set to None; the generated module's path is the autotuner's `filename` (the capture failed on this)."""
    import torch

    source = tmp_path / "generated.py"
    source.write_text(KERNEL_SOURCE)
    jit = autotuner_for(source).fn
    jit.fn = None  # what Inductor's prepare_for_pickle leaves
    pickled = SimpleNamespace(fn=jit, mutated_arg_names=[], filename=str(source))
    recorder = capture.Recorder(tmp_path / "cap")
    x, out = torch.ones(8), torch.empty(8)
    recorder.after(pickled, recorder.before(pickled, (x, out, 8)), {Launcher(256, 4, 20): 0.02}, 0.1)
    assert (tmp_path / "cap" / "triton_poi_double_0_1" / "kernel.py").read_text() == KERNEL_SOURCE

    lost = SimpleNamespace(fn=jit, mutated_arg_names=[], filename=str(tmp_path / "gone.py"))
    with pytest.raises(FileNotFoundError, match="the module of kernel triton_poi_double_0 was not found"):
        capture.kernel_source_file(lost)


def test_summarize_reads_the_records(captured: Path) -> None:
    found = summarize.summarize([captured])
    entry = found["kernels"][0]
    assert entry["origin"] == "capture" and entry["best"]["ms"] == 0.01
    text = summarize.markdown(found)
    assert "| in_ptr0 | [1000] | [1] | torch.float32 |" in text and "GB/s" not in text


def test_the_hook_goes_on_the_real_autotuner_and_comes_off(tmp_path: Path) -> None:
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    before = CachingAutotuner.benchmark_all_configs
    undo = capture.install(tmp_path / "cap")
    try:
        assert CachingAutotuner.benchmark_all_configs is not before
        assert capture.install(tmp_path / "other")() is None  # a second install leaves the first in place
        assert CachingAutotuner.benchmark_all_configs.dcuopt_capture.root == (tmp_path / "cap").resolve()
    finally:
        undo()
    assert CachingAutotuner.benchmark_all_configs is before


def test_to_case_writes_a_harness_case(captured: Path, tmp_path: Path) -> None:
    oracle = tmp_path / "eager.py"
    oracle.write_text("def double(in_ptr0, out_ptr0, xnumel):\n    out_ptr0.copy_(2 * in_ptr0)\n")
    made = to_case.to_case(captured / "triton_poi_double_0_1", tmp_path / "case", f"{oracle}:double")
    case = tmp_path / "case"
    assert made["outputs"] == ["out_ptr0"] and made["buffers"] == {"in_ptr0": (1000,), "out_ptr0": (1000,)}
    assert json.loads((case / "dims.json").read_text()) == {"xnumel": 1000}
    launcher_text = (case / "kernel.triton.py").read_text()
    assert "KERNEL[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, **CONFIG," in launcher_text
    ref = (case / "ref.py").read_text()
    assert "reference = _oracle.double" in ref and (case / "oracle.py").is_file()


def test_to_case_refuses_template_kernels_and_says_when_the_oracle_is_missing(captured: Path, tmp_path: Path) -> None:
    folder = captured / "triton_poi_double_0_1"
    record = json.loads((folder / "capture.json").read_text())
    made = to_case.to_case(folder, tmp_path / "case")
    assert "NotImplementedError" in (tmp_path / "case" / "ref.py").read_text()
    assert made["reference"].startswith("missing")
    (folder / "capture.json").write_text(json.dumps({**record, "kernel": "triton_tem_fused_mm_0"}))
    with pytest.raises(FlowError, match="template kernel"):
        to_case.to_case(folder, tmp_path / "other")


def test_script_argv_accepts_python_or_a_bare_script() -> None:
    from pytest_dcuopt.cli.triton import script_argv

    assert script_argv(["--", "python3", "model.py", "-n", "2"]) == ["model.py", "-n", "2"]
    assert script_argv(["model.py"]) == ["model.py"]
    with pytest.raises(FlowError, match="needs the script"):
        script_argv(["--", "python3", "-c", "pass"])


# ----- report ------------------------------------------------------------------------------------------------
def scan_of(path: str, memory: list[dict[str, Any]], atomics: int = 0) -> dict[str, Any]:
    loads = sum(m["count"] for m in memory if m["space"] in ("global", "buffer"))
    widest = max((m["width_bits"] or 0 for m in memory), default=0)
    return {"functions": [{"function": "k", "file": "k.cubin", "arch": "sm_90a", "memory": memory,
                           "signatures": [], "verdict": {"dominant_path": path, "global_memory_ops": loads,
                                                         "widest_bits": widest, "wide_128bit": widest >= 128,
                                                         "atomics": atomics, "matrix_ops": 0}}],
            "not_gathered": []}


def fallback_of(compiled: float, eager: float, rank: int = 1, share: float = 0.4) -> dict[str, Any]:
    return {"model": "m.py", "region": "norm", "device": "gpu", "compiled_ms": compiled, "fallback_ms": eager,
            "difference_ms": eager - compiled, "fallback_over_compiled": eager / compiled,
            "kernels": [{"rank": rank, "kernel": "k", "ms": 0.1, "share": share}]}


def test_decision_rules() -> None:
    narrow = scan_of("global", [{"space": "global", "op": "load", "width_bits": 16, "count": 1}])
    assert report.decide(report.Inputs("k", scan=narrow, fallback=fallback_of(1.0, 0.9)))[0] == report.DISABLE
    assert report.decide(report.Inputs("k", scan=narrow, fallback=fallback_of(1.0, 0.99)))[0] == report.CONTINUE
    cold = fallback_of(1.0, 1.2, rank=5, share=0.02)
    assert report.decide(report.Inputs("k", scan=narrow, fallback=cold))[0] == report.LEAVE
    atomic = scan_of("global", [{"space": "global", "op": "atomic", "width_bits": None, "count": 4}], atomics=4)
    assert report.decide(report.Inputs("k", scan=atomic, fallback=fallback_of(1.0, 1.1)))[0] == report.REWRITE
    decision, reasons = report.decide(report.Inputs("k", scan=narrow))
    assert decision == report.CONTINUE and "at most 16 bits wide" in reasons[0]


def test_the_report_names_every_section_and_what_is_missing() -> None:
    narrow = scan_of("global", [{"space": "global", "op": "load", "width_bits": 16, "count": 1}])
    text = report.render(report.Inputs("k", scan=narrow, fallback=fallback_of(1.0, 1.3)))
    for heading in ("## Profile", "## Standalone timing", "## Inputs and best config", "## Pointer arguments and hints",
                    "## Load/store summary", "## Tuning attempts", "## Decision", "## Eager fallback",
                    "## Not gathered"):
        assert heading in text
    assert "Rank 1 of 1 kernels" in text and "difference +0.3000 ms (1.30x)" in text
    assert "- standalone timing (no `dcuopt triton run` result)" in text
    assert "| k.cubin | sm_90a | global | load | 16 | 1 |" in textwrap.dedent(text)


def test_the_device_scripts_helpers_pick_the_slowest_kernel_and_copy_small_files(captured: Path,
                                                                                 tmp_path: Path) -> None:
    """tools/device/triton_capture.py's `pick` and `shrink`, on a capture the recorder wrote here."""
    path = Path(__file__).resolve().parents[3] / "tools" / "device" / "triton_capture.py"
    spec = importlib.util.spec_from_file_location("triton_capture_tool", path)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    kernel, folder, note = tool.pick(captured)
    assert (kernel, folder) == ("triton_poi_double_0", captured / "triton_poi_double_0_1") and "host-timed" in note
    work, out = captured.parent, tmp_path / "out"
    out.mkdir()
    (work / "report.md").write_text("# report\n")
    copied = tool.shrink(work, out)
    assert "report.md" in copied and "cap_autotune.jsonl" in copied and "cap_triton_poi_double_0_1.json" in copied
    assert not list(out.glob("*.pt"))


def test_two_recorders_on_one_folder_never_share_a_kernel_folder(captured: Path) -> None:
    """xdist workers each install the hook on the same folder: each kernel capture gets its own `<kernel>_<n>`."""
    second = capture.Recorder(captured)
    assert second.new_folder("triton_poi_double_0").name == "triton_poi_double_0_2"
    assert capture.Recorder(captured).new_folder("triton_poi_double_0").name == "triton_poi_double_0_3"


def test_the_report_shows_the_standalone_run_with_its_config() -> None:
    run = {"config": "XBLOCK: 512, num_warps: 16", "median_ms": 0.05, "samples": 40, "mode": "cold",
           "timer": "cuda events", "quality": "ok", "device": "gpu", "autotune_ms": 0.06, "footprint_gbps": 300.0,
           "timed": {"config": "XBLOCK: 512, num_warps: 16", "kwargs": {"XBLOCK": 512}, "num_warps": 16,
                     "num_stages": 1}, "timed_read_back": "read back from Inductor's launcher after the timing"}
    text = report.render(report.Inputs("k", run=run))
    timing = text.split("## Standalone timing")[1].split("## ")[0]
    assert "0.0500 ms median device time over 40 cold samples (cuda events, quality ok) on gpu, config XBLOCK: 512, " \
           "num_warps: 16" in timing
    assert timing.index("0.0500 ms") < timing.index("0.0600 ms") and "not a device time" in timing
    assert "standalone timing" not in text.split("## Not gathered")[1]


def test_parse_config_and_inductor_choice() -> None:
    """The one definition of the config Inductor runs: coordinate descent's winner when recorded, else the best."""
    parsed = capture.parse_config("XBLOCK: 16, R0_BLOCK: 64, num_warps: 8, num_ctas: 1, num_stages: 2, maxnreg: None")
    assert (parsed["kwargs"], parsed["num_warps"], parsed["num_stages"]) == ({"XBLOCK": 16, "R0_BLOCK": 64}, 8, 2)
    best = {"config": "XBLOCK: 8, num_warps: 4, num_ctas: 1, num_stages: 1, maxnreg: None", "kwargs": {"XBLOCK": 8},
            "num_warps": 4, "num_stages": 1, "ms": 0.09}
    record = {"kernel": "k", "configs": [best], "best": best}
    assert capture.inductor_choice(record)["entry"] is best
    trial = {"config": "XBLOCK: 16, num_warps: 8, num_ctas: 1, num_stages: 1, maxnreg: None", "ms": 0.08}
    logged = [{"kernel": "k", "configs": [{"config": best["config"], "ms": 0.09}], "coordesc": [trial],
               "coordesc_best": trial}]
    chosen = capture.inductor_choice(record, logged)
    assert (chosen["entry"]["kwargs"], chosen["entry"]["num_warps"]) == ({"XBLOCK": 16}, 8)
    other = [{**logged[0], "configs": [{"config": "XBLOCK: 1, num_warps: 4", "ms": 1.0}]}]
    assert capture.inductor_choice(record, other)["entry"] is best  # another kernel's tuning of the same name


def test_coordinate_descent_is_recorded_into_the_capture(captured: Path) -> None:
    """The recorder adds coordinate descent's trials and winner to the kernel's capture.json; the hook goes on the
    real CachingAutotuner's coordinate_descent_tuning and comes off with the other."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    folder = captured / "triton_poi_double_0_1"
    recorder = capture.Recorder(captured)
    tuner = SimpleNamespace(dcuopt_capture_folder=folder)
    winner = Launcher(2048, 8, 30)
    trials = [capture.config_entry(Launcher(1024, 8, 18), 0.01), capture.config_entry(winner, 0.008)]
    recorder.coordesc(tuner, trials, winner)
    record = json.loads((folder / "capture.json").read_text())
    assert record["coordesc_best"]["kwargs"] == {"XBLOCK": 2048} and record["coordesc_best"]["ms"] == 0.008
    chosen = capture.inductor_choice(record)
    assert chosen["entry"]["num_warps"] == 8 and "from the capture" in chosen["source"]
    made = to_case.to_case(folder, captured.parent / "case")
    assert made["config"] == str(winner.config)
    assert "triton.cdiv(xnumel, 2048)" in (captured.parent / "case" / "kernel.triton.py").read_text()
    before = CachingAutotuner.coordinate_descent_tuning
    undo = capture.install(captured.parent / "cap2")
    try:
        assert CachingAutotuner.coordinate_descent_tuning is not before
    finally:
        undo()
    assert CachingAutotuner.coordinate_descent_tuning is before
