"""The gate against a baseline state.json: refusals, verdicts with re-measurement, regressions, the state's `gate`
entries, summary.md and $GITHUB_STEP_SUMMARY (gate.baseline, gate.judge, gate.ci, report.summary)."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_dcuopt.gate import Gate, GateRule, entry, judge_samples
from pytest_dcuopt.gate.baseline import Baseline, build_signature, refusals, resolve_baseline
from pytest_dcuopt.gate.ci import append_step_summary
from pytest_dcuopt.gate.judge import compare_clocks
from pytest_dcuopt.gate.rule import AMBIGUOUS, FAST, NEW, NOT_TIMED, REFUSED, SAME, SLOW
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import build_state, validate_state
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import summarize

IDENTITY = "g++ (Debian 12.2.0-14) 12.2.0 | AMD EPYC"


DEFAULT_RULE = GateRule()


def times(median_ms: float, spread: float, n: int = 200, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(t) for t in median_ms * (1 + spread * (rng.lognormal(0.0, 0.5, n) - 1.0))]


def record(branch: str, samples_ms: Sequence[float] | None, *, root: str = "/ci/a", dims: int = 1000,
           flags: str = "-O3", device: str = "AMD EPYC", mode: str = "cold", correct: bool | None = True,
           isa: str | None = None, clock_mhz: float | None = None) -> BranchRecord:
    source = f"case/branches/{branch}/kernel.cpp"
    rec = BranchRecord("case", "cpu", branch, source, correct=correct)
    rec.build = {"toolchain": "cpu", "artifact": f"{root}/.dcuopt/build-cache/{branch}key/kernel.so",
                 "command": f"/usr/bin/g++ {flags} -shared -fPIC -o {root}/.dcuopt/build-cache/{branch}key/kernel.so "
                            f"{root}/{source}"}
    rec.device = {"device": device, "timer": "host perf_counter_ns"}
    if samples_ms is not None:
        rec.timing = {**summarize([t * 1e-3 for t in samples_ms]).to_json(), "mode": mode,
                      "timer": "host perf_counter_ns", "dims": {"N": dims}, "samples_ms": list(samples_ms)}
        if clock_mhz is not None:
            rec.timing["telemetry"] = {"sm_clock_mhz_during": {"median": clock_mhz}}
    if isa is not None:
        rec.isa = {"outcome": isa, "family": "x86", "arch": None, "verdicts": []}
    return rec


def write_state(directory: Path, records: list[BranchRecord], identity: str = IDENTITY) -> Path:
    header = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "2024-01-01T00:00:00",
              "finished_at": "2024-01-01T00:01:00", "run_dir": str(directory), "machine": {}, "options": {},
              "toolchains": {"cpu": {"capability": "run", "reason": "", "identity": identity}}}
    state = build_state(records, header)
    validate_state(state)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "state.json").write_text(json.dumps(state))
    return directory / "state.json"


def gate_over(tmp_path: Path, records: list[BranchRecord], rule: GateRule = DEFAULT_RULE) -> Gate:
    return Gate(Baseline.load(write_state(tmp_path / "base", records)), rule)


def never(*_: Any) -> list[float]:
    raise AssertionError("re-measured although the verdict was clear")


# ----- what must match ------------------------------------------------------------------------------------------------
def as_json(rec: BranchRecord) -> dict[str, Any]:
    return rec.to_json()


def test_two_checkouts_of_one_build_compare_equal_and_a_flag_does_not() -> None:
    a, b = as_json(record("b1", [1.0] * 3, root="/ci/a")), as_json(record("b1", [1.0] * 3, root="/home/me/src"))
    assert build_signature(a) == build_signature(b)
    assert "-O3" in build_signature(a)
    assert refusals(a, b, IDENTITY, IDENTITY) == []
    reasons = refusals(a, as_json(record("b1", [1.0] * 3, flags="-O2")), IDENTITY, IDENTITY)
    assert len(reasons) == 1 and reasons[0].startswith("build command differs") and "-O2" in reasons[0]


@pytest.mark.parametrize(("changed", "expected"), [
    ({"device": "Intel Xeon"}, "device differs"),
    ({"dims": 2000}, "dims differs"),
    ({"mode": "hot"}, "timing mode differs"),
])
def test_a_different_device_dims_or_timing_mode_is_refused(changed: dict[str, Any], expected: str) -> None:
    before = as_json(record("b1", [1.0] * 3))
    reasons = refusals(before, as_json(record("b1", [1.0] * 3, **changed)), IDENTITY, IDENTITY)
    assert len(reasons) == 1 and expected in reasons[0], reasons


def test_samples_taken_beside_other_xdist_workers_without_the_lock_are_refused() -> None:
    before, after = as_json(record("b1", [1.0] * 3)), as_json(record("b1", [1.0] * 3))
    after["timing"]["concurrent_workers"] = 2
    reasons = refusals(before, after, IDENTITY, IDENTITY)
    assert len(reasons) == 1 and reasons[0].startswith("this run timed it while 2 xdist workers shared the machine")
    after["timing"]["device_lock"] = {"name": "host-cpu", "held": True, "waited_s": 0.2}
    assert refusals(before, after, IDENTITY, IDENTITY) == []


def test_a_different_compiler_is_refused_naming_both() -> None:
    before = as_json(record("b1", [1.0] * 3))
    reasons = refusals(before, as_json(record("b1", [1.0] * 3)), IDENTITY, "g++ 13.1")
    assert reasons == [f"compiler identity differs: {IDENTITY!r} then, 'g++ 13.1' now"]


def test_a_baseline_without_timing_or_raw_samples_is_refused_with_why() -> None:
    skipped = record("b1", None)
    skipped.skipped = "not benchmarked: case/cpu/b1 failed its correctness test"
    assert "failed its correctness test" in refusals(as_json(skipped), as_json(record("b1", [1.0] * 3)), None, None)[0]
    no_samples = as_json(record("b1", [1.0] * 3))
    del no_samples["timing"]["samples_ms"]
    assert "no raw samples" in refusals(no_samples, as_json(record("b1", [1.0] * 3)), None, None)[0]


def test_latest_and_run_dirs_resolve_and_a_missing_baseline_is_a_usage_error(tmp_path: Path) -> None:
    path = write_state(tmp_path / "runs" / "run_1", [record("b1", [1.0] * 3)])
    (tmp_path / "runs" / "latest").symlink_to("run_1")
    this_run = tmp_path / "runs" / "run_2"
    assert resolve_baseline("latest", this_run) == path.resolve()
    assert resolve_baseline(str(path.parent), this_run) == path.resolve()
    with pytest.raises(pytest.UsageError, match="run once without --dcuopt-compare"):
        resolve_baseline("latest", tmp_path / "elsewhere" / "run_3")
    (tmp_path / "bad.json").write_text('{"schema_version": 99}')
    with pytest.raises(pytest.UsageError, match="schema_version 99"):
        Baseline.load(tmp_path / "bad.json")


# ----- verdicts ----------------------------------------------------------------------------------------------------
def test_verdicts_of_a_timed_branch(tmp_path: Path) -> None:
    gate = gate_over(tmp_path, [record(b, times(1.0, 0.01, seed=i)) for i, b in enumerate(("b1", "b2", "b3"))])
    assert gate.judge_timing(record("b1", times(1.0, 0.01, seed=10)), IDENTITY, never).verdict == SAME
    slow = gate.judge_timing(record("b2", times(1.12, 0.01, seed=11)), IDENTITY, never)
    assert slow.verdict == SLOW and slow.fails and slow.attempts == 1
    assert gate.judge_timing(record("b3", times(0.8, 0.01, seed=12)), IDENTITY, never).verdict == FAST
    assert gate.judge_timing(record("new", times(1.0, 0.01)), IDENTITY, never).verdict == NEW
    refused = gate.judge_timing(record("b1", times(1.0, 0.01), dims=7), IDENTITY, never)
    assert refused.verdict == REFUSED and "dims differs" in refused.reason and not refused.fails
    message = gate.slow_message("case/cpu/b2", slow)
    assert "case/cpu/b2 median" in message and "interval" in message and str(gate.baseline.path) in message


def test_ambiguous_is_remeasured_and_pooled_until_clear(tmp_path: Path) -> None:
    gate = gate_over(tmp_path, [record("b1", times(1.0, 0.01, n=300))])
    calls: list[int] = []

    def remeasure() -> list[float]:
        calls.append(1)
        return times(1.0, 0.01, n=300, seed=len(calls))

    noisy = times(1.0, 0.6, n=8, seed=42)
    verdict = gate.judge_timing(record("b1", noisy), IDENTITY, remeasure)
    assert verdict.verdict == SAME and verdict.attempts == len(calls) + 1 >= 2
    assert verdict.change is not None and verdict.change.after_n == 8 + 300 * len(calls)


def test_ambiguous_after_every_retry_is_reported_without_failing(tmp_path: Path) -> None:
    gate = gate_over(tmp_path, [record("b1", times(1.0, 0.01, n=300))], GateRule(retries=2))
    calls: list[int] = []

    def still_noisy() -> list[float]:
        calls.append(1)
        return times(1.0, 0.6, n=4, seed=100 + len(calls))

    verdict = gate.judge_timing(record("b1", times(1.0, 0.6, n=4, seed=7)), IDENTITY, still_noisy)
    assert (verdict.verdict, verdict.attempts, len(calls), verdict.fails) == (AMBIGUOUS, 3, 2, False)


def test_clocks_are_recorded_and_a_difference_flagged(tmp_path: Path) -> None:
    rule = GateRule()
    assert compare_clocks({}, {}, rule) is None
    same = compare_clocks({"telemetry": {"sm_clock_mhz_during": {"median": 1980}}},
                          {"telemetry": {"before": {"sm_clock_mhz": 1950}}}, rule)
    assert same == {"before_mhz": 1980.0, "after_mhz": 1950.0, "change": -0.0152, "differs": False}
    gate = gate_over(tmp_path, [record("b1", times(1.0, 0.01), clock_mhz=1980)])
    verdict = gate.judge_timing(record("b1", times(1.0, 0.01, seed=3), clock_mhz=1500), IDENTITY, never)
    assert verdict.clocks is not None and verdict.clocks["differs"]
    assert any("1980 MHz then, 1500 MHz now" in note for note in verdict.notes)


def test_regressions_are_named_where_the_baseline_passed(tmp_path: Path) -> None:
    gate = gate_over(tmp_path, [record("b1", times(1.0, 0.01), isa="pass"), record("b2", None, correct=False)])
    note = gate.regression_note(record("b1", None, correct=False), "correctness")
    assert note is not None and note.startswith("REGRESSION (correctness)") and str(gate.baseline.path) in note
    assert gate.regression_note(record("b1", None, isa="fail"), "isa") is not None
    assert gate.regression_note(record("b1", None, isa="inconclusive"), "isa") is None
    assert gate.regression_note(record("b2", None, correct=False), "correctness") is None  # was wrong already


# ----- state.json, summary.md, the terminal, $GITHUB_STEP_SUMMARY ---------------------------------------------------
def gated_state(tmp_path: Path) -> dict[str, Any]:
    base = [record("baseline", times(1.0, 0.01)), record("slows", times(1.0, 0.01, seed=1)),
            record("breaks", times(1.0, 0.01, seed=2)), record("gone", times(1.0, 0.01, seed=3))]
    gate = gate_over(tmp_path, base)
    now = [record("baseline", times(1.0, 0.01, seed=5)), record("slows", times(1.2, 0.01, seed=6)),
           record("breaks", None, correct=False), record("new", times(1.0, 0.01))]
    now[2].skipped = "not benchmarked: case/cpu/breaks failed its correctness test"
    entries = [entry(r, gate.judge_timing(r, IDENTITY, never)) for r in (now[0], now[1], now[3])]
    header = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "now", "finished_at": "now",
              "run_dir": str(tmp_path / "run"), "machine": {}, "options": {}}
    state = build_state(now, header)
    gate.attach(state, json.loads(json.dumps(entries)))  # as an xdist worker hands them over
    validate_state(state)
    return state


def test_the_state_gets_a_gate_entry_per_branch_and_a_summary(tmp_path: Path) -> None:
    state = gated_state(tmp_path)
    branches = state["cases"]["case"]["toolchains"]["cpu"]["branches"]
    verdicts = {name: (b["gate"]["verdict"], b["gate"]["regressions"]) for name, b in branches.items()}
    assert verdicts == {"baseline": (SAME, []), "slows": (SLOW, []), "breaks": (NOT_TIMED, ["correctness"]),
                        "new": (NEW, [])}
    assert branches["slows"]["gate"]["change"]["change"] > 0.15
    assert state["gate"]["counts"] == {SAME: 1, SLOW: 1, NEW: 1, NOT_TIMED: 1}
    assert state["gate"]["regressions"] == 1 and state["gate"]["missing"] == ["case/cpu/gone"]


def test_summary_terminal_and_step_summary_show_the_gate_table(tmp_path: Path) -> None:
    state = gated_state(tmp_path)
    summary = render_summary(state)
    assert "## Gate vs baseline" in summary
    row = next(line for line in summary.splitlines() if line.startswith("| case ") and "| slows " in line)
    assert "| SLOW " in row and "+20" in row
    assert any("| breaks " in line and "correctness" in line for line in terminal_lines(state))
    target = tmp_path / "step_summary.md"
    target.write_text("earlier step\n")
    assert append_step_summary(state, {"GITHUB_STEP_SUMMARY": str(target)}) == target
    written = target.read_text()
    assert written.startswith("earlier step\n") and "## pytest_dcuopt gate vs baseline" in written
    assert "| slows " in written
    assert append_step_summary(state, {}) is None


def test_an_ungated_run_has_no_gate_section(tmp_path: Path) -> None:
    header = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "now", "finished_at": "now",
              "run_dir": str(tmp_path), "machine": {}, "options": {}}
    state = build_state([record("baseline", times(1.0, 0.01))], header)
    assert "Gate" not in render_summary(state)
    assert append_step_summary(state, {"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")}) is None
    assert not (tmp_path / "s.md").exists()


def test_the_default_threshold_depends_on_the_timer_a_5_percent_device_regression_is_slow() -> None:
    """Device events repeat within about +/-0.7% (H200 A/A pairs), so their default margin is 2% and a 4.8% slowdown
    fails; a host clock keeps 5%, where the same change is not called SLOW. An explicit threshold applies to both."""
    from pytest_dcuopt.gate import GateRule, judge_samples
    from pytest_dcuopt.gate.rule import DEVICE_THRESHOLD, HOST_THRESHOLD, device_timed

    before = [0.0870 + 0.0001 * (i % 7) for i in range(300)]
    after = [t * 1.048 for t in before]
    rule = GateRule(retries=0)
    assert (DEVICE_THRESHOLD, HOST_THRESHOLD) == (0.02, 0.05)
    assert judge_samples(before, after, rule, list, device=True).verdict == "SLOW"
    assert judge_samples(before, after, rule, list, device=False).verdict != "SLOW"
    assert judge_samples(before, after, GateRule(threshold=0.05, retries=0), list, device=True).verdict != "SLOW"
    assert device_timed({"timer": "cuda events"}) and device_timed({"timer": "cuda events (sync hooks)"})
    assert not device_timed({"timer": "host perf_counter_ns"})
    assert rule.to_json()["threshold_device"] == 0.02 and rule.to_json()["threshold_host"] == 0.05


# ----- too few samples: no verdict ------------------------------------------------------------------------------------
def test_a_baseline_with_too_few_samples_is_ambiguous_saying_why_and_not_remeasured(tmp_path: Path) -> None:
    """Three samples a side of a 14% slowdown: the rule alone would call it SLOW (all 9 pairwise ratios above 1);
    with the minimum of 10 a side it is AMBIGUOUS, naming the count, the minimum and the options to change."""
    before, after = [1.00, 1.01, 1.02], [1.14, 1.15, 1.16]
    assert judge_samples(before, after, GateRule(min_samples=3), never).verdict == SLOW
    verdict = judge_samples(before, times(1.15, 0.01, n=300), GateRule(), never)
    assert (verdict.verdict, verdict.fails, verdict.attempts) == (AMBIGUOUS, False, 1)
    assert "the baseline has 3, fewer than the minimum of 10" in verdict.reason
    assert "--dcuopt-max-time" in verdict.reason and "--dcuopt-min-samples" in verdict.reason
    assert verdict.change is not None and verdict.change.before_n == 3  # the figures are still reported


def test_too_few_samples_in_this_run_are_remeasured_until_there_are_enough(tmp_path: Path) -> None:
    calls: list[int] = []

    def remeasure() -> list[float]:
        calls.append(1)
        return [1.0, 1.01, 1.02, 0.99]

    before = times(1.0, 0.005, n=100)
    verdict = judge_samples(before, [1.0, 1.01, 0.99], GateRule(retries=2), remeasure)
    assert (verdict.verdict, verdict.attempts, len(calls), verdict.reason) == (SAME, 3, 2, "")
    assert verdict.change is not None and verdict.change.after_n == 11

    calls.clear()
    short = judge_samples(before, [1.0], GateRule(retries=1), remeasure)
    assert (short.verdict, len(calls)) == (AMBIGUOUS, 1)
    assert "this run has 5, fewer than the minimum of 10" in short.reason


def test_a_branch_with_too_few_samples_gets_an_entry_saying_why(tmp_path: Path) -> None:
    gate = gate_over(tmp_path, [record("b1", [1.0, 1.01, 1.02])], GateRule(min_samples=10))
    verdict = gate.judge_timing(record("b1", [1.3, 1.31, 1.32]), IDENTITY, lambda: [])
    assert verdict.verdict == AMBIGUOUS and "too few samples" in verdict.reason
    state = json.loads(json.dumps({"gate": entry(record("b1", [1.0]), verdict)}))
    assert "too few samples" in state["gate"]["timing"]["reason"]
