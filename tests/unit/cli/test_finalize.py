"""finalize's headline: the head-to-head measurement of the first baseline and the final best, not a product."""
from __future__ import annotations

from typing import Any

from pytest_dcuopt.cli import finalize
from pytest_dcuopt.cli.layout import METHOD_LISTS


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
