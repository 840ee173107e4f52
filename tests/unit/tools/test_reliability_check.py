"""The summary step of tools/device/reliability_check.sh, on hand-made state.json files (the GPU run itself is the
lead's: this machine has no GPU)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

TOOL = Path(__file__).parents[3] / "tools" / "device" / "reliability_check.py"


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reliability_check", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def state(case: str, branches: dict[str, dict[str, object]], champion: str) -> dict[str, object]:
    return {"cases": {case: {"toolchains": {"cuda": {"champion": champion, "branches": branches}}}}}


def test_the_summary_names_each_verdict_and_says_what_did_not_run(tmp_path: Path) -> None:
    leaves = {"correct": False, "champion": False, "timing": None,
              "error": {"kind": "work left running", "message": "other_stream/cuda/nonblocking_stream: work left "
                        "running after its calls returned.\nmore", "after_end_event": {
                            "verdict": "work left running", "waits_us": [2010.0, 1998.5, 2003.1],
                            "idle_us": [6.1, 5.9, 6.0]}}}
    honest = {"correct": True, "champion": True, "timing": {"median_ms": 2.02, "method": "async",
                                                           "after_end_event": {"verdict": "idle", "waits_us": [7.0],
                                                                               "idle_us": [6.0]}}}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state("other_stream", {"baseline": honest, "nonblocking_stream": leaves}, "baseline")))
    out, md = tmp_path / "summary.json", tmp_path / "summary.md"
    assert tool().main(["summary", "--other-stream", str(path), "--oom", str(tmp_path / "missing.json"),
                        "--out", str(out), "--md", str(md)]) == 0
    summary = json.loads(out.read_text())
    row = summary["other_stream"]["branches"]["nonblocking_stream"]
    assert row["after_end_event"] == "work left running" and row["waits_us"][0] == 2010.0
    assert row["message"] == "other_stream/cuda/nonblocking_stream: work left running after its calls returned."
    assert summary["other_stream"]["branches"]["baseline"]["after_end_event"] == "idle"
    assert summary["device_oom"]["ran"] is False
    text = md.read_text()
    assert "| nonblocking_stream | False | - | work left running |" in text and "not run:" in text
