"""The regression gate on a CPU, as a user runs it: real pytest sessions of one ~1 ms CPU kernel, each gated against
the one before with the defaults (docs/gating.md, "Figures").

Per try i: an unchanged session A_i gated against A_(i-1) (A/A: should be SAME) and a session S_i whose kernel is
--percent slower ($DCUOPT_GATE_SLOW_PERCENT, read by tests/data/cases/gate_injected) gated against A_i (should be
SLOW). Prints the verdict counts of both kinds with the load average seen, and writes every session's figures.

    python tools/gate_cpu_check.py --tries 40 --percent 10 --work /tmp/gate_cpu
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "tests" / "data" / "cases" / "gate_injected"
PERCENT_ENV = "DCUOPT_GATE_SLOW_PERCENT"
AA, SLOWED = "A/A", "slowed"
TARGETS = {AA: ("SAME", 0.95), SLOWED: ("SLOW", 0.90)}  # the share of tries that must get this verdict


def gate_entry(state: Mapping[str, Any]) -> dict[str, Any]:
    """The one gated branch's figures from a session's state.json: verdict, change, samples a side, reason."""
    branches = [branch for case in state["cases"].values() for result in case["toolchains"].values()
                for branch in result["branches"].values() if branch.get("gate")]
    if len(branches) != 1:
        raise ValueError(f"expected one gated branch in the session's state.json, found {len(branches)}")
    gate, timing = branches[0]["gate"], branches[0].get("timing") or {}
    change = gate.get("change") or {}
    return {"verdict": gate["verdict"], "change": change.get("change"), "interval": change.get("change_interval"),
            "samples": change.get("samples"), "attempts": gate.get("attempts"), "reason": gate.get("reason"),
            "median_ms": timing.get("median_ms"), "flush_bytes": timing.get("flush_bytes")}


def tally(tries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per kind: how many tries, the verdicts, the share with the wanted verdict, and whether the target is met."""
    found: dict[str, Any] = {}
    for kind, (wanted, share) in TARGETS.items():
        mine = [t for t in tries if t["kind"] == kind]
        if not mine:
            continue
        verdicts = Counter(t["verdict"] for t in mine)
        changes = [t["change"] for t in mine if t["change"] is not None]
        rate = verdicts.get(wanted, 0) / len(mine)
        found[kind] = {"tries": len(mine), "verdicts": dict(sorted(verdicts.items())), "wanted": wanted,
                       "rate": round(rate, 4), "target": f"{wanted} in >= {share:.0%}", "target_met": rate >= share,
                       "change_range": [min(changes), max(changes)] if changes else None}
    return found


def table(summary: Mapping[str, Any]) -> str:
    lines = ["| kind | tries | verdicts | wanted | rate | target | met | change range |",
             "|---|---|---|---|---|---|---|---|"]
    for kind, row in summary.items():
        verdicts = ", ".join(f"{v} {n}" for v, n in row["verdicts"].items())
        low_high = row["change_range"]
        span = "" if low_high is None else f"{low_high[0]:+.1%} .. {low_high[1]:+.1%}"
        lines.append(f"| {kind} | {row['tries']} | {verdicts} | {row['wanted']} | {row['rate']:.0%} | {row['target']} "
                     f"| {'yes' if row['target_met'] else 'no'} | {span} |")
    return "\n".join(lines)


def session(args: argparse.Namespace, run: str, percent: float, compare: str | None) -> dict[str, Any]:
    """One pytest session of the case's benchmark, gated against `compare` when given; its gate entry."""
    command = [sys.executable, "-m", "pytest", str(args.work / CASE.name), "-k", "test_benchmark_cpu",
               "--dcuopt-toolchain=cpu", "-p", "no:cacheprovider", "-q", f"--dcuopt-run-dir={args.work / run}",
               f"--dcuopt-cache-dir={args.work / 'cache'}", f"--dcuopt-max-time={args.max_time:g}",
               *([f"--dcuopt-compare={args.work / compare / 'state.json'}"] if compare else [])]
    env = {**os.environ, PERCENT_ENV: f"{percent:g}"}
    load = os.getloadavg()[0]
    done = subprocess.run(command, cwd=args.work, env=env, capture_output=True, text=True, timeout=600)
    (args.work / f"{run}.log").write_text(done.stdout + done.stderr)
    state = json.loads((args.work / run / "state.json").read_text())
    entry = gate_entry(state) if compare else {}
    return {"run": run, "exit": done.returncode, "load_1min": round(load, 2), **entry}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tries", type=int, default=40, help="A/A and slowed tries each (default 40)")
    parser.add_argument("--percent", type=float, default=10.0, help="the injected slowdown (default 10)")
    parser.add_argument("--max-time", type=float, default=2.0, help="--dcuopt-max-time (default 2, the plugin's)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/gate_cpu_check"), help="emptied first")
    args = parser.parse_args(argv)
    args.work = args.work.resolve()
    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(CASE, args.work / CASE.name)
    started = time.monotonic()
    tries: list[dict[str, Any]] = []
    session(args, "a0", 0.0, None)
    for i in range(1, args.tries + 1):
        tries.append({"kind": AA, "try": i, **session(args, f"a{i}", 0.0, f"a{i - 1}")})
        tries.append({"kind": SLOWED, "try": i, **session(args, f"s{i}", args.percent, f"a{i}")})
        print(f"try {i}: A/A {tries[-2]['verdict']} {tries[-2]['change']}, slowed {tries[-1]['verdict']} "
              f"{tries[-1]['change']}, load {tries[-1]['load_1min']}", flush=True)
    summary = tally(tries)
    loads = [t["load_1min"] for t in tries]
    report = {"percent": args.percent, "max_time_s": args.max_time, "elapsed_s": round(time.monotonic() - started),
              "load_1min": [min(loads), max(loads)], "cpus": os.cpu_count(), "summary": summary, "tries": tries}
    (args.work / "summary.json").write_text(json.dumps(report, indent=1))
    print(table(summary))
    print(f"load average (1 min) {min(loads):g} .. {max(loads):g} on {os.cpu_count()} CPUs; "
          f"{report['elapsed_s']} s; {args.work / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
