"""summary.md and the terminal table as a reader sees them: no repeated lines, no raw JSON, columns that agree."""
from __future__ import annotations

from typing import Any

from pytest_dcuopt.report.state import BranchRecord, build_state
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import TimingPolicy, summarize


def header(toolchains: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "t0", "finished_at": "t1",
            "run_dir": "/r", "exit_status": 0, "machine": {"cpu": "x", "host": "h"},
            "options": {"timing": TimingPolicy().to_json(), "interleave_rounds": 4},
            "toolchains": toolchains or {"cpu": {"capability": "run", "reason": "g++"}}}


def timed(branch: str, ms: float, toolchain: str = "cpu",
          interleaved: tuple[float, float] | None = None) -> BranchRecord:
    record = BranchRecord("case", toolchain, branch, f"{branch}.cpp", correct=True, examples=3)
    record.timing = {**summarize([ms / 1e3] * 12).to_json(), "mode": "cold", "timer": "host"}
    if interleaved is not None:
        base, mine = interleaved
        record.timing["interleaved"] = {"rounds": 4, "baseline_median_ms": base, "baseline_ci95_ms": [base, base],
                                        "median_ms": mine, "ci95_ms": [mine, mine], "speedup": base / mine,
                                        "samples": [12, 12]}
    return record


def row(lines: list[str], branch: str) -> dict[str, str]:
    head = next(line for line in lines if line.strip().startswith("| branch"))
    names = [c.strip() for c in head.strip().strip("|").split("|")]
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and cells[0].rstrip("*") == branch:
            return dict(zip(names, cells, strict=True))
    raise AssertionError(f"no row for {branch}")


def test_beats_noise_says_yes_no_or_not_compared() -> None:
    wrong = BranchRecord("case", "cpu", "wrong", "wrong.cpp", correct=False,
                         failure={"dims": {"N": 1}, "seed": 0, "message": "differs", "reproduce": "python -m pytest x"})
    state = build_state([timed("baseline", 2.0), timed("fast", 1.0, interleaved=(2.0, 1.0)),
                         timed("tie", 2.0, interleaved=(2.0, 2.0)), wrong], header())
    lines = render_summary(state).splitlines()
    assert row(lines, "fast")["beats noise"] == "yes"
    assert row(lines, "tie")["beats noise"] == "no"
    assert row(lines, "wrong")["beats noise"] == "-"
    assert row(terminal_lines(state), "wrong")["beats noise"] == "-"


def test_the_speedup_sits_beside_the_interleaved_medians_it_came_from() -> None:
    # The own-run median (1.5 ms) and the A/B medians (2.4 vs 1.2 ms) disagree, as drift makes them do.
    state = build_state([timed("baseline", 2.0), timed("fast", 1.5, interleaved=(2.4, 1.2))], header())
    for lines in (terminal_lines(state), render_summary(state).splitlines()):
        fast = row(lines, "fast")
        assert fast["median ms"] == "1.5" and fast["A/B ms"] == "2.4/1.2" and fast["speedup"] == "2.00x"
        assert row(lines, "baseline")["A/B ms"] == "-"
    assert any("A/B ms: baseline/branch medians of the interleaved" in line for line in terminal_lines(state))


def test_identical_skip_reasons_are_listed_once() -> None:
    reason = "cuda toolchain cannot run kernels here: no CUDA device"
    records = [BranchRecord("case", "cuda", name, f"{name}.cu", skipped=reason) for name in ("baseline", "a", "b")]
    summary = render_summary(build_state(records, header({"cuda": {"capability": "compile-only", "reason": "x"}})))
    assert summary.count(reason) == 1, summary
    assert "**baseline**, **a**, **b** skipped: " + reason in summary


def test_each_reproduce_command_is_printed_once() -> None:
    command = "/venv/bin/python -m pytest 'case/ref.py::test_correctness_cpu[wrong]' --dcuopt-dims='{\"N\":1}'"
    wrong = BranchRecord("case", "cpu", "wrong", "wrong.cpp", correct=False,
                         failure={"dims": {"N": 1}, "seed": 0, "reproduce": command,
                                  "message": f"case/cpu/wrong is wrong\nreproduce: {command}"})
    summary = render_summary(build_state([timed("baseline", 1.0), wrong], header()))
    assert summary.count(command) == 1, summary
    assert f"Reproduce: `{command}`" in summary
    assert "case/cpu/wrong is wrong" in summary


def test_the_timing_line_is_a_sentence_not_json() -> None:
    summary = render_summary(build_state([timed("baseline", 1.0)], header()))
    line = next(line for line in summary.splitlines() if line.startswith("- timing:"))
    assert "{" not in line and '""' not in line, line
    assert "cold samples" in line and "warm-up 0.05 s" in line, line
    assert "stop at 1% CI half-width or 2 s" in line and "4 interleaved A/B rounds" in line, line
    assert "L2 flush" not in line, line  # nothing was timed on a GPU


def test_a_device_capability_in_the_details_is_not_taken_for_the_toolchain_capability() -> None:
    # cuda's availability details hold the device's compute capability under the same key.
    gpu = header({"cuda": {"capability": [9, 0], "reason": "nvcc building for sm_90 on NVIDIA H200"}})
    state = build_state([timed("baseline", 1.0, "cuda"), timed("fast", 0.5, "cuda")], gpu)
    title = next(line for line in terminal_lines(state) if line.startswith("case [cuda]"))
    assert "skipped" not in title and "[9, 0]" not in title, title
    assert "- `cuda`: run: nvcc building" in render_summary(state)

    compile_only = header({"cuda": {"capability": "compile-only", "reason": "no device"}})
    skipped = [BranchRecord("case", "cuda", "baseline", "k.cu", skipped="no device")]
    title = next(line for line in terminal_lines(build_state(skipped, compile_only)) if line.startswith("case [cuda]"))
    assert title.endswith("[compile-only: correctness and timing skipped]"), title
