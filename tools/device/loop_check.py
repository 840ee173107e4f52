"""Driver of tools/device/loop_check.sh: the `dcuopt` loop scripted end to end, and the ablation repeated.

    python3 tools/device/loop_check.py loop --case CASE --fast BRANCH_FILE --toolchain cuda --work W --out OUT
    python3 tools/device/loop_check.py ablate --case CASE --times 5 --toolchain cuda --work W --out OUT

`loop`: a two-iteration loop on a copy of CASE (its `kernel.<ext>` is the baseline). setup; open-iter 1; a
methods.json proposed from the iteration's budget by the registry's priority scan (`cli.methods.propose`, passing
over the methods with an instruction signature of their own in the toolchain's ISA family, which FAST does not
implement), the first method carrying `-DDCUOPT_ABLATE_REAL` and the second `-DDCUOPT_ABLATE_PLACEBO` (the
switches FAST honours: the method ids only fill the budget, the flags say what is removed); branches b1 = FAST,
b2 = the baseline; close-iter twice (the second must take the same decisions; once with --skip-repeat);
open-iter 2 with b1 = b2 = the first baseline (slower than the best: nothing may be promoted); close-iter;
finalize. OUT/loop/ gets summary.md, the plot, state.json, each iteration's budget.json, methods.json and
attribution.json, and OUT/loop-summary.json what was checked.

`ablate`: `pytest CASE -k test_ablation` in TIMES fresh processes (CASE's ref.py carries the `ablation` mark);
per method and run the outcome, the state bucket it gives (`effective` / `ineffective` / `inconclusive`, the
loop's rule) and the slowdown interval, into OUT/ablation-repeat.json and .md.

Every command is timed out; a failed step is recorded and the next still runs where it can.
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from pytest_dcuopt.cli.buckets import bucket_from_ablation  # noqa: E402
from pytest_dcuopt.cli.methods import Selection, history_of, propose  # noqa: E402
from pytest_dcuopt.isa.signature_registry import load as load_signatures  # noqa: E402
from pytest_dcuopt.external_tools import run_tool  # noqa: E402
from pytest_dcuopt.toolchains import toolchain_class  # noqa: E402

REAL_FLAG, PLACEBO_FLAG = "-DDCUOPT_ABLATE_REAL", "-DDCUOPT_ABLATE_PLACEBO"
STEP_TIMEOUT_S = 600.0
COPY_OUT = ("summary.md", "state.json", "*.png", "*.svg", "iterv*/budget.json", "iterv*/methods.json",
            "iterv*/attribution.json")


def dcuopt(*argv: str | Path, timeout: float = STEP_TIMEOUT_S) -> dict[str, Any]:
    result = run_tool([sys.executable, "-m", "pytest_dcuopt.cli.main", *map(str, argv)], timeout=timeout, cwd=REPO)
    return {"command": "dcuopt " + " ".join(map(str, argv)), "exit": result.returncode,
            "seconds": round(result.seconds, 1), "tail": (result.stdout + result.stderr).strip()[-1500:]}


def kernel_of(folder: Path) -> Path:
    found = sorted(p for p in folder.glob("kernel.*") if p.is_file())
    if not found:
        raise SystemExit(f"no kernel.<ext> in {folder}: the case's baseline is its kernel file")
    return found[0]


def without_own_instructions(toolchain: str) -> list[str]:
    """Methods with an instruction signature in the toolchain's ISA family: the fixture's branches implement none
    of them, so the proposal passes over them (else the state rules would rightly call them implementation_failed)."""
    family = toolchain_class(toolchain).isa_family
    return [method_id for method_id, method in load_signatures().methods.items()
            if family in method.families and not method.families[family].no_evidence]


def methods_for(run_dir: Path, index: int, flags: tuple[str, ...], toolchain: str) -> dict[str, Any]:
    """The registry's proposal for the iteration's budget, the given ablation flags on its first methods."""
    state = json.loads((run_dir / "state.json").read_text())
    budget = json.loads((run_dir / f"iterv{index}" / "budget.json").read_text())
    selection = Selection(index, budget["budget"], budget["bound"], budget["arch"], budget.get("stop"),
                          budget.get("reason") or "", history_of(state, index))
    # Without a budget (no counters and no workload model) the budget rule is not applied: one latency and one
    # memory method, so that every flag is carried by a method.
    document = propose(selection, without_budget={"latency": 1, "memory": 1} if len(flags) > 1 else None,
                       not_triggered=without_own_instructions(toolchain))
    for method, flag in zip(document["methods"], flags, strict=False):
        method["ablation_flag"] = flag
    document["$comment"] = (f"proposed by tools/device/loop_check.py for budget {budget['budget']} "
                            f"(bound {budget['bound']}); flags: {', '.join(flags) or 'none'}")
    return document


def decisions(state: dict[str, Any]) -> dict[str, Any]:
    """What a close-iter decides (timings left out): statuses, champions, best file, method buckets."""
    return {"history": [(h["iter"], h["status"], h["champion"]) for h in state["history"]],
            "best_file": state["best_file"],
            **{name: [m["id"] for m in state[name]] for name in
               ("selected_methods", "effective_methods", "ineffective_methods", "inconclusive_methods",
                "implementation_failed_methods")}}


BUCKETS = ("effective_methods", "ineffective_methods", "inconclusive_methods", "implementation_failed_methods")


def flagged_method(methods_file: Path, flag: str) -> str | None:
    """The id of the method that carries `flag` as its ablation flag in an iteration's methods.json."""
    document = json.loads(methods_file.read_text())
    return next((m["id"] for m in document["methods"] if m.get("ablation_flag") == flag), None)


