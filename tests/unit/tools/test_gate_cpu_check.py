"""tools/gate_cpu_check.py: reading a gated session's state.json and counting verdicts against the targets, on
hand-made input (the tool's real sessions are what docs/gating.md reports)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TOOL = Path(__file__).parents[3] / "tools" / "gate_cpu_check.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gate_cpu_check", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def state(**gate: Any) -> dict[str, Any]:
    gated = {"gate": {"verdict": "SAME", "attempts": 1, "reason": None,
                      "change": {"change": 0.01, "change_interval": [-0.01, 0.03], "samples": [60, 70]}, **gate},
             "timing": {"median_ms": 1.3, "flush_bytes": 67108864}}
    return {"cases": {"gate_injected": {"toolchains": {"cpu": {"branches": {"baseline": gated}}}}}}


def test_the_gated_branch_is_read_from_state(tool: ModuleType) -> None:
    assert tool.gate_entry(state()) == {"verdict": "SAME", "change": 0.01, "interval": [-0.01, 0.03],
                                        "samples": [60, 70], "attempts": 1, "reason": None, "median_ms": 1.3,
                                        "flush_bytes": 67108864}
    assert tool.gate_entry(state(verdict="AMBIGUOUS", change=None, reason="too few"))["change"] is None
    with pytest.raises(ValueError, match=r"expected one gated branch.*found 0"):
        tool.gate_entry({"cases": {}})


def test_the_tally_counts_the_wanted_verdicts_against_the_targets(tool: ModuleType) -> None:
    tries = ([{"kind": "A/A", "verdict": "SAME", "change": 0.01}] * 38
             + [{"kind": "A/A", "verdict": "AMBIGUOUS", "change": 0.04}, {"kind": "A/A", "verdict": "SLOW",
                                                                          "change": 0.07}]
             + [{"kind": "slowed", "verdict": "SLOW", "change": 0.1}] * 35
             + [{"kind": "slowed", "verdict": "SAME", "change": 0.02}] * 5)
    summary = tool.tally(tries)
    assert summary["A/A"] == {"tries": 40, "verdicts": {"AMBIGUOUS": 1, "SAME": 38, "SLOW": 1}, "wanted": "SAME",
                              "rate": 0.95, "target": "SAME in >= 95%", "target_met": True,
                              "change_range": [0.01, 0.07]}
    assert (summary["slowed"]["rate"], summary["slowed"]["target_met"]) == (0.875, False)
    lines = tool.table(summary).splitlines()
    assert lines[2] == ("| A/A | 40 | AMBIGUOUS 1, SAME 38, SLOW 1 | SAME | 95% | SAME in >= 95% | yes "
                        "| +1.0% .. +7.0% |")
    assert lines[3].startswith("| slowed | 40 | SAME 5, SLOW 35 | SLOW | 88% |") and "| no |" in lines[3]
