"""Golden files for summary.md and the terminal table: their layout cannot drift unseen.

The state below is fixed (one case on two toolchains: a champion, a wrong branch with its minimal example, a
crash, a compile-only toolchain, an ISA verdict, a sync-timed branch and one with too few clean samples). When a
layout change is intended, regenerate and review the diff:

    DCUOPT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_report_golden.py
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import build_state
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import TimingPolicy, summarize

GOLDEN = Path(__file__).parent.parent / "data" / "golden"


def timing(ms: float, **extra: Any) -> dict[str, Any]:
    samples = [ms / 1e3 * (1 + 0.001 * k) for k in (-2, -1, 0, 1, 2)] * 4
    return {**summarize(samples).to_json(), "mode": "cold", "timer": "host perf_counter_ns", "quality": "ok", **extra}


def fixed_state() -> dict[str, Any]:
    base = BranchRecord("vadd", "cpu", "baseline", "vadd/kernel.cpp", correct=True, examples=31)
    base.timing = timing(2.0)
    fast = BranchRecord("vadd", "cpu", "simd", "vadd/branches/simd/kernel.cpp", correct=True, examples=31)
    fast.timing = timing(1.0, interleaved={"rounds": 4, "baseline_median_ms": 2.01, "baseline_ci95_ms": [2.0, 2.02],
                                           "median_ms": 1.0, "ci95_ms": [0.99, 1.01], "speedup": 2.01,
                                           "samples": [40, 40]})
    fast.throughput = {"gbps": 12.5}
    fast.isa = {"outcome": "pass", "family": "x86", "arch": None, "tool": "objdump", "recorded": False,
                "verdicts": [{"outcome": "pass", "mark": {}, "checks": ["pass: require /vaddps/: found 2"]}]}
    wrong = BranchRecord("vadd", "cpu", "no_tail", "vadd/branches/no_tail/kernel.cpp", correct=False, examples=4)
    wrong.failure = {"dims": {"N": 3}, "seed": 0, "message": "vadd/cpu/no_tail is wrong for dims={\"N\": 3} seed=0:\n"
                     "output 'c' (float32): values differ; 3 of 3 elements outside |k - r| <= 0.0001 + 0.001*|r|",
                     "reproduce": "'/venv/bin/python' -m pytest 'vadd/ref.py::test_correctness_cpu[no_tail]' "
                                  "--dcuopt-dims='{\"N\":3}' --dcuopt-seed=0"}
    wrong.skipped = "not benchmarked: vadd/cpu/no_tail failed its correctness test"
    crash = BranchRecord("vadd", "cpu", "segv", "vadd/branches/segv/kernel.cpp", correct=False, examples=1)
    crash.error = {"kind": "kernel crashed", "message": "vadd/cpu/segv: the kernel's worker process died with signal "
                                                        "SIGSEGV while run."}
    late = BranchRecord("vadd", "cpu", "late", "vadd/branches/late/kernel.cpp", correct=True, examples=31)
    late.timing = timing(0.5, quality="too few clean samples")
    sync = BranchRecord("vadd", "cuda", "baseline", "vadd/kernel.cu", correct=True, examples=31)
    sync.timing = timing(0.11, method="sync")
    skipped = BranchRecord("vadd", "hip", "baseline", "vadd/kernel.hip")
    skipped.skipped = "hip toolchain cannot run kernels here: no AMD device"
    header = {"tool": {"name": "pytest_dcuopt", "version": "golden"}, "created_at": "2026-12-01T00:00:00+00:00",
              "finished_at": "2026-12-01T00:01:00+00:00", "run_dir": "/runs/run_golden", "exit_status": 1,
              "interrupted": None, "machine": {"cpu": "Golden CPU", "host": "golden"},
              "options": {"timing": TimingPolicy().to_json(), "interleave_rounds": 4},
              "toolchains": {"cpu": {"capability": "run", "reason": "g++ on Golden CPU"},
                             "cuda": {"capability": "run", "reason": "nvcc building for sm_90 on a GPU"},
                             "hip": {"capability": "compile-only", "reason": "no AMD device"}}}
    return build_state([base, fast, wrong, crash, late, sync, skipped], header)


@pytest.mark.parametrize(("name", "render"), [
    ("summary.md", lambda state: render_summary(state)),
    ("terminal.txt", lambda state: "\n".join(terminal_lines(state)) + "\n"),
])
def test_layout_matches_the_golden_file(name: str, render: Any) -> None:
    text = render(fixed_state())
    path = GOLDEN / name
    if os.environ.get("DCUOPT_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.is_file(), f"{path} is missing: run with DCUOPT_UPDATE_GOLDEN=1 to create it, then review it"
    assert text == path.read_text(), (f"{name} changed. If intended, regenerate with DCUOPT_UPDATE_GOLDEN=1 "
                                      "(see this module's docstring) and review the diff")
