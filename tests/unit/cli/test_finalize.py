"""finalize's headline: the head-to-head measurement of the first baseline and the final best, not a product."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.cli import finalize
from pytest_dcuopt.cli.harness import HarnessRun
from pytest_dcuopt.cli.layout import METHOD_LISTS, LoopError, RunLayout
from pytest_dcuopt.external_tools import ToolResult


def state(*speedups: float) -> dict[str, Any]:
    history = [{"iter": i, "status": "improved", "champion": "b1", "best_before_ms": 2.0, "ms": 1.0,
                "speedup_vs_best_before": s, "speedup_interval": [s * 0.9, s * 1.1], "methods": []}
               for i, s in enumerate(speedups, 1)]
    return {"case": "rowsum", "toolchain": "cpu", "run_dir": "run", "baseline_file_original": "kernel.cpp",
            "ref_file": "ref.py", "dims": {"M": 8}, "iterations_total": len(speedups), "branches": 2,
            "best_file": "iterv2/champion/kernel.cpp", "best_metric_ms": 1.0, "history": history,
            "iterations": {}, **{name: [] for name in METHOD_LISTS}}


def headline_of(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("- Overall speedup"))


def test_the_headline_is_the_head_to_head_speedup_and_the_product_is_shown_apart() -> None:
    final = {"baseline_ms": 4.4, "best_ms": 2.0, "speedup": 2.18, "speedup_interval": [2.1, 2.25], "correct": True}
    text = finalize.render(state(1.9, 1.6), [], final)
    assert headline_of(text) == ("- Overall speedup: 2.18x [2.1, 2.25] (the first baseline, 4.4 ms, and the final "
                                 "best, 2 ms, timed head to head in one run, final/head_to_head.json; correct: True)")
    assert "- Product of the promotions' paired speedups: 3.04x" in text and "not the headline" in text


def test_without_the_measurement_the_headline_says_so_and_never_shows_the_product_as_it() -> None:
    assert "not measured (`--no-measure`)" in headline_of(finalize.render(state(1.9, 1.6), []))
    assert headline_of(finalize.render(state(), [])) == ("- Overall speedup: none (no branch replaced the first "
                                                         "baseline)")


def test_a_head_to_head_timed_on_the_device_host_says_so_in_the_headline() -> None:
    final = {"baseline_ms": 4.4, "best_ms": 2.0, "speedup": 2.18, "speedup_interval": [2.1, 2.25], "correct": True,
             "measured": "remote"}
    assert "timed head to head in one run on the device host (ingested), final/" in headline_of(
        finalize.render(state(2.0), [], final))


def test_a_head_to_head_that_could_not_be_timed_here_names_the_pack_for_a_device_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = RunLayout(tmp_path / "run")
    (layout.run_dir / "baseline").mkdir(parents=True)
    baseline, best = layout.run_dir / "baseline" / "kernel.hip", layout.run_dir / "best.hip"
    baseline.write_text("// first baseline\n")
    best.write_text("// final best\n")
    (tmp_path / "ref.py").write_text("")
    run = {**state(2.0), "baseline_file": str(baseline), "best_file": str(best), "ref_file": str(tmp_path / "ref.py")}

    def no_device(targets: list[str], run_dir: Path, args: list[str], cwd: Path) -> HarnessRun:
        run_dir.mkdir(parents=True, exist_ok=True)
        skipped = {"skipped": "hip toolchain cannot run kernels here"}
        (run_dir / "state.json").write_text(json.dumps({"cases": {"final": {"toolchains": {"cpu": {"branches": {
            "baseline": skipped, "best": skipped}}}}}}))
        return HarnessRun(ToolResult(("pytest",), 0, "", "", 0.0), run_dir)

    monkeypatch.setattr(finalize, "run_pytest", no_device)
    with pytest.raises(LoopError) as refused:
        finalize.head_to_head(layout, run)
    assert "timed neither" in str(refused.value) and "hip toolchain cannot run kernels here" in str(refused.value)
    assert f"`dcuopt pack {layout.run_dir} --final`, run it there" in str(refused.value)
