"""`dcuopt env` (probe through the registry), `finalize`'s summary, close-iter's method rules."""
from __future__ import annotations

import pytest

from pytest_dcuopt.cli import buckets, close_iter, env, finalize
from pytest_dcuopt.toolchains import registered_names


@pytest.mark.parametrize(("arch", "lanes"), [("gfx936", 64), ("gfx90a:sramecc+:xnack-", 64), ("gfx1100", 32),
                                             ("sm_90", 32), ("sm_90a", 32), ("x86_64", None), (None, None)])
def test_wave_size_by_arch(arch: str | None, lanes: int | None) -> None:
    assert env.wave_size(arch) == lanes


def test_env_probes_every_registered_toolchain_and_every_tool() -> None:
    probed = env.probe()
    assert sorted(probed["toolchains"]) == registered_names()
    assert set(env.TOOLS) | {"ck_tile_headers"} == set(probed["tools"])
    missing = {name for name, entry in probed["tools"].items() if not entry["available"]}
    assert set(probed["degraded"]) == missing


def history(status: str, speedup: float | None, it: int) -> dict:
    return {"iter": it, "status": status, "champion": "b1" if speedup else None, "best_before_ms": 2.0, "ms": 1.0,
            "speedup_vs_best_before": speedup, "speedup_interval": [speedup, speedup] if speedup else None,
            "methods": []}


def test_overall_speedup_is_the_product_of_promotions_only() -> None:
    state = {"history": [history("improved", 2.0, 1), history("no_gain", 1.01, 2), history("improved", 1.5, 3)]}
    assert finalize.overall_speedup(state) == pytest.approx(3.0)
    assert finalize.overall_speedup({"history": [history("no_gain", None, 1)]}) is None


def test_three_flat_iterations_recommend_sqtt_triage() -> None:
    flat = [history("improved", 2.0, 1)] + [history("no_gain", None, i) for i in (2, 3)]
    assert close_iter.recommendation({"history": flat}) is None
    flat.append(history("all_branches_failed", None, 4))
    assert "SQTT" in (close_iter.recommendation({"history": flat}) or "")


METHOD = [{"id": "latency.ilp_unroll", "name": "u", "axis": "latency"}]


def test_a_failed_ablation_is_inconclusive_never_effective() -> None:
    outcome = {"promoted": True, "ablation": {"methods": {"latency.ilp_unroll": {"outcome": "incorrect",
                                                                                 "message": "wrong"}}}}
    (entry,) = buckets.classify(METHOD, outcome)
    assert entry["bucket"] == "inconclusive"


def test_methods_without_a_champion_are_ineffective_only_when_something_was_measured() -> None:
    assert buckets.classify(METHOD, {"promoted": False, "any_correct_branch": True})[0]["bucket"] == "ineffective"
    assert buckets.classify(METHOD, {"promoted": False, "any_correct_branch": False})[0]["bucket"] == "inconclusive"
