"""methods.json rules that rest on the run's probes, analysis.md and the registry's relations (cli/methods.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_dcuopt.cli import methods
from pytest_dcuopt.profile.methods import validate_iteration

CALL = "i32[0] = __builtin_amdgcn_readfirstlane(i32[1])"
SKIP_HIGHER = [{"id": f"compute.{m}", "reason": "no_trigger"} for m in (
    "mmac_tensor_core", "mixed_precision_fp8_bf8", "launch_config_wave64", "thread_coarsening",
    "register_pressure_control", "fast_math_intrinsics")]
ASM = {"id": "compute.inline_asm_builtin", "name": "Readfirstlane", "axis": "compute", "priority": 7,
       "description": "scalarize the row index", "skipped_higher": SKIP_HIGHER}
ONE_COMPUTE = {"compute": 1, "memory": 0, "latency": 0}
SKIP_LATENCY = [{"id": i, "reason": "no_trigger"} for i in
                ("latency.waitcnt_pipeline", "latency.reduce_barrier", "latency.wavefront_shuffle_ds_bpermute")]
UNROLL = {"id": "latency.ilp_unroll", "name": "Unroll", "axis": "latency", "priority": 4,
          "description": "eight accumulators", "skipped_higher": SKIP_LATENCY}


def probe(status: str, arch: str = "gfx936", message: str = "") -> dict[str, Any]:
    return {"call": CALL, "arch": arch, "prelude": "", "status": status, "reason": f"{status} (recorded)",
            "compiler_message": message}


def check(tmp_path: Path, document: dict[str, Any], budget: dict[str, int], probes: list[dict[str, Any]],
          arch: str = "gfx936") -> methods.Validation:
    path = tmp_path / "methods.json"
    path.write_text(json.dumps(document))
    return methods.validate(path, methods.Selection(1, budget, "compute", arch, None, "", (), probes))


def test_a_declared_builtin_needs_a_passing_probe_for_the_iterations_arch(tmp_path: Path) -> None:
    document = {"iter": 1, "methods": [{**ASM, "builtins": [CALL]}]}
    assert check(tmp_path, document, ONE_COMPUTE, [probe("available")]).problems == []
    unprobed = check(tmp_path, document, ONE_COMPUTE, []).problems
    assert len(unprobed) == 1 and "[probe]" in unprobed[0] and "no probe of it is recorded" in unprobed[0]
    assert "dcuopt probe RUN_DIR --arch gfx936 --call" in unprobed[0]
    failed = check(tmp_path, document, ONE_COMPUTE, [probe("unavailable", message="error: use of undeclared")])
    assert "says unavailable" in failed.problems[0] and "error: use of undeclared" in failed.problems[0]
    elsewhere = check(tmp_path, document, ONE_COMPUTE, [probe("available", arch="gfx90a")]).problems
    assert len(elsewhere) == 1 and "no passing probe for gfx936" in elsewhere[0]


def test_the_builtin_method_must_declare_its_call_shapes(tmp_path: Path) -> None:
    problems = check(tmp_path, {"iter": 1, "methods": [ASM]}, ONE_COMPUTE, []).problems
    assert len(problems) == 1 and "compute.inline_asm_builtin declares no `builtins`" in problems[0]


def test_fewer_methods_than_the_budget_pass_only_with_an_explanation_in_analysis_md(tmp_path: Path) -> None:
    document = {"iter": 1, "methods": [UNROLL]}
    budget = {"compute": 0, "memory": 1, "latency": 1}
    bare = check(tmp_path, document, budget, [], arch="gfx90a")
    assert any("[budget] fewer methods than the budget (memory 0/1)" in p and "## Fewer methods than the budget" in p
               for p in bare.problems), bare.problems
    (tmp_path / "analysis.md").write_text("# Iteration 1\n\n## Fewer methods than the budget\nThe loads are already "
                                          "coalesced and vectorized: no memory method applies.\n\n## Branches\n")
    explained = check(tmp_path, document, budget, [], arch="gfx90a")
    assert explained.problems == []
    assert explained.notes == ["[budget] fewer methods than the budget (memory 0/1), explained in analysis.md: The "
                               "loads are already coalesced and vectorized: no memory method applies."]
    more = check(tmp_path, {"iter": 1, "methods": [UNROLL]}, {"compute": 0, "memory": 0, "latency": 0}, [],
                 arch="gfx90a")
    assert any("1 latency method(s) selected, the axis budget is 0" in p for p in more.problems)


def test_an_empty_explanation_heading_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "analysis.md").write_text("## Fewer methods than the budget\n\n## Branches\nb1 b2\n")
    assert methods.fewer_explanation(tmp_path) is None


def test_matrix_cores_and_a_ck_tile_pipeline_may_be_selected_together() -> None:
    document = {"iter": 1, "methods": [
        {"id": "compute.mmac_tensor_core", "axis": "compute", "priority": 1},
        {"id": "memory.ck_tile_named_pipeline", "axis": "memory", "priority": 10,
         "skipped_higher": [{"id": m, "reason": "no_trigger"} for m in (
             "memory.coalesced_access", "memory.vectorized_global_access", "memory.aligned_layout_transform",
             "memory.lds_tiling", "memory.global_to_lds_async", "memory.matrix_load_mls", "memory.lds_bank_conflict",
             "memory.cache_policy_glc_slc")]},
        {"id": "memory.ds_read_matrix_layout", "axis": "memory", "priority": 7,
         "skipped_higher": [{"id": m, "reason": "no_trigger"} for m in (
             "memory.coalesced_access", "memory.vectorized_global_access", "memory.aligned_layout_transform",
             "memory.lds_tiling", "memory.global_to_lds_async", "memory.matrix_load_mls")]}]}
    found = validate_iteration(document, {"compute": 1, "memory": 2, "latency": 0}, "gfx936", "compute")
    assert found == []
