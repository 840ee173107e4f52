"""The regression gate (--dcuopt-compare; docs/gating.md): this run's branches against an earlier run's state.json.

`stats` (the Hodges-Lehmann ratio and its interval), `rule` (verdicts and the dual rule), `baseline` (loading the
baseline, what must match), `judge` (`Gate`: verdicts, regressions, state.json entries), `ci` ($GITHUB_STEP_SUMMARY).
The session calls `build_gate` once, `Gate.judge_timing` after a branch is timed, `Gate.regression_note` where a
correctness or ISA verdict fails, and `Gate.attach` before state.json is written.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..options import Options
from .baseline import Baseline, resolve_baseline, xdist_workers
from .judge import REPORT_NAME, Gate, TimingVerdict, entry, judge_samples
from .rule import GateRule


def build_gate(options: Options, selection: Sequence[str] = ()) -> Gate | None:
    """The run's gate, or None without --dcuopt-compare. Raises pytest.UsageError for a missing or bad baseline, or
    one that ran less than this run selects (`selection`: what picked part of this run's tests)."""
    if options.compare is None:
        return None
    baseline = Baseline.load(resolve_baseline(options.compare, options.run_dir), selection)
    rule = GateRule(threshold=options.compare_threshold, floor_us=options.compare_floor_us,
                    retries=options.compare_retries, min_samples=options.policy.min_samples)
    return Gate(baseline, rule)


__all__ = ["REPORT_NAME", "Gate", "GateRule", "TimingVerdict", "build_gate", "entry", "judge_samples",
           "xdist_workers"]
