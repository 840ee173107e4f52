"""The gate's figures on one GPU (driven by tools/device/gate_check.sh; runs on the CPU too, `--toolchain cpu`).

Subcommands (run from the repository root; the case is a copy of tests/data/cases/gate_injected):
  measure   in one process, N rounds of three independent measurements through the harness's timing API
            (bench.run.measure, the plugin's timing policy): A and A' (two kernel workers of the same build, slowdown
            0) and S (a third worker with $DCUOPT_GATE_SLOW_PERCENT, the chain p% longer). Per round one A/A pair
            (A -> A') and one slowed pair (A or A' -> S), each judged by the gate's rule (gate.judge_samples, with its
            re-measurements of an AMBIGUOUS pair) and by pytest-benchmark's `--benchmark-compare-fail=median:5%`
            check (its PercentageRegressionCheck) on the same samples.
  sessions  the same two judgements for real pytest sessions (their state.json `gate` entries; pytest-benchmark's
            check on their --benchmark-json medians): `--pair KIND BEFORE_RUN AFTER_RUN`, repeated
  locks     two pytest sessions started at once on one GPU: every recorded hold of the device lock, whether any two
            overlap in time, and whether both state.json files are complete
  summary   the three parts' JSON into summary.json and summary.md (rates, counts, the figures for the docs)
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

PERCENT_ENV = "DCUOPT_GATE_SLOW_PERCENT"  # read by the case's kernels once per process
BENCHMARK_RULE = ("median", 5)  # pytest-benchmark's --benchmark-compare-fail=median:5%
AA, SLOWED = "A/A", "slowed"
TARGETS = {AA: ("false SLOW at most", 0.01), SLOWED: ("flagged SLOW at least", 0.95)}  # docs/gating.md's targets
MIN_COMPARISONS = 100
MIN_KERNEL_US = 20.0


# ----- the two rules on one pair of sample sets ----------------------------------------------------------------------
def benchmark_fails(before_ms: Sequence[float], after_ms: Sequence[float]) -> bool:
    """pytest-benchmark's own `--benchmark-compare-fail=median:5%` on two sample sets."""
    return median_check_fails(statistics.median(before_ms), statistics.median(after_ms))


def median_check_fails(before_median: float, after_median: float) -> bool:
    """pytest-benchmark's check of `--benchmark-compare-fail=median:5%` (its own class, not a copy of its rule)."""
    from pytest_benchmark.utils import PercentageRegressionCheck

    field, percent = BENCHMARK_RULE
    check = PercentageRegressionCheck(field, percent)  # type: ignore[no-untyped-call]
    return bool(check.fails({field: after_median}, {field: before_median}))  # type: ignore[no-untyped-call]


def judge_pair(kind: str, index: int, before_ms: Sequence[float], after_ms: Sequence[float],
               remeasure: Callable[[], Sequence[float]] | None = None, threshold: float | None = None,
               floor_us: float = 1.0, retries: int = 2, device: bool = True) -> dict[str, Any]:
    """One comparison: the gate's verdict (re-measuring through `remeasure` while AMBIGUOUS; without it, no retry)
    and pytest-benchmark's, on the same samples."""
    from pytest_dcuopt.gate import GateRule, judge_samples

    rule = GateRule(threshold=threshold, floor_us=floor_us, retries=retries if remeasure is not None else 0)
    verdict = judge_samples(before_ms, after_ms, rule, remeasure or (lambda: []), device=device)
    change = verdict.change
    return {"kind": kind, "index": index, "gate": verdict.verdict, "attempts": verdict.attempts,
            "change": None if change is None else round(change.rel, 5),
            "interval": None if change is None else [round(change.rel_low, 5), round(change.rel_high, 5)],
            "before_median_us": round(statistics.median(before_ms) * 1e3, 3),
            "after_median_us": round(statistics.median(after_ms) * 1e3, 3),
            "samples": [len(before_ms), len(after_ms)] if change is None else [change.before_n, change.after_n],
            "benchmark_fails": benchmark_fails(before_ms, after_ms)}  # on the first measurement, as in a session