def without(found: dict[str, Any], method: str | None) -> dict[str, Any]:
    """`decisions` with one method left out of the outcome buckets."""
    return {key: [m for m in value if m != method] if key in BUCKETS else value for key, value in found.items()}


def bucket_of(found: dict[str, Any], method: str | None) -> str | None:
    return next((key for key in BUCKETS if method in found.get(key, [])), None)


def loop(args: argparse.Namespace) -> dict[str, Any]:
    work, out = Path(args.work), Path(args.out)
    case = work / "case"
    if case.exists():
        shutil.rmtree(case)
    # With its branches: the case's branch_marks name them (the loop's generated ref.py ignores them).
    shutil.copytree(args.case, case, ignore=shutil.ignore_patterns("run_*", "__pycache__"))
    baseline, fast = kernel_of(case), Path(args.fast)
    run_dir = work / "run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    steps: list[dict[str, Any]] = []
    report: dict[str, Any] = {"case": str(args.case), "toolchain": args.toolchain, "steps": steps, "checks": {}}

    def step(*argv: str | Path) -> bool:
        steps.append(dcuopt(*argv))
        write(out / "loop-summary.json", report)
        return bool(steps[-1]["exit"] == 0)

    pytest_args = f"--dcuopt-toolchain={args.toolchain} {args.pytest_args}".strip()
    if not step("setup", case, "--iterations", "2", "--branches", "2", "--run-dir", run_dir,
                "--pytest-args", pytest_args):
        return report
    if step("open-iter", run_dir):
        iteration = run_dir / "iterv1"
        write(iteration / "methods.json", methods_for(run_dir, 1, (args.real_flag, args.placebo_flag), args.toolchain))
        shutil.copy(fast, iteration / "branches" / "b1" / f"kernel{fast.suffix}")
        shutil.copy(baseline, iteration / "branches" / "b2" / f"kernel{baseline.suffix}")
        if step("close-iter", run_dir):
            first = decisions(json.loads((run_dir / "state.json").read_text()))
            report["checks"]["iteration1"] = first
            if not args.skip_repeat:
                step("close-iter", run_dir)
                again = decisions(json.loads((run_dir / "state.json").read_text()))
                # A second close measures again: the placebo's bucket is decided by noise each time, so it is
                # reported, not compared; everything else (history, champion, best file, the other buckets) must
                # not change.
                noisy = flagged_method(iteration / "methods.json", args.placebo_flag)
                report["checks"]["second_close_same_decisions"] = without(first, noisy) == without(again, noisy)
                report["checks"]["second_close_not_compared"] = {"method": noisy, "first": bucket_of(first, noisy),
                                                                 "second": bucket_of(again, noisy)}
    if step("open-iter", run_dir):
        iteration = run_dir / "iterv2"
        write(iteration / "methods.json", methods_for(run_dir, 2, (), args.toolchain))
        for branch in ("b1", "b2"):
            shutil.copy(baseline, iteration / "branches" / branch / f"kernel{baseline.suffix}")
        step("close-iter", run_dir)
    step("finalize", run_dir)
    if (run_dir / "state.json").is_file():
        final = json.loads((run_dir / "state.json").read_text())
        report["checks"]["final"] = decisions(final)
        report["checks"]["iteration2_not_promoted"] = [h["status"] for h in final["history"]][1:] == ["no_gain"]
    copy_results(run_dir, out / "loop")
    write(out / "loop-summary.json", report)
    return report


