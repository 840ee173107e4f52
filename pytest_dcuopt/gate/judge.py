"""The gate itself: per benchmarked branch a timing verdict against the baseline (re-measuring an AMBIGUOUS one a
bounded number of times), correctness and ISA regressions named in the tests that find them, and the `gate`
entries of state.json."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..report.records import BranchRecord
from .baseline import Baseline, gate_samples_ms, parallelism_warning, refusals
from .rule import AMBIGUOUS, NEW, NOT_TIMED, REFUSED, SLOW, VERDICTS, GateRule, decide, device_timed, too_few_samples
from .stats import Change, ratio_interval

REPORT_NAME = "gate"  # the session's report channel: xdist workers hand these entries to the controller
Remeasure = Callable[[], Sequence[float]]  # a fresh measurement of the branch: samples in milliseconds


@dataclass
class TimingVerdict:
    verdict: str
    reason: str = ""  # why REFUSED / NEW / NOT TIMED, or AMBIGUOUS on too few samples
    change: Change | None = None
    attempts: int = 1  # measurements pooled into the `after` samples
    clocks: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    device: bool = False  # judged as a device-event timing (its default threshold: gate.rule.DEVICE_THRESHOLD)

    @property
    def fails(self) -> bool:
        return self.verdict == SLOW

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason or None,
                "change": self.change.to_json() if self.change else None, "attempts": self.attempts,
                "clocks": self.clocks, "notes": self.notes, "timer_kind": "device" if self.device else "host"}


class Gate:
    def __init__(self, baseline: Baseline, rule: GateRule) -> None:
        self.baseline = baseline
        self.rule = rule

    # ----- during the run -----------------------------------------------------------------------------------------
    def judge_timing(self, record: BranchRecord, identity: str | None, remeasure: Remeasure) -> TimingVerdict:
        """The timing verdict of a branch this run just timed; AMBIGUOUS re-measures up to `rule.retries` times."""
        before = self.baseline.branch(record.case, record.toolchain, record.branch, record.size)
        if before is None:
            at = f" at size {record.size}" if record.size else ""
            return TimingVerdict(NEW, f"{record.branch}{at} is not in the baseline run")
        after = record.to_json()
        reasons = refusals(before, after, self.baseline.identity(record.toolchain), identity)
        if reasons:
            return TimingVerdict(REFUSED, "; ".join(reasons))
        verdict = judge_samples(gate_samples_ms(before["timing"]) or [], gate_samples_ms(after["timing"]) or [],
                                self.rule, remeasure, device=device_timed(before["timing"]))
        verdict.clocks = compare_clocks(before["timing"], after["timing"], self.rule)
        if verdict.clocks and verdict.clocks["differs"]:
            verdict.notes.append(clock_note(verdict.clocks))
        return verdict

    def slow_message(self, label: str, verdict: TimingVerdict) -> str:
        assert verdict.change is not None
        change = verdict.change
        device = verdict.device
        margin = self.rule.margin(change.before_median_ms, device)
        threshold = self.rule.threshold_for(device)
        kind = "device" if device else "host"
        default = "" if self.rule.threshold is not None else f", the default for {kind} timings"
        lines = [f"SLOW vs the baseline run {self.baseline.label}: {label} median {change.before_median_ms:.6g} ms "
                 f"-> {change.after_median_ms:.6g} ms ({change.shift_ms * 1e3:+.4g} us); change {change.rel:+.2%}, "
                 f"{change.confidence:.0%} interval {change.rel_low:+.2%} .. {change.rel_high:+.2%} "
                 f"({change.before_n} samples then, {change.after_n} now, {verdict.attempts} measurement(s)).",
                 f"Rule: fail when the interval excludes no change and the change exceeds {margin:.2%} (the larger of "
                 f"--dcuopt-compare-threshold={threshold:g}{default} and --dcuopt-compare-floor-us="
                 f"{self.rule.floor_us:g} us).", *verdict.notes,
                 "If the slowdown is intended, make this run the new baseline (keep its state.json)."]
        return "\n".join(lines)

    def regression_note(self, record: BranchRecord, kind: str) -> str | None:
        """`kind` is correctness or isa: a line naming the regression when the baseline passed where this run
        fails, else None."""
        before = self.baseline.branch(record.case, record.toolchain, record.branch)
        if before is None or not regressed(kind, before, record.to_json()):
            return None
        what = "its correctness test passed" if kind == "correctness" else "its ISA check passed"
        return (f"REGRESSION ({kind}): in the baseline run {self.baseline.label} {what}; in this run it fails.")

    # ----- at the end: state.json ---------------------------------------------------------------------------------
    def attach(self, state: dict[str, Any], entries: Iterable[Mapping[str, Any]]) -> None:
        """Add `gate` to every branch of `state` (to each benchmark size of a branch timed at sizes) and a `gate`
        summary at the top (counts, what is missing)."""
        timed = {(e["case"], e["toolchain"], e["branch"], *([e["size"]] if e.get("size") else [])): e["timing"]
                 for e in entries}
        counts = dict.fromkeys(VERDICTS, 0)
        regressions: set[tuple[tuple[str, ...], str]] = set()  # a branch's regression counts once, whatever its sizes
        units = gated_units(state)
        for key, unit, view in units:
            unit["gate"] = self.branch_gate(key, view, timed.get(key))
            counts[unit["gate"]["verdict"]] += 1
            regressions.update((key[:3], kind) for kind in unit["gate"]["regressions"])
        present = {(self.baseline.case_key(key[0]), *key[1:]) for key, _, _ in units}
        state["gate"] = {
            "baseline": str(self.baseline.path), "baseline_created_at": self.baseline.state.get("created_at"),
            "rule": self.rule.to_json(), "counts": {k: v for k, v in counts.items() if v},
            "regressions": len(regressions),
            "missing": ["/".join(k) for k in self.baseline.branch_keys() if k not in present],
        }
        workers = (state.get("scope") or {}).get("workers")
        warning = parallelism_warning(self.baseline.workers, workers if isinstance(workers, int) else None)
        if warning is not None:
            state["gate"]["parallelism"] = {"baseline_workers": self.baseline.workers, "workers": workers,
                                            "warning": warning}

    def branch_gate(self, key: tuple[str, ...], branch: Mapping[str, Any],
                    timing: Mapping[str, Any] | None) -> dict[str, Any]:
        before = self.baseline.branch(*key)
        if timing is not None:
            gate = dict(timing)
        elif before is None:
            gate = TimingVerdict(NEW, f"{key[2]} is not in the baseline run").to_json()
        else:
            why = branch.get("skipped") or "not benchmarked in this run (deselected, or failed before timing)"
            gate = TimingVerdict(NOT_TIMED, why).to_json()
        gate["regressions"] = [] if before is None else [kind for kind in ("correctness", "isa")
                                                         if regressed(kind, before, branch)]
        gate["before"] = None if before is None else {"correct": before.get("correct"),
                                                      "isa": (before.get("isa") or {}).get("outcome")}
        return gate


def judge_samples(before_ms: Sequence[float], after_ms: Sequence[float], rule: GateRule,
                  remeasure: Remeasure, device: bool = False) -> TimingVerdict:
    """The gate's timing rule on two sample sets (milliseconds): the verdict of `decide`; while it is AMBIGUOUS, or
    this run has fewer than `rule.min_samples`, up to `rule.retries` fresh measurements (`remeasure`) are pooled into
    `after_ms` and the interval is recomputed. AMBIGUOUS with a reason while either side has too few samples (a
    baseline's cannot grow: it is not re-measured); REFUSED when the samples cannot be compared (non-positive). The
    public form of what `Gate` does per branch, for callers holding samples rather than state.json records
    (tools/device/gate_check.py, tools/gate_cpu_check.py)."""
    verdict = TimingVerdict(AMBIGUOUS, device=device)
    pooled = list(after_ms)
    for attempt in range(1 + rule.retries):
        if attempt:
            pooled += remeasure()
        verdict.attempts = attempt + 1
        short = too_few_samples(len(before_ms), len(pooled), rule)
        change = None
        if not (short and min(len(before_ms), len(pooled)) < 2):  # an interval needs 2 a side
            try:
                change = verdict.change = ratio_interval(before_ms, pooled, rule.confidence)
            except ValueError as exc:  # too few or non-positive samples
                return TimingVerdict(REFUSED, str(exc))
        if short or change is None:
            verdict.verdict, verdict.reason = AMBIGUOUS, short or ""
            if len(before_ms) < rule.min_samples:
                break  # re-measuring this run cannot add to the baseline
            continue
        verdict.verdict, verdict.reason = decide(change, rule, device), ""
        if verdict.verdict != AMBIGUOUS:
            break
    return verdict


def gated_units(state: Mapping[str, Any]) -> list[tuple[tuple[str, ...], dict[str, Any], dict[str, Any]]]:
    """(key, the entry that gets `gate`, what it is judged on) per branch, or per benchmark size of a branch timed
    at sizes: key (case, toolchain, branch, size), the size's entry, judged as the size's entry over the branch's."""
    found: list[tuple[tuple[str, ...], dict[str, Any], dict[str, Any]]] = []
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            for name, branch in result["branches"].items():
                sizes = branch.get("sizes") or {}
                found += [((case, toolchain, name, size), sized, {**branch, **sized}) for size, sized in sizes.items()]
                found += [] if sizes else [((case, toolchain, name), branch, branch)]
    return found


def regressed(kind: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Correct then and incorrect now; or an ISA outcome of pass then and fail now."""
    if kind == "correctness":
        return before.get("correct") is True and after.get("correct") is False
    if kind == "isa":
        return (before.get("isa") or {}).get("outcome") == "pass" and (after.get("isa") or {}).get("outcome") == "fail"
    raise ValueError(f"unknown regression kind {kind!r}: correctness or isa")


def sm_clock_mhz(timing: Mapping[str, Any]) -> float | None:
    """The SM clock during sampling (median of the reads), else the one read before it; None when not recorded."""
    telemetry = timing.get("telemetry") or {}
    during = telemetry.get("sm_clock_mhz_during") or {}
    value = during.get("median") or (telemetry.get("before") or {}).get("sm_clock_mhz")
    return float(value) if value else None


def compare_clocks(before: Mapping[str, Any], after: Mapping[str, Any], rule: GateRule) -> dict[str, Any] | None:
    """Both runs' SM clocks and whether they differ by more than `rule.clock_tolerance`. Times are not rescaled by
    the clock ratio: a memory-bound kernel does not slow down with the SM clock, so a rescaled time would be wrong
    as often as right; a flagged difference is named in the verdict instead."""
    then, now = sm_clock_mhz(before), sm_clock_mhz(after)
    if then is None or now is None:
        return None
    rel = now / then - 1
    return {"before_mhz": then, "after_mhz": now, "change": round(rel, 4), "differs": abs(rel) > rule.clock_tolerance}


def clock_note(clocks: Mapping[str, Any]) -> str:
    return (f"Clocks differ: SM clock {clocks['before_mhz']:.0f} MHz then, {clocks['after_mhz']:.0f} MHz now "
            f"({clocks['change']:+.1%}); a compute-bound kernel's time scales with it. Lock the clocks "
            "(nvidia-smi -lgc / rocm-smi --setperfdeterminism) on both runs to compare like with like.")


def entry(record: BranchRecord, verdict: TimingVerdict) -> dict[str, Any]:
    """The report entry of one timing verdict (what xdist workers hand to the controller)."""
    return {"case": record.case, "toolchain": record.toolchain, "branch": record.branch, "size": record.size,
            "timing": verdict.to_json()}

