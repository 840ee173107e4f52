"""open-iter's budget inputs: the arch of an x86 profile, the roofline history, the ranked metric count."""
from __future__ import annotations

import json
import platform
from pathlib import Path

from pytest_dcuopt.cli import open_iter
from pytest_dcuopt.cli.layout import RunLayout


def test_an_x86_profile_names_the_host_arch_so_the_registry_can_match_it() -> None:
    arch, source = open_iter.target_arch({"isa_dump": {"family": "x86", "arch": None}}, {"toolchain": "cpu"})
    assert arch == platform.machine() and "x86 code built for this host" in source


def test_the_roofline_history_entry_carries_the_bound_budget_and_registers() -> None:
    budget = {"verdict": "profiled", "bound": "memory", "decided_by": "counters", "utilization": {"memory": 0.4},
              "budget": {"compute": 0, "memory": 2, "latency": 1}, "stop": None, "arch": "gfx90a",
              "registers": {"functions": {"k": {"vgprs": 32}}}, "baseline_file": "b.hip"}
    entry = open_iter.roofline_entry(3, budget)
    assert entry["iter"] == 3 and entry["bound"] == "memory" and entry["registers"] == budget["registers"]
    assert open_iter.roofline_entry(1, None)["bound"] == "unknown"


def test_the_generated_ref_ranks_the_runs_number_of_metrics(tmp_path: Path) -> None:
    state = {"ref_file": str(tmp_path / "ref.py"), "dims": {"N": 4}, "ncu_num": 8}
    layout = RunLayout(tmp_path)
    layout.iteration(1).mkdir()
    open_iter.write_generated(layout, state, 1)
    assert "top=8, sqtt=False" in (layout.iteration(1) / "ref.py").read_text()


def flat_history(*speedups: float | None) -> list[dict]:
    return [{"iter": i, "status": "improved" if s else "no_gain", "speedup_vs_best_before": s}
            for i, s in enumerate(speedups, 1)]


def test_sqtt_triage_is_due_after_three_iterations_without_a_material_gain() -> None:
    state = {"noise_threshold_pct": 2.0, "history": flat_history(1.5, None, 1.01, None)}
    assert open_iter.triage_due(state, 5)  # 1.01x is a promotion below the 2% threshold: not material
    assert not open_iter.triage_due(state, 4)  # only what was closed before the iteration counts
    assert not open_iter.triage_due({"noise_threshold_pct": 2.0, "history": flat_history(None, 1.5, None, None)}, 5)


def test_the_triage_names_the_seeds_command_and_where_to_run_it(tmp_path: Path) -> None:
    state = {"ref_file": str(tmp_path / "ref.py"), "dims": {"N": 4}, "noise_threshold_pct": 2.0,
             "history": flat_history(None, None, None)}
    layout = RunLayout(tmp_path)
    layout.iteration(4).mkdir()
    open_iter.write_generated(layout, state, 4)
    assert "sqtt=True" in (layout.iteration(4) / "ref.py").read_text()  # the profile run asks hipprof for it
    sqtt_dir = layout.iteration(4) / "sqtt" / "sqtt_json"
    sqtt_dir.mkdir(parents=True)
    (sqtt_dir / "thread_trace_1.json").write_text('{"traceEvents": [{"name": "s_waitcnt"}]}')
    record = open_iter.write_triage(layout, state, 4)
    triage = json.loads(Path(record["file"]).read_text())
    assert triage["flat_iterations"] == 3 and "--sqtt" in triage["command"] and "1" in triage["command"]
    assert triage["format"].startswith("unverified format")
    assert triage["passes"][-1]["files"][0]["events_by_kind"] == {"name=s_waitcnt": 1}
