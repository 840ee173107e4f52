"""The `dcuopt triton` workflow's Python functions re-run on the outputs that `tools/device/triton_capture.sh`
recorded end to end on one NVIDIA H200 (torch 2.11.0+cu130, triton 3.6.0; tests/data/triton_capture_h200, see its
README.md). No GPU and no mocks: each step's function is fed the recorded inputs of that step and must give the
recorded output (paths scrubbed to <W>/<REPO> in the fixtures, alike on both sides)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.triton_flow import environment, replay
from pytest_dcuopt.triton_flow import scan as isa_scan
from pytest_dcuopt.triton_flow.capture import inductor_choice, same_config
from pytest_dcuopt.triton_flow.hints import inspect_file
from pytest_dcuopt.triton_flow.report import LEAVE, Inputs, decide, render
from pytest_dcuopt.triton_flow.summarize import markdown, read_records, summarize
from pytest_dcuopt.triton_flow.to_case import GPU_GUARD, to_case

DATA = Path(__file__).resolve().parents[1] / "data" / "triton_capture_h200"
KERNEL = "triton_per_fused__softmax_add_exp_prepare_softmax_online_sub_4"
FOLDER = DATA / "cap" / f"{KERNEL}_4"
SASS = DATA / "art" / "best" / f"{KERNEL}.sass"


def recorded(name: str, folder: Path = DATA) -> Any:
    return json.loads((folder / name).read_text())


def config(xblock: int, warps: int) -> str:
    return f"XBLOCK: {xblock}, num_warps: {warps}, num_ctas: 1, num_stages: 1, maxnreg: None"


def console_block(step: str, folder: Path = DATA) -> list[str]:
    """The lines a step printed, from an H200 run's console.log (after its `--- step: exit` line, up to the next
    step's `===` line or the script's `done after` line)."""
    lines = (folder / "console.log").read_text().splitlines()
    start = lines.index(next(line for line in lines if line.startswith(f"--- {step}: exit ")))
    block = []
    for line in lines[start + 1:]:
        if line.startswith(("=== ", "done after ")):
            break
        block.append(line)
    return block


def test_summarize_reproduces_the_recorded_autotune_summary() -> None:
    """summarize() of the capture folder and the Inductor log excerpt recorded on the H200 gives the recorded
    autotune_summary.json: each kernel's best config and time, coordinate descent's result, the GEMM tables."""
    summary = summarize([DATA / "cap", DATA / "cap" / "inductor.log"])
    want = recorded("autotune_summary.json")
    assert summary["kernels"] == want["kernels"]
    assert summary["templates"] == want["templates"]
    assert summary["files"] == want["files"]
    best = {(e["kernel"], e["origin"]): (e["best"]["config"], round(e["best"]["ms"], 4)) for e in summary["kernels"]}
    assert best == {
        ("triton_", "capture"): (config(512, 8), 0.1090),
        ("triton_per_fused_native_layer_norm_0", "capture"): (config(8, 4), 0.0278),
        ("triton_poi_fused_gelu_2", "capture"): (config(1024, 4), 0.0948),
        (KERNEL, "capture"): (config(8, 4), 0.0948),
        ("triton_", "inductor log"): (config(512, 8), 0.1090),
        ("triton_per_fused_native_layer_norm_0", "inductor log"): (config(8, 4), 0.0278),
        ("triton_poi_fused_gelu_2", "inductor log"): (config(1024, 4), 0.0948),
        (KERNEL, "inductor log"): (config(8, 4), 0.0948)}
    coordesc = {e["kernel"]: (e["coordesc_best"]["config"], round(e["coordesc_best"]["ms"], 4), len(e["coordesc"]))
                for e in summary["kernels"] if e["origin"] == "inductor log"}
    assert coordesc == {"triton_": (config(2048, 8), 0.0158, 7),
                        "triton_per_fused_native_layer_norm_0": (config(16, 4), 0.0143, 5),
                        "triton_poi_fused_gelu_2": (config(2048, 4), 0.0907, 5),
                        KERNEL: (config(16, 8), 0.0878, 7)}
    tables = [(t["op"], t["choices"][0]["choice"], t["choices"][0]["ms"], len(t["choices"]))
              for t in summary["templates"]]
    assert tables == [("addmm", "triton_mm_17", 0.0214, 10), ("addmm", "triton_mm_32", 0.0266, 10)]


def test_summary_markdown_matches_the_recorded_one() -> None:
    """markdown() of that summary is the recorded autotune_summary.md (H200), but for the Sources line (the
    fixtures' own folder here)."""
    made = markdown(summarize([DATA / "cap", DATA / "cap" / "inductor.log"])).splitlines()
    want = (DATA / "autotune_summary.md").read_text().splitlines()
    assert want[2] == "Sources: <W>/cap, <W>/cap/inductor.log"
    assert made[:2] + made[3:] == want[:2] + want[3:]


def test_capture_records_agree_with_the_per_kernel_folders() -> None:
    """The H200 capture's autotune.jsonl holds the same records as the per-kernel capture.json files, and the
    picked kernel is the slowest tuned one by best time after triton_ (its mutated in_out_ptr0 counts twice in the
    footprint: 2 x 2 MiB + 2 MiB)."""
    records = read_records(DATA / "cap")
    assert [r["folder"] for r in records] == ["triton__1", "triton_per_fused_native_layer_norm_0_2",
                                              "triton_poi_fused_gelu_2_3", f"{KERNEL}_4"]
    for record in records:
        folder = json.loads((DATA / "cap" / record["folder"] / "capture.json").read_text())
        assert {**folder, "origin": "capture"} == record
    picked = records[3]
    assert picked["best"]["config"] == config(8, 4) and picked["best"]["ms"] == pytest.approx(0.094784, abs=1e-6)
    assert picked["footprint_bytes"] == 6291456 == 3 * 2048 * 512 * 2
    assert picked["footprint_gbps"] == pytest.approx(6291456 / (picked["best"]["ms"] * 1e-3) / 1e9)
    assert json.loads((DATA / "cap" / "capture-run.json").read_text())["returncode"] == 0


def test_scan_of_the_recorded_sass_gives_the_recorded_load_store_families() -> None:
    """scan() of the SASS of the winner's cubin (built by Triton on the H200, sm_90a) gives the recorded
    isa_scan.json: 952 instructions, 128-bit global loads x8 / stores x4, 32-bit shared loads/stores x10 each."""
    result = isa_scan.scan([SASS], kernel=KERNEL)
    assert len(result["functions"]) == 1
    found = result["functions"][0]
    want = recorded("isa_scan.json")["functions"][0]
    assert (found["function"], found["family"], found["arch"], found["instructions"]) == (KERNEL, "sass", "sm_90a",
                                                                                          952)
    assert {(m["space"], m["op"], m["width_bits"]): m["count"] for m in found["memory"]} == {
        ("global", "load", 128): 8, ("global", "store", 128): 4, ("shared", "load", 32): 10,
        ("shared", "store", 32): 10}
    assert found["memory"] == want["memory"]
    assert found["barriers"] == want["barriers"] == {"BAR.SYNC.DEFER_BLOCKING": 5, "BSYNC": 1}
    assert found["verdict"] == want["verdict"]
    assert found["verdict"]["dominant_path"] == "global" and found["verdict"]["widest_bits"] == 128
    assert found["atomics"] == found["matrix"] == {}
    # The registry's signatures (needs jsonschema, a dependency). `latency.wavefront_shuffle_ds_bpermute` is named
    # after the AMD instruction; its SASS signature is SHFL, and the reduction's 42 SHFL.BFLY match it.
    assert found["signatures"] == want["signatures"] == [
        "compute.fast_math_intrinsics", "memory.vectorized_global_access", "memory.lds_tiling",
        "latency.wavefront_shuffle_ds_bpermute"]
    assert SASS.read_text().count("SHFL.BFLY") == 42
    assert isa_scan.describe(result)[:2] == console_block("scan")[:2]


def test_inspect_of_the_recorded_kernel_gives_the_recorded_meta() -> None:
    """inspect_file() of the kernel module captured on the H200 gives the recorded meta.json: two fp16 pointers
    with tt.divisibility 16 and no tt.pointer_range, 2 loads and 1 store."""
    found = inspect_file(FOLDER / "kernel.py")
    want = recorded("meta.json")
    assert want["file"] == f"<W>/cap/{KERNEL}_4/kernel.py"
    assert {k: v for k, v in found.items() if k != "file"} == {k: v for k, v in want.items() if k != "file"}
    status = found["kernels"][0]["hint_status"]
    assert (status["pointers"], status["with_divisibility"], status["missing_pointer_range"]) == (
        2, 2, ["in_out_ptr0", "in_ptr0"])
    assert (found["counts"]["load"], found["counts"]["store"]) == (2, 1)


def sections(text: str) -> dict[str, str]:
    parts = text.split("\n## ")
    return {part.split("\n", 1)[0]: part for part in parts[1:]}


def test_report_rebuilt_from_the_recorded_pieces_keeps_the_recorded_report_but_the_fixed_parts() -> None:
    """render() of the JSON pieces gathered on the H200 (summary, inspect, scan, run, fallback): the recorded
    report.md is kept as recorded; it encoded three bugs, so only its other sections must come out the same.
    The recorded Standalone timing put Inductor's host-timed autotuning figure ("autotuning had measured 0.0948 ms")
    beside the device time without a caveat; its best-config section and Tuning attempts ignored the Inductor log's
    summary entry, so the 7 coordinate-descent trials and the 0.0878 ms winner (XBLOCK 16, 8 warps) Inductor runs
    were missing, and the timed/scanned configs were never compared with it."""
    inputs = Inputs(KERNEL, recorded("autotune_summary.json"), recorded("meta.json"), recorded("isa_scan.json"),
                    recorded("run.json"), recorded("fallback.json"))
    text = render(inputs)
    made, want = sections(text), sections((DATA / "report.md").read_text())
    for name in ("Profile", "Pointer arguments and hints", "Decision", "Eager fallback"):
        assert made[name] == want[name], name
    assert made["Load/store summary"].startswith(want["Load/store summary"].rstrip("\n"))
    assert made["Inputs and best config"].split("\n\n")[1] == want["Inputs and best config"].split("\n\n")[1]
    decision, reasons = decide(inputs)
    assert decision == LEAVE == "leave it: not worth tuning"
    assert reasons == ["rank 5, 9.8% of the compiled model's device time (below 10%): not a hot spot"]
    assert console_block("report")[-3:-1] == [f"decision: {decision}", f"  {reasons[0]}"]
    assert ("Model <REPO>/tools/device/triton_capture.py on NVIDIA H200: compiled 0.0401 ms, with `norm` under "
            "torch._dynamo.disable 0.0459 ms: difference +0.0058 ms (1.14x).") in text
    assert "Rank 5 of 5 kernels of the compiled model, 0.0033 ms per forward, 9.8% of its device time." in text
    # the fixes: device time first, the autotuning figure labelled, the timed config compared with Inductor's
    timing = made["Standalone timing"]
    recorded_timing = want["Standalone timing"]
    assert "autotuning had measured" in recorded_timing and "not a device time" not in recorded_timing
    assert timing.index("0.0046 ms median device time over 943 cold samples") < timing.index("0.0948 ms")
    assert "host-launched kernel_call" in timing and "not comparable with the device time above" in timing
    assert f"This is NOT the config Inductor uses ({config(16, 8)}, coordinate descent (7 trials" in timing
    assert "The timed config is not verified" in timing
    assert f"Config Inductor uses: {config(16, 8)} at 0.0878 ms (coordinate descent" in made["Inputs and best config"]
    rows = [line for line in made["Tuning attempts"].splitlines() if line.startswith(("| autotune", "| coordinate"))]
    assert len(rows) == 2 + 7 and len(want["Tuning attempts"].splitlines()) == 8  # the recorded table: 2 rows
    assert [r for r in rows if r.endswith("| Inductor uses this |")] == [
        f"| coordinate descent | {config(16, 8)} | 0.0878 | Inductor uses this |"]


def test_the_report_says_the_scanned_variant_is_inductors_config_not_the_timed_one() -> None:
    """The scanned SASS is collect's `best/` copy (compile metadata: 8 warps; manifest: the .best_config with
    XBLOCK 16 found by coordinate descent): the config Inductor runs, not the XBLOCK 8 / 4 warps the recorded
    run timed. The scan's paths are the H200's (<W>); here they point at the fixtures, laid out the same."""
    scan = json.loads((DATA / "isa_scan.json").read_text().replace("<W>", str(DATA)))
    text = render(Inputs(KERNEL, recorded("autotune_summary.json"), recorded("meta.json"), scan, recorded("run.json"),
                         recorded("fallback.json")))
    assert "XBLOCK: 16, num_warps: 8, num_stages: 1 (from " in text
    assert f"- matches the config Inductor uses ({config(16, 8)})" in text
    assert f"- does NOT match the standalone run's timed config ({config(8, 4)})" in text
    assert str(DATA.parent) not in text.replace(str(Path.cwd()), "")  # no absolute path outside the current folder


def test_the_decision_follows_the_recorded_figures() -> None:
    """The H200's figures decide: the same pieces with the kernel made rank 1, or the eager run 10% faster,
    change the decision (so the recorded "leave it" comes from the recorded rank/share, not a default)."""
    fallback = recorded("fallback.json")
    assert [k["rank"] for k in fallback["kernels"]] == [1, 2, 3, 4, 5]
    assert fallback["kernels"][4]["kernel"] == KERNEL
    assert fallback["kernels"][4]["share"] == pytest.approx(0.0980, abs=1e-4)
    assert fallback["fallback_over_compiled"] == pytest.approx(fallback["fallback_ms"] / fallback["compiled_ms"])
    assert sum(k["ms"] for k in fallback["kernels"]) == pytest.approx(0.03363, abs=1e-5)
    hot = {**fallback, "kernels": [{**k, "rank": 1, "share": 0.5} if k["kernel"] == KERNEL else k
                                   for k in fallback["kernels"]]}
    pieces = (recorded("autotune_summary.json"), recorded("meta.json"), recorded("isa_scan.json"), recorded("run.json"))
    decision, reasons = decide(Inputs(KERNEL, *pieces, hot))
    assert decision == "continue Triton tuning"
    assert "memory path global, widest 128 bits" in reasons
    eager_faster = {**fallback, "fallback_ms": 0.036, "fallback_over_compiled": 0.036 / fallback["compiled_ms"]}
    assert decide(Inputs(KERNEL, *pieces, eager_faster))[0] == "disable the compiled region"


def test_standalone_timing_record_is_consistent() -> None:
    """run.json of the H200 standalone run: the footprint rate is the capture's footprint over the median, the
    autotune time is the capture's best, and describe() prints what the console shows."""
    run = recorded("run.json")
    assert run == json.loads((FOLDER / "run.json").read_text())
    record = json.loads((FOLDER / "capture.json").read_text())
    assert (run["config"], run["autotune_ms"]) == (record["best"]["config"], record["best"]["ms"])
    assert run["median_ms"] == pytest.approx(0.0045575, abs=1e-7) and run["samples"] == 943
    assert run["footprint_gbps"] == pytest.approx(record["footprint_bytes"] / (run["median_ms"] * 1e-3) / 1e9)
    assert replay.describe(run) == console_block("run")[:3]
    # Inductor's launcher was not kept to that config: with coordinate_descent_tuning on in the kernel's
    # inductor_meta, CachingAutotuner.run tuned again and saved its own winner next to kernel.py.
    saved = json.loads(next(FOLDER.glob("*.best_config")).read_text())
    assert (saved["XBLOCK"], saved["num_warps"], saved["found_by_coordesc"]) == (4, 4, True)
    assert "'coordinate_descent_tuning': True" in (FOLDER / "kernel.py").read_text()


def test_the_replay_times_the_config_inductor_runs_by_default() -> None:
    """The recorded run timed the capture's autotune best (XBLOCK 8, 4 warps). Inductor ran coordinate descent
    after it (the capture's inductor.log: 7 COORDESC trials, winner XBLOCK 16 / 8 warps at 0.0878 ms; the H200's
    .best_config in collect's manifest says the same), so that winner is what `run` now times by default;
    `--config N` still picks configs[N]."""
    record = json.loads((FOLDER / "capture.json").read_text())
    entry, source = replay.choose(record, FOLDER, None)
    assert (entry["kwargs"], entry["num_warps"], entry["num_stages"]) == ({"XBLOCK": 16}, 8, 1)
    assert entry["ms"] == pytest.approx(0.087776) and "coordinate descent (7 trials, from the Inductor log)" in source
    manifest = recorded("art/manifest.json")["copied"]["best_config"][0]
    assert (manifest["XBLOCK"], manifest["num_warps"], manifest["found_by_coordesc"]) == (16, 8, True)
    asked, _ = replay.choose(record, FOLDER, 1)
    assert asked == record["configs"][1] and asked["config"] == recorded("run.json")["config"] == config(8, 4)


def test_to_case_of_the_recorded_capture_writes_the_recorded_case_with_inductors_config(tmp_path: Path) -> None:
    """to_case() of the H200 capture folder (capture.json, kernel.py, and the capture's inductor.log beside it, as
    `dcuopt triton capture` lays them out) writes the recorded case/ files, but for kernel.triton.py: the recorded
    one launched the autotune best (XBLOCK 8, 4 warps), not the coordinate-descent winner Inductor runs (XBLOCK 16,
    8 warps), so that file is kept as recorded and the expectation is the fixed launcher."""
    capture = tmp_path / "cap" / f"{KERNEL}_4"
    capture.mkdir(parents=True)
    for name in ("capture.json", "kernel.py"):
        shutil.copy2(FOLDER / name, capture / name)
    shutil.copy2(DATA / "cap" / "inductor.log", tmp_path / "cap" / "inductor.log")
    result = to_case(capture, tmp_path / "case")
    for name in ("dims.json", "inductor_kernel.py"):
        assert (tmp_path / "case" / name).read_text() == (DATA / "case" / name).read_text(), name
    # ref.py: the recorded one, then the guard that skips the case where Inductor's module finds no GPU backend
    assert (tmp_path / "case" / "ref.py").read_text() == (DATA / "case" / "ref.py").read_text() + GPU_GUARD
    old = (DATA / "case" / "kernel.triton.py").read_text()
    assert "CONFIG = {'XBLOCK': 8}" in old and "triton.cdiv(xnumel, 8)" in old and "num_warps=4" in old
    made = (tmp_path / "case" / "kernel.triton.py").read_text()
    assert "CONFIG = {'XBLOCK': 16}" in made and "triton.cdiv(xnumel, 16)" in made and "num_warps=8" in made
    assert "coordinate descent (7 trials, from the Inductor log)" in made
    assert made.splitlines()[3:] == [line.replace("8)", "16)").replace("'XBLOCK': 8", "'XBLOCK': 16")
                                     .replace("num_warps=4", "num_warps=8") for line in old.splitlines()[3:]]
    printed = (DATA / "case.txt").read_text()
    want = json.loads(printed[:printed.index("\nnext: ")])
    assert want["case"] == "<W>/case"
    assert (result["config"], result["config_source"]) == (config(16, 8), "coordinate descent (7 trials, from the "
                                                                          "Inductor log)")
    got = {k: v for k, v in result.items() if k not in ("config", "config_source")}
    assert json.loads(json.dumps({**got, "case": "<W>/case"})) == want
    assert want["dims"] == {"xnumel": 2048, "r0_numel": 512}
    assert want["elements"] == {"in_out_ptr0": 1048576, "in_ptr0": 1048576}


def test_pick_takes_the_profiles_hottest_captured_kernel(tmp_path: Path) -> None:
    """tools/device/triton_capture.py picked K as "the slowest tuned kernel" by its 0.0948 ms autotuning time, a
    host-timed figure (~90 us for any kernel with a mutated in_out_ptr). With the compiled model's profile
    (fallback.json's kernels, recorded on the H200) it picks the captured kernel with the largest device time:
    triton_poi_fused_gelu_2 (rank 3, 20.3%; K is rank 5, 9.8%). Without a profile it still uses the autotuning
    times, and says so."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("triton_capture_tool", Path(__file__).resolve().parents[2] / "tools"
                                                  / "device" / "triton_capture.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    kernel, folder, note = tool.pick(DATA / "cap", recorded("fallback.json")["kernels"])
    assert (kernel, folder) == ("triton_poi_fused_gelu_2", DATA / "cap" / "triton_poi_fused_gelu_2_3")
    assert "rank 3" in note and "20.3%" in note
    kernel, folder, note = tool.pick(DATA / "cap", None)
    assert (kernel, folder) == (KERNEL, FOLDER) and "host-timed" in note


def test_the_recorded_case_is_collected_by_the_harness(tmp_path: Path) -> None:
    """The case to-case wrote on the H200 is a case the plugin collects: one correctness and one benchmark test
    for the triton toolchain (its ref.py has no reference yet, so it is not run here)."""
    case = tmp_path / "softmax_case"
    shutil.copytree(DATA / "case", case)
    done = subprocess.run([sys.executable, "-m", "pytest", str(case), "--dcuopt-toolchain", "triton",
                           "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    items = sorted(line for line in done.stdout.splitlines() if "::" in line)
    assert items == ["softmax_case/ref.py::test_benchmark_triton[baseline]",
                     "softmax_case/ref.py::test_correctness_triton[baseline]"]


def test_env_record_describes_the_h200() -> None:
    """describe() of env.json recorded on the H200 prints the recorded console lines (torch 2.11.0+cu130,
    triton 3.6.0, NVIDIA H200 sm_90, nvcc/ncu/cuobjdump present, no ROCm tools)."""
    env = recorded("env.json")
    lines = environment.describe(env)
    assert lines == console_block("env")[:len(lines)]
    assert lines[:2] == ["torch 2.11.0+cu130 (hip None, cuda 13.0), triton 3.6.0", "device 0: NVIDIA H200 (sm_90)"]
    assert env["python"]["devices"][0]["multiprocessors"] == 132


def step_ends(folder: Path) -> list[int]:
    """A run's steps.txt: the nine steps in the script's order, each exit 0; the second each ended at."""
    steps = [line.split() for line in (folder / "steps.txt").read_text().splitlines()]
    assert [s[1].rstrip(":") for s in steps] == ["capture", "summarize", "collect", "scan", "inspect", "run",
                                                 "report", "to-case", "env"]
    assert {s[3] for s in steps} == {"0"}
    return [int(s[5]) for s in steps]


def test_every_step_exited_zero_within_the_budget() -> None:
    """steps.txt of the H200 run: the nine steps in the script's order, each exit 0, the last done at 79 s."""
    assert step_ends(DATA) == [35, 36, 36, 38, 38, 51, 74, 74, 79]


# --- Run 2: recorded on the H200 after the fixes ------------------------------------------------------------------
# `BUDGET_S=190 bash tools/device/triton_capture.sh` on the same H200 after the fixes above (tests/data/
# triton_capture_h200/run2, see the README): the pick came from the model profile (triton_poi_fused_gelu_2), the
# replay timed the config Inductor uses, read back from the launcher, and the report decided "continue Triton
# tuning". Paths are scrubbed to <W>/<OUT>/<REPO> as in run 1.

RUN2 = DATA / "run2"
GELU = "triton_poi_fused_gelu_2"
GELU_FOLDER = RUN2 / "cap" / f"{GELU}_3"


def test_run2_recorded_on_the_h200_after_the_fixes_timed_the_config_inductor_uses() -> None:
    """Recorded on the H200 after the fixes: run.json says the timed config was read back from Inductor's launcher
    and equals the one asked for, and that one is the config Inductor uses: `inductor_choice` of the recorded
    capture.json (its own coordinate-descent trials, 6 of them) gives XBLOCK 1024 / 8 warps at 0.1047 ms, not the
    autotuning best (XBLOCK 1024 / 4 warps at 0.1084 ms)."""
    run = recorded("run.json", RUN2)
    assert run == json.loads((GELU_FOLDER / "run.json").read_text())
    assert run["timed_is_requested"] is True
    assert run["timed_read_back"] == "read back from Inductor's launcher after the timing"
    assert run["timed"]["config"] == run["requested"] == run["config"] == config(1024, 8)
    assert (run["timed"]["kwargs"], run["timed"]["num_warps"], run["timed"]["num_stages"]) == ({"XBLOCK": 1024}, 8, 1)
    assert run["retuning"].startswith("off (coordinate descent, rblock scaling and autotune caches switched off")
    record = json.loads((GELU_FOLDER / "capture.json").read_text())
    choice = inductor_choice(record)
    assert choice["entry"]["config"] == config(1024, 8) and choice["entry"]["ms"] == pytest.approx(0.104672)
    assert choice["source"] == "coordinate descent (6 trials, from the capture)" and choice["note"] == ""
    assert run["config_source"] == f"the config Inductor runs: {choice['source']}"
    assert same_config(run["timed"], choice["entry"])
    assert record["best"]["config"] == config(1024, 4) and not same_config(run["timed"], record["best"])
    assert run["autotune_ms"] == choice["entry"]["ms"]  # the autotuning figure of the timed config, labelled
    assert "not a device time" in run["autotune_timing"]
    entry, source = replay.choose(record, GELU_FOLDER, None)  # what `run` asks for by default, on this capture
    assert entry["config"] == run["requested"] and source == run["config_source"]
    # The Inductor log of the same capture says the same (summary entry "inductor log": 6 trials, same winner).
    logged = [e for e in recorded("autotune_summary.json", RUN2)["kernels"]
              if e["kernel"] == GELU and e["origin"] == "inductor log"]
    assert len(logged) == 1 and len(logged[0]["coordesc"]) == 6
    assert logged[0]["coordesc_best"]["config"] == config(1024, 8)
    # collect's .best_config (Inductor's own record of what it runs) is that config too
    best = recorded("art/manifest.json", RUN2)["copied"]["best_config"]
    assert [(b["XBLOCK"], b["num_warps"], b["found_by_coordesc"]) for b in best] == [(1024, 8, True)]
    assert run["median_ms"] == pytest.approx(0.008381, abs=1e-6) and run["samples"] == 728
    assert run["footprint_gbps"] == pytest.approx(record["footprint_bytes"] / (run["median_ms"] * 1e-3) / 1e9)
    assert replay.describe(run) == console_block("run", RUN2)[:len(replay.describe(run))]


def run2_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Inputs:
    """Run 2's report inputs with its folders laid out as on the H200: the work folder (<W>: cap/, art/) and a
    checkout (<REPO>) as the current folder, both outside each other."""
    work, repo = tmp_path / "triton-capture", tmp_path / "repo"
    shutil.copytree(RUN2 / "cap", work / "cap")
    shutil.copytree(RUN2 / "art", work / "art")
    repo.mkdir()
    monkeypatch.chdir(repo)

    def piece(name: str) -> Any:
        return json.loads((RUN2 / name).read_text().replace("<W>", str(work)).replace("<REPO>", str(repo)))

    return Inputs(GELU, piece("autotune_summary.json"), piece("meta.json"), piece("isa_scan.json"), piece("run.json"),
                  piece("fallback.json"))


def test_run2_report_rendered_from_its_pieces_gives_its_decision_and_reasons(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded on the H200 after the fixes: render() of run 2's pieces gives run 2's report.md line for line but
    for the Scanned variant line, which printed absolute paths (<W>/art/...) and now prints them from the work
    folder on; decide() gives the recorded decision and reasons (and the console printed the same)."""
    inputs = run2_inputs(tmp_path, monkeypatch)
    text = render(inputs)
    want = (RUN2 / "report.md").read_text()
    scanned = [line for line in want.splitlines() if line.startswith("Scanned variant: ")]
    assert len(scanned) == 1 and scanned[0].count("<W>/") == 3  # the recorded bug: absolute paths
    assert text == want.replace(scanned[0], scanned[0].replace("<W>/", ""))
    assert str(tmp_path) not in text
    assert ("Scanned variant: art/best/triton_poi_fused_gelu_2.cubin, XBLOCK: 1024, num_warps: 8, num_stages: 1 "
            "(from art/best/triton_poi_fused_gelu_2.json (warps, stages) and art/manifest.json") in text
    decision, reasons = decide(inputs)
    assert decision == "continue Triton tuning"
    assert reasons == ["running norm eagerly does not help end to end (1.01x of the compiled time)",
                       "memory goes through global instructions at most 64 bits wide: check pointer hints and offsets",
                       "rank 3, 18.0% of the device time: a hot spot"]
    made = sections(text)
    assert made["Decision"] == sections(want)["Decision"]
    assert console_block("report", RUN2)[-5:-1] == [f"decision: {decision}", *[f"  {r}" for r in reasons]]
    timing = made["Standalone timing"]
    assert timing.index("0.0084 ms median device time over 728 cold samples") < timing.index("0.1047 ms")
    assert f"This is the config Inductor uses ({config(1024, 8)}, coordinate descent (6 trials" in timing
    assert f"- matches the config Inductor uses ({config(1024, 8)})" in text
    assert f"- matches the standalone run's timed config ({config(1024, 8)})" in text
    assert ("Model tools/device/triton_capture.py on NVIDIA H200: compiled 0.0474 ms, with `norm` under "
            "torch._dynamo.disable 0.0476 ms: difference +0.0002 ms (1.01x).") in text


def test_run2_decision_changes_with_its_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run 2's "continue" comes from its figures: with the gelu kernel at rank 5 and 5% it is "leave it", with the
    eager run 10% faster it is "disable the compiled region", with 128-bit accesses the memory reason changes."""
    inputs = run2_inputs(tmp_path, monkeypatch)
    fallback = inputs.fallback or {}
    cold = {**fallback, "kernels": [{**k, "rank": 5, "share": 0.05} if k["kernel"] == GELU else k
                                    for k in fallback["kernels"]]}
    assert decide(Inputs(GELU, inputs.summary, inputs.hints, inputs.scan, inputs.run, cold))[0] == LEAVE
    faster = {**fallback, "fallback_ms": 0.9 * fallback["compiled_ms"], "fallback_over_compiled": 0.9}
    assert decide(Inputs(GELU, inputs.summary, inputs.hints, inputs.scan, inputs.run, faster))[0] == (
        "disable the compiled region")
    scan = json.loads(json.dumps(inputs.scan))
    scan["functions"][0]["verdict"] = {**scan["functions"][0]["verdict"], "widest_bits": 128, "wide_128bit": True}
    decision, reasons = decide(Inputs(GELU, inputs.summary, inputs.hints, scan, inputs.run, fallback))
    assert decision == "continue Triton tuning" and "memory path global, widest 128 bits" in reasons


def test_run2_pick_came_from_the_model_profile() -> None:
    """Recorded on the H200 after the fixes: pick.json says the kernel was picked by the compiled model's profile
    (device time, rank 3, 17.5% in the profile the pick step took), not by the host-timed autotuning figure (by
    which the softmax kernel, 0.1652 ms, would have been picked). `pick` on run 2's capture records with the
    report's profile (fallback.json, a later profile of the same model: rank 3, 18.0%) picks the same kernel."""
    import importlib.util

    picked = recorded("pick.json", RUN2)
    assert (picked["kernel"], picked["folder"]) == (GELU, f"<W>/cap/{GELU}_3")
    assert picked["picked_by"] == ("largest device time in the compiled model's profile among the captured "
                                   "kernels: rank 3, 0.0073 ms, 17.5%")
    spec = importlib.util.spec_from_file_location("triton_capture_tool", Path(__file__).resolve().parents[2] / "tools"
                                                  / "device" / "triton_capture.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    kernel, folder, note = tool.pick(RUN2 / "cap", recorded("fallback.json", RUN2)["kernels"])
    assert (kernel, folder) == (GELU, GELU_FOLDER)
    assert note.startswith("largest device time in the compiled model's profile") and "rank 3" in note
    kernel, _, note = tool.pick(RUN2 / "cap", None)
    assert kernel == KERNEL and "host-timed" in note


def test_run2_scan_of_the_recorded_sass_gives_the_recorded_scan() -> None:
    """The SASS of run 2's scanned cubin (art/best, XBLOCK 1024 / 8 warps) scans as recorded: 160 instructions,
    one 64-bit global load and one 64-bit global store (4 fp16 per thread: 1024 elements over 256 threads)."""
    result = isa_scan.scan([RUN2 / "art" / "best" / f"{GELU}.sass"], kernel=GELU)
    want = recorded("isa_scan.json", RUN2)
    assert [{k: v for k, v in f.items() if k != "file"} for f in result["functions"]] == [
        {k: v for k, v in f.items() if k != "file"} for f in want["functions"]]
    found = result["functions"][0]
    assert found["instructions"] == 160 and {(m["space"], m["op"], m["width_bits"]): m["count"]
                                             for m in found["memory"]} == {("global", "load", 64): 1,
                                                                           ("global", "store", 64): 1}
    assert isa_scan.describe(result)[:2] == console_block("scan", RUN2)[:2]
    # the recorded bug: the scan's "tool" held the whole PATH it ran with; see test_triton_flow_scan.py for the fix
    assert want["files"][0]["tool"].startswith("PATH=")


def test_run2_every_step_exited_zero_within_the_budget() -> None:
    """Run 2's steps: the nine steps in order, each exit 0, done at 109 s (BUDGET_S=190); console.log agrees."""
    assert step_ends(RUN2) == [41, 42, 59, 61, 62, 74, 101, 102, 109]
    console = (RUN2 / "console.log").read_text().splitlines()
    assert [line for line in console if line.startswith("--- ")] == (RUN2 / "steps.txt").read_text().splitlines()
    assert any(line.startswith("done after 109 s") for line in console)
    assert environment.describe(recorded("env.json", RUN2)) == console_block("env", RUN2)[:len(
        environment.describe(recorded("env.json", RUN2)))]


def test_run2_fixtures_hold_no_local_path() -> None:
    """Every committed fixture file (both runs, and the README) is scrubbed: no temporary folder and no work folder
    of either machine (the H200's work folder and checkout, this machine's)."""
    for path in DATA.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            for folder in ("tmp", "work"):
                assert f"/{folder}/" not in text, (path, folder)