def copy_results(run_dir: Path, target: Path) -> None:
    for pattern in COPY_OUT:
        for path in run_dir.glob(pattern):
            destination = target / path.relative_to(run_dir)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, destination)


def ablate(args: argparse.Namespace) -> dict[str, Any]:
    work, out = Path(args.work), Path(args.out)
    runs: list[dict[str, Any]] = []
    report: dict[str, Any] = {"case": str(args.case), "toolchain": args.toolchain, "runs": runs}
    for number in range(1, args.times + 1):
        run_dir = work / f"ablation{number}"
        if run_dir.exists():
            shutil.rmtree(run_dir)
        command = [sys.executable, "-m", "pytest", str(args.case), "-k", "test_ablation", "-p", "no:cacheprovider",
                   "-q", "-rs", f"--dcuopt-toolchain={args.toolchain}", f"--dcuopt-run-dir={run_dir}",
                   *shlex.split(args.pytest_args)]
        result = run_tool(command, timeout=STEP_TIMEOUT_S, cwd=REPO)
        (work / f"ablation{number}.log").write_text(f"$ {result.command_line}\n{result.stdout}\n{result.stderr}")
        runs.append(ablation_run(number, result.returncode, run_dir / "ablation.json"))
        report["command"] = " ".join(shlex.quote(c) for c in command)
        report["tally"] = tally(runs)  # after every run: a run cut short by the budget keeps what it finished
        write(out / "ablation-repeat.json", report)
        (out / "ablation-repeat.md").write_text(markdown(report))
    return report


def ablation_run(number: int, exit_code: int, path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = {"run": number, "pytest_exit": exit_code, "methods": {}}
    if not path.is_file():
        entry["problem"] = "no ablation.json"
        return entry
    for ablation in json.loads(path.read_text())["ablations"]:
        entry["branch"] = ablation["branch"]
        for method, result in ablation["methods"].items():
            entry["methods"][method] = {"outcome": result.get("outcome"),
                                        "bucket": bucket_from_ablation(result)["bucket"],
                                        "slowdown": result.get("slowdown_when_removed"),
                                        "interval": result.get("slowdown_interval"),
                                        "round_ratios": result.get("round_ratios"),
                                        "message": str(result.get("message") or "")[-600:] or None}
    return entry


def tally(runs: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for run in runs:
        for method, result in run["methods"].items():
            bucket = counts.setdefault(method, {})
            bucket[result["bucket"]] = bucket.get(result["bucket"], 0) + 1
    return counts


def markdown(report: dict[str, Any]) -> str:
    lines = [f"# Ablation repeated: {report['case']} ({report['toolchain']})", "", f"`{report.get('command', '')}`",
             "", "| run | method | outcome | bucket | slowdown when removed | 95% interval |",
             "|---|---|---|---|---|---|"]
    for run in report["runs"]:
        for method, result in run["methods"].items():
            why = f" ({result['message'][:160]})" if result.get("message") else ""
            lines.append(f"| {run['run']} | {method} | {result['outcome']}{why} | {result['bucket']} | "
                         f"{result['slowdown']} | {result['interval']} |")
        if not run["methods"]:
            lines.append(f"| {run['run']} | - | {run.get('problem', 'no result')} (pytest exit {run['pytest_exit']}) "
                         "| - | - | - |")
    lines += ["", "Tally: " + "; ".join(f"{m}: " + ", ".join(f"{b} {n}/{len(report['runs'])}" for b, n in c.items())
                                     for m, c in report.get("tally", {}).items()), ""]
    return "\n".join(lines)


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("loop", "ablate"):
        sub = commands.add_parser(name)
        sub.add_argument("--case", required=True)
        sub.add_argument("--toolchain", required=True)
        sub.add_argument("--work", required=True)
        sub.add_argument("--out", required=True)
        sub.add_argument("--pytest-args", default="", help="harness options for every pytest run")
    commands.choices["loop"].add_argument("--fast", required=True, help="the branch file with the real optimization")
    commands.choices["loop"].add_argument("--real-flag", default=REAL_FLAG, help="removes the real optimization")
    commands.choices["loop"].add_argument("--placebo-flag", default=PLACEBO_FLAG, help="removes the placebo")
    commands.choices["loop"].add_argument("--skip-repeat", action="store_true",
                                          help="close iteration 1 once (the repeat's check costs a full measurement)")
    commands.choices["ablate"].add_argument("--times", type=int, default=5)
    args = parser.parse_args(argv)
    report = loop(args) if args.command == "loop" else ablate(args)
    print(json.dumps(report.get("checks") or report.get("tally"), indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
