"""The `ablation` marker end to end (pytester): one real optimization, one placebo, a broken switch.

Fixture case: tests/data/cases/ablation_rowsum (row sums; branch `unrolled` has eight accumulators behind
`#ifndef DCUOPT_NO_UNROLL` and a block that changes nothing behind `#ifndef DCUOPT_NO_PLACEBO`). The observer
is built in (plugin.py). Timing-based verdicts are asserted only with wide margins (a serial float chain is several
times slower than eight accumulators, and the ablation adds rounds while a method is inconclusive; a placebo within a
factor of two); the verdict and round rules are unit-tested on fixed numbers in tests/unit/test_ablation_verdict.py
and tests/unit/observe/test_ablation.py.
"""
from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from tests.conftest import CASES, FAST
from tests.context import skip_if_no_gxx

ROWSUM = CASES / "ablation_rowsum"


def run_ablation(pytester: pytest.Pytester, cache: Path, case: Path = ROWSUM) -> pytest.RunResult:
    """The ablation test of `case`, copied into the pytester folder."""
    shutil.copytree(case, pytester.path / case.name)
    fast = [a for a in FAST if not a.startswith("--dcuopt-max-time")]
    return pytester.runpytest_subprocess(case.name, "-k", "test_ablation", f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / 'run'}", "--dcuopt-max-time=0.8",
                                         *fast, "-rs")


@skip_if_no_gxx
def test_removing_the_unroll_slows_the_branch_and_the_placebo_is_measured(pytester, shared_build_cache) -> None:
    result = run_ablation(pytester, shared_build_cache)
    result.assert_outcomes(passed=1)
    (entry,) = json.loads((pytester.path / "run" / "ablation.json").read_text())["ablations"]
    assert (entry["case"], entry["toolchain"], entry["branch"]) == ("ablation_rowsum", "cpu", "unrolled")
    unroll, placebo = entry["methods"]["latency.ilp_unroll"], entry["methods"]["noop.placebo"]
    # A serial float chain is much slower: a disturbed round widens the interval, and rounds go on (up to 12) until
    # it clears "no effect", so a several-fold effect is "helps" on a busy machine too.
    assert unroll["outcome"] == "helps", unroll
    assert statistics.median(unroll["round_ratios"]) > 1.2, unroll
    assert unroll["flags"] == ["-DDCUOPT_NO_UNROLL"]
    # The placebo: built, checked and timed in every round. Its verdict is a few-percent question, which a loaded
    # machine can tilt (docs/loop.md has the five-run figure); no several-fold effect is asserted here.
    assert placebo["outcome"] in ("no measurable effect", "inconclusive", "helps", "hurts"), placebo
    low, high = placebo["slowdown_interval"]
    assert 0.5 < low <= placebo["slowdown_when_removed"] <= high < 2.0, placebo
    # one paired ratio per round: at least the default 4, more while a method was inconclusive, at most 12
    assert len(placebo["round_ratios"]) == entry["rounds"] and 4 <= entry["rounds"] <= 12, entry["rounds"]
    assert (entry["min_rounds"], entry["max_rounds"]) == (4, 12)
    # Both removed: several-fold slower like the unroll alone; the interaction is the ratio to the singles' product.
    pair = entry["interactions"]["latency.ilp_unroll + noop.placebo"]
    assert pair["flags"] == ["-DDCUOPT_NO_UNROLL", "-DDCUOPT_NO_PLACEBO"] and pair["outcome"] == "helps", pair
    assert pair["interaction_outcome"] in ("independent", "synergy", "redundant"), pair
    assert 0.5 < pair["interaction"] < 2.0, pair
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    recorded = state["cases"]["ablation_rowsum"]["toolchains"]["cpu"]["branches"]["unrolled"]["observations"]
    assert recorded["ablation"]["methods"]["latency.ilp_unroll"]["outcome"] == "helps"
    summary = (pytester.path / "run" / "summary.md").read_text()
    assert f"- Ablation **unrolled** ({entry['rounds']} rounds):" in summary
    assert "  - `latency.ilp_unroll`: helps, " in summary and "slower without it" in summary


@skip_if_no_gxx
def test_an_ablated_build_that_is_wrong_is_reported_incorrect_not_essential(pytester, shared_build_cache,
                                                                            tmp_path) -> None:
    case = tmp_path / "ablation_rowsum"
    shutil.copytree(ROWSUM, case)
    source = case / "branches" / "unrolled" / "kernel.cpp"
    # Removing this "method" drops the remainder loop: K % 8 != 0 rows come out wrong.
    source.write_text(source.read_text().replace("for (; k < K; ++k) s += row[k];",
                                                 "\n#ifndef DCUOPT_NO_TAIL\nfor (; k < K; ++k) s += row[k];\n#endif\n"))
    ref = case / "ref.py"
    ref.write_text(ref.read_text().replace('"noop.placebo": "-DDCUOPT_NO_PLACEBO"', '"tail": "-DDCUOPT_NO_TAIL"'))
    result = run_ablation(pytester, shared_build_cache, case)
    result.assert_outcomes(passed=1)
    entry = json.loads((pytester.path / "run" / "ablation.json").read_text())["ablations"][0]
    tail = entry["methods"]["tail"]
    assert tail["outcome"] == "incorrect", tail
    assert "slowdown_when_removed" not in tail
    # The unroll is measured beside it (its verdict is the test above's).
    unroll = entry["methods"]["latency.ilp_unroll"]
    assert unroll["outcome"] == "helps" and len(unroll["round_ratios"]) == entry["rounds"], unroll


def test_a_mark_without_methods_fails_with_the_fix(pytester, shared_build_cache, tmp_path) -> None:
    case = tmp_path / "ablation_rowsum"
    shutil.copytree(ROWSUM, case)
    ref = case / "ref.py"
    ref.write_text(ref.read_text().replace("pytest.mark.ablation(methods=", "pytest.mark.ablation(flags="))
    result = run_ablation(pytester, shared_build_cache, case)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ablation mark: unknown keyword(s) ?'flags'?; allowed: ?'methods', 'rounds'*"])