def rates(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per kind of pair: how many, the gate's verdicts, the SLOW rate, pytest-benchmark's failure rate, and whether
    the gate's targets are met (A/A: at most 1% SLOW; slowed: at least 95% SLOW; both over >= 100 comparisons)."""
    found: dict[str, Any] = {}
    for kind in (AA, SLOWED):
        mine = [p for p in pairs if p["kind"] == kind]
        if not mine:
            continue
        verdicts = {v: sum(1 for p in mine if p["gate"] == v) for v in sorted({p["gate"] for p in mine})}
        slow = verdicts.get("SLOW", 0) / len(mine)
        failing = sum(1 for p in mine if p["benchmark_fails"]) / len(mine)
        changes = [p["change"] for p in mine if p["change"] is not None]
        what, limit = TARGETS[kind]
        met = slow <= limit if kind == AA else slow >= limit
        found[kind] = {
            "n": len(mine), "gate_verdicts": verdicts, "gate_slow_rate": round(slow, 4),
            "benchmark_fail_rate": round(failing, 4), "retried": sum(1 for p in mine if p["attempts"] > 1),
            "change_median": round(statistics.median(changes), 5) if changes else None,
            "change_range": [min(changes), max(changes)] if changes else None,
            "before_median_us": round(statistics.median(p["before_median_us"] for p in mine), 3),
            "target": f"{what} {limit:.0%} over >= {MIN_COMPARISONS}",
            "target_met": met and len(mine) >= MIN_COMPARISONS,
        }
    return found


# ----- measure: in one process, through the harness's timing API ----------------------------------------------------
def _settings(cache: Path, log_dir: Path, timeout_s: float) -> Any:
    from pytest_dcuopt.timing.calibration import CalibrationStore
    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.variant import BuildSettings

    return BuildSettings(BuildCache(cache), None, (), log_dir, timeout_s, calibrations=CalibrationStore())


def start_kernel(case_dir: Path, toolchain: str, percent: float, settings: Any, policy: Any, timeout_s: float) -> Any:
    """A resolved baseline variant whose kernel worker started with $DCUOPT_GATE_SLOW_PERCENT=percent: the worker
    starts at its first request and keeps the environment it started with, so one warm-up measurement is taken
    here, before the next worker's percentage is set."""
    from pytest_dcuopt.bench.run import measure
    from pytest_dcuopt.case.model import Branch, load_case
    from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK
    from pytest_dcuopt.report.records import BranchRecord
    from pytest_dcuopt.toolchains import make_toolchain, toolchain_class
    from pytest_dcuopt.variant import Variant, resolve

    case = load_case(case_dir).for_toolchain(toolchain)
    source = next(case_dir / f"kernel{ext}" for ext in toolchain_class(toolchain).extensions
                  if (case_dir / f"kernel{ext}").exists())
    variant = Variant(case, make_toolchain(toolchain), Branch("baseline", source),
                      BranchRecord(case.name, toolchain, "baseline", str(source)))
    os.environ[PERCENT_ENV] = f"{percent:g}"  # set before the worker can start, unset once it has
    try:
        resolve(variant, settings)
        if variant.setup_error is not None:
            raise SystemExit(f"{variant.label}: {variant.setup_error}")
        measure(variant, TIMING_REPLY_CHECK, policy, timeout_s)
    finally:
        os.environ.pop(PERCENT_ENV, None)
    return variant


def measured_ms(variant: Any, policy: Any, timeout_s: float) -> list[float]:
    from pytest_dcuopt.bench.run import measure
    from pytest_dcuopt.check.checked_calls import TIMING_REPLY_CHECK

    return [s * 1e3 for s in measure(variant, TIMING_REPLY_CHECK, policy, timeout_s)["samples"].seconds]


def round_pairs(index: int, samples: Mapping[str, list[float]], remeasure: Callable[[str], Sequence[float]]) -> \
        list[dict[str, Any]]:
    """Round `index`'s two comparisons; the direction alternates so neither worker is always the baseline."""
    first, second = ("A", "A'") if index % 2 == 0 else ("A'", "A")
    return [judge_pair(AA, index, samples[first], samples[second], lambda: remeasure(second)),
            judge_pair(SLOWED, index, samples[first], samples["S"], lambda: remeasure("S"))]


def cmd_measure(args: argparse.Namespace) -> None:
    from pytest_dcuopt.timing.policy import TimingPolicy

    policy = TimingPolicy(max_time_s=args.max_time, side_figures=False)  # the plugin's defaults otherwise
    settings = _settings(args.cache, args.work / "logs", args.timeout)  # one calibration store for the three
    kernels = {name: start_kernel(args.case, args.toolchain, percent,
                                  replace(settings, log_dir=args.work / "logs" / folder), policy, args.timeout)
               for name, folder, percent in (("A", "a", 0.0), ("A'", "a2", 0.0), ("S", "s", args.percent))}
    started = time.monotonic()
    pairs: list[dict[str, Any]] = []
    medians: list[dict[str, float]] = []
    try:
        for index in range(args.rounds):
            if time.monotonic() - started > args.budget:
                print(f"budget of {args.budget:g} s spent after {index} rounds")
                break
            order = list(kernels)[index % 3:] + list(kernels)[:index % 3]  # no worker always first or last
            samples = {name: measured_ms(kernels[name], policy, args.timeout) for name in order}
            medians.append({name: round(statistics.median(ms) * 1e3, 3) for name, ms in samples.items()})
            pairs += round_pairs(index, samples, lambda name: measured_ms(kernels[name], policy, args.timeout))
            _write(args.out, measure_report(args, pairs, medians, time.monotonic() - started))  # after every round
    finally:
        for variant in kernels.values():
            variant.worker.close()
    print(json.dumps(rates(pairs), indent=1))


def measure_report(args: argparse.Namespace, pairs: list[dict[str, Any]], medians: list[dict[str, float]],
                   elapsed_s: float) -> dict[str, Any]:
    a_us = [m[name] for m in medians for name in ("A", "A'")]
    s_us = [m["S"] for m in medians]
    injected = (statistics.median(s_us) / statistics.median(a_us) - 1) if a_us and s_us else None
    return {"toolchain": args.toolchain, "case": args.case.name, "percent": args.percent, "rounds": len(medians),
            "max_time_s": args.max_time, "elapsed_s": round(elapsed_s, 1),
            "kernel_median_us": round(statistics.median(a_us), 3) if a_us else None,
            "injected_slowdown_measured": None if injected is None else round(injected, 5),
            "rates": rates(pairs), "medians_us": medians, "pairs": pairs}


# ----- sessions: real pytest runs ------------------------------------------------------------------------------------
def branch_records(state: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            for branch, record in result["branches"].items():
                yield f"{case}/{toolchain}/{branch}", record


def benchmark_medians_ms(run: Path) -> dict[str, float]:
    """pytest-benchmark's own medians (its --benchmark-json, seconds) by branch id, else the harness's."""
    path = run / "bench.json"
    if path.is_file():
        found = {}
        for bench in json.loads(path.read_text()).get("benchmarks", []):
            branch = (bench.get("params") or {}).get("branch") or bench["name"]
            found[str(branch)] = bench["stats"]["median"] * 1e3
        if found:
            return found
    state = json.loads((run / "state.json").read_text())
    return {key.rsplit("/", 1)[1]: record["timing"]["median_ms"] for key, record in branch_records(state)
            if record.get("timing")}


def session_pair(kind: str, index: int, before: Path, after: Path) -> list[dict[str, Any]]:
    """Per timed branch of `after` (gated against `before` in that session): the gate's verdict from its state.json
    and pytest-benchmark's check on the two runs' medians."""
    state = json.loads((after / "state.json").read_text())
    then, now = benchmark_medians_ms(before), benchmark_medians_ms(after)
    found = []
    for key, record in branch_records(state):
        branch = key.rsplit("/", 1)[1]
        gate = record.get("gate") or {}
        if branch not in then or branch not in now:
            continue
        change = (gate.get("change") or {})
        found.append({"kind": kind, "index": index, "branch": key, "gate": gate.get("verdict", "NO GATE"),
                      "attempts": gate.get("attempts", 1), "change": change.get("change"),
                      "interval": change.get("change_interval"),
                      "before_median_us": round(then[branch] * 1e3, 3), "after_median_us": round(now[branch] * 1e3, 3),
                      "benchmark_fails": median_check_fails(then[branch], now[branch]),
                      "before": before.name, "after": after.name})
    return found


def cmd_sessions(args: argparse.Namespace) -> None:
    pairs: list[dict[str, Any]] = []
    for index, (kind, before, after) in enumerate(args.pair):
        if not (Path(after) / "state.json").is_file() or not (Path(before) / "state.json").is_file():
            print(f"pair {index}: {before} -> {after}: a state.json is missing, left out")
            continue
        pairs += session_pair(AA if kind == "aa" else SLOWED, index, Path(before), Path(after))
    _write(args.out, {"rates": rates(pairs), "pairs": pairs})
    print(json.dumps(rates(pairs), indent=1))


# ----- locks: two sessions at once -----------------------------------------------------------------------------------
def timings(record: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A branch record's timings: at its default dims, and at each benchmark size (`sizes.<name>.timing`)."""
    found = [("", record["timing"])] if record.get("timing") else []
    found += [(f"@{size}", entry["timing"]) for size, entry in sorted((record.get("sizes") or {}).items())
              if entry.get("timing")]
    return found


def lock_holds(state: Mapping[str, Any], session: str) -> list[dict[str, Any]]:
    """Every recorded hold of the device lock: each timing (per benchmark size too) and each interleaved A/B."""
    found = []
    for key, record in branch_records(state):
        for size, timing in timings(record):
            for what, lock in (("timing", timing.get("device_lock")),
                               ("A/B", (timing.get("interleaved") or {}).get("device_lock"))):
                if lock:
                    found.append({"session": session, "branch": key + size, "what": what, "name": lock.get("name"),
                                  "held": lock.get("held"), "acquired_at": lock.get("acquired_at"),
                                  "released_at": lock.get("released_at"), "waited_s": lock.get("waited_s", 0.0)})
    return found


def lock_report(states: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    holds = [h for name, state in states.items() for h in lock_holds(state, name)]
    timed = [h for h in holds if h["acquired_at"] is not None and h["released_at"] is not None]
    overlapping = [(a["session"] + " " + a["branch"], b["session"] + " " + b["branch"])
                   for a, b in itertools.combinations(sorted(timed, key=lambda h: h["acquired_at"]), 2)
                   if b["acquired_at"] < a["released_at"]]
    sessions = {}
    for name, state in states.items():
        records = dict(branch_records(state))
        sessions[name] = {"branches": len(records), "timed": sum(1 for r in records.values() if timings(r)),
                          "wrong": sum(1 for r in records.values() if r.get("correct") is False),
                          "holds": sum(1 for h in holds if h["session"] == name),
                          "waited_s": round(sum(h["waited_s"] or 0.0 for h in holds if h["session"] == name), 3)}
    spans = {name: (min(h["acquired_at"] for h in timed if h["session"] == name),
                    max(h["released_at"] for h in timed if h["session"] == name))
             for name in states if any(h["session"] == name for h in timed)}
    concurrent = len(spans) == 2 and all(a[0] < b[1] for a, b in itertools.permutations(spans.values(), 2))
    complete = all(s["branches"] > 0 and s["timed"] == s["branches"] for s in sessions.values())
    return {"sessions": sessions, "holds": len(holds), "all_held": all(h["held"] for h in holds),
            "lock_names": sorted({str(h["name"]) for h in holds}), "overlapping": overlapping,
            "timed_during_a_common_period": concurrent, "complete": complete,
            "ok": bool(holds) and not overlapping and concurrent and complete and all(h["held"] for h in holds)}


def cmd_locks(args: argparse.Namespace) -> None:
    states = {Path(p).parent.name: json.loads(Path(p).read_text()) for p in args.states}
    report = lock_report(states)
    _write(args.out, report)
    print(json.dumps({k: v for k, v in report.items() if k != "overlapping"}, indent=1))


# ----- summary -------------------------------------------------------------------------------------------------------
def cmd_summary(args: argparse.Namespace) -> None:
    parts = {name: json.loads(path.read_text()) if path and path.is_file() else None
             for name, path in (("in_process", args.measure), ("sessions", args.sessions), ("locks", args.locks))}
    summary = {**parts, "env": json.loads(args.env.read_text()) if args.env and args.env.is_file() else None}
    if summary["in_process"]:  # the per-round detail stays in the work folder's archive, not in the small summary
        summary["in_process"] = {k: v for k, v in summary["in_process"].items() if k not in ("pairs", "medians_us")}
    if summary["sessions"]:
        summary["sessions"] = {"rates": summary["sessions"]["rates"],
                               "pairs": [{k: p[k] for k in ("kind", "after", "gate", "change", "benchmark_fails")}
                                         for p in summary["sessions"]["pairs"]]}
    _write(args.out, summary)
    args.md.write_text(render(summary))


def render(summary: Mapping[str, Any]) -> str:
    lines = ["# Gate check", ""]
    inproc = summary.get("in_process")
    if inproc:
        lines += [f"In one process ({inproc['toolchain']}, `{inproc['case']}`): {inproc['rounds']} rounds in "
                  f"{inproc['elapsed_s']} s, kernel median {inproc['kernel_median_us']} us, injected "
                  f"+{inproc['percent']:g}% measured as {_pct(inproc['injected_slowdown_measured'])}; "
                  f"kernel >= {MIN_KERNEL_US:g} us: {_yes((inproc['kernel_median_us'] or 0) >= MIN_KERNEL_US)}.", ""]
        lines += _rate_table(inproc["rates"])
    sessions = summary.get("sessions")
    if sessions:
        lines += ["", "pytest sessions (each gated against the run before it; slowed runs against the last A run):",
                  ""]
        lines += _rate_table(sessions["rates"])
    locks = summary.get("locks")
    if locks:
        lines += ["", f"Two sessions at once: {locks['holds']} holds of {', '.join(locks['lock_names']) or '-'}, "
                      f"all held: {_yes(locks['all_held'])}, overlapping: {len(locks['overlapping'])}, timed during "
                      f"a common period: {_yes(locks['timed_during_a_common_period'])}, both complete: "
                      f"{_yes(locks['complete'])}; per session: {json.dumps(locks['sessions'])}."]
    return "\n".join(lines) + "\n"


def _rate_table(found: Mapping[str, Any]) -> list[str]:
    lines = ["| pairs | n | gate verdicts | gate SLOW | pytest-benchmark median:5% fails | median change (range) | "
             "target | met |", "|---|---|---|---|---|---|---|---|"]
    for kind, r in found.items():
        verdicts = ", ".join(f"{k} {v}" for k, v in r["gate_verdicts"].items())
        low, high = r["change_range"] or (None, None)
        lines.append(f"| {kind} | {r['n']} | {verdicts} | {r['gate_slow_rate']:.1%} | {r['benchmark_fail_rate']:.1%} "
                     f"| {_pct(r['change_median'])} ({_pct(low)} .. {_pct(high)}) | {r['target']} | "
                     f"{_yes(r['target_met'])} |")
    return lines


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2%}"


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("measure")
    p.add_argument("--case", type=Path, required=True)
    p.add_argument("--toolchain", default="cuda")
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--work", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--rounds", type=int, default=110)
    p.add_argument("--percent", type=float, default=5.0)
    p.add_argument("--max-time", type=float, default=0.5)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--budget", type=float, default=150.0, help="start no round after this many seconds")
    p.set_defaults(func=cmd_measure)
    p = sub.add_parser("sessions")
    p.add_argument("--pair", nargs=3, action="append", default=[], metavar=("aa|slowed", "BEFORE_RUN", "AFTER_RUN"))
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_sessions)
    p = sub.add_parser("locks")
    p.add_argument("--states", nargs=2, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.set_defaults(func=cmd_locks)
    p = sub.add_parser("summary")
    for name in ("measure", "sessions", "locks", "env"):
        p.add_argument(f"--{name}", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--md", type=Path, required=True)
    p.set_defaults(func=cmd_summary)
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
