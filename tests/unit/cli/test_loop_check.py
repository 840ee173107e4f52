"""tools/device/loop_check.py's summaries on hand-made input (the script itself runs end to end on the CPU in
tests/plugin/test_cli.py, and on the H200 through tools/device/loop_check.sh)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).parents[3]


def loop_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("loop_check", REPO / "tools" / "device" / "loop_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_ablation_run_becomes_buckets_and_a_tally(tmp_path: Path) -> None:
    driver = loop_check()
    (tmp_path / "ablation.json").write_text(json.dumps({"ablations": [{"branch": "fast", "methods": {
        "real": {"outcome": "helps", "slowdown_when_removed": 3.0, "slowdown_interval": [2.5, 3.5]},
        "placebo": {"outcome": "no measurable effect", "slowdown_when_removed": 1.0, "slowdown_interval": [0.9, 1.1]},
        "broken": {"outcome": "build failed", "message": "nvcc: error"}}}]}))
    first = driver.ablation_run(1, 0, tmp_path / "ablation.json")
    assert {m: r["bucket"] for m, r in first["methods"].items()} == {
        "real": "effective", "placebo": "ineffective", "broken": "inconclusive"}
    missing = driver.ablation_run(2, 1, tmp_path / "absent.json")
    assert missing["problem"] == "no ablation.json"
    report = {"case": "c", "toolchain": "cuda", "command": "pytest c", "runs": [first, missing],
              "tally": driver.tally([first, missing])}
    assert report["tally"] == {"real": {"effective": 1}, "placebo": {"ineffective": 1}, "broken": {"inconclusive": 1}}
    text = driver.markdown(report)
    assert "| 1 | broken | build failed (nvcc: error) | inconclusive |" in text
    assert "| 2 | - | no ablation.json (pytest exit 1) |" in text
    assert "Tally: real: effective 1/2; placebo: ineffective 1/2; broken: inconclusive 1/2" in text


def test_decisions_leave_timings_out() -> None:
    state = {"history": [{"iter": 1, "status": "improved", "champion": "b1", "ms": 1.0}], "best_file": "k.cu",
             **{name: [{"id": "m", "ms": 2.0}] for name in ("selected_methods", "effective_methods")},
             **{name: [] for name in ("ineffective_methods", "inconclusive_methods", "implementation_failed_methods")}}
    found = loop_check().decisions(state)
    assert found["history"] == [(1, "improved", "b1")] and found["effective_methods"] == ["m"]
    assert "ms" not in json.dumps(found)
