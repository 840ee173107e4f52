"""`dcuopt close-iter RUN_DIR`: validate methods.json, measure the iteration, pick the champion, update the state.

1. methods.json against the schema, the loop's rules and the method registry's validator
   (`profile.methods.validate_iteration`) with open-iter's `iterv<i>/budget.json` (budget, bound, arch) and the
   methods earlier iterations tried; every rejection names its rule, and nothing runs when there is one.
2. pytest on `iterv<i>/` in a subprocess (correctness, benchmarks, ISA; the harness's run dir `iterv<i>/pytest/`
   is emptied first; the baseline's profile item is left out: open-iter made it). The iteration's baseline is
   the best before it, so the harness's own rule picks the champion: the fastest correct branch whose speedup
   interval vs the current best lies wholly above 1.
3. When a branch is promoted and methods carry `ablation_flag`s: pytest once more on the champion's
   `test_ablation_<toolchain>` (the `ablation` observer), into `iterv<i>/ablation/`.
   With --ingested nothing runs here: the measurement, the ablation and the champion's profile are those a pack's
   run.sh made on another machine (`packed_run`, with this module's rule and steps) and `dcuopt ingest` placed.
4. state.json: this iteration's entries are replaced (never appended twice), the best moves only on a promotion,
   every method is classified by the state rules.
"""
from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import write_atomic
from ..report.machine import now
from ..toolchains import toolchain_class
from . import methods as methods_json
from .buckets import branches_isa, champion_isa, classify
from .harness import HarnessRun, branch_problem, run_pytest, speedup_interval, toolchain_entry
from .ingested import ingested_run, ingested_step
from .layout import (
    CHAMPION_PROFILE,
    FLAT_ITERATIONS_FOR_TRIAGE,
    METHOD_LISTS,
    LoopError,
    RunLayout,
    add_run_dir_command,
    copy_fresh,
    current_iteration,
    flat_iterations,
    iteration_record,
    kernel_file,
    open_run,
    save_state,
    sha256,
)
from .open_iter import (
    BUDGET_NAME,
    branch_profile,
    budget_line,
    load_budget,
    profile_verdict,
    scaffold,
)
from .probe import PROBES_DIR, load_probes

# Everything but the ablation and the profile (run for the champion only; the baseline's is open-iter's).
MEASURE_SELECTION = "not test_ablation and not test_profile"
MIN_GAIN = 0.02  # the seed's noise threshold: a promotion must be worth more than drift


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_run_dir_command(commands, "close-iter", "measure the open iteration and update the run's state", run)
    parser.add_argument("--iter", type=int, default=None, help="iteration (default: the last opened)")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments for this close")
    parser.add_argument("--ingested", action="store_true",
                        help="judge the results `dcuopt ingest` placed in iterv<i>/ (measured on another machine by "
                             "`dcuopt pack --iter N`'s run.sh: the iteration, the champion's ablation and profile) "
                             "instead of measuring here")
    parser.add_argument("--min-gain", type=float, default=MIN_GAIN,
                        help="a branch replaces the current best only when its whole A/B speedup interval lies above "
                             f"1 + this (the seed's noise threshold). Default: {MIN_GAIN}")


def run(args: argparse.Namespace) -> int:
    layout, state = open_run(args)
    index = args.iter or current_iteration(state)
    if index is None:
        raise LoopError(f"no iteration of {layout.run_dir} is open; run `dcuopt open-iter {layout.run_dir}` first.")
    record = iteration_record(state, index)
    if str(index + 1) in state["iterations"]:
        raise LoopError(f"iteration {index + 1} is already open: closing iteration {index} again would change the "
                        "baseline under it. Close the last iteration only.")
    document, notes = checked_methods(layout, state, index)
    for note in notes:
        print(f"methods.json: {note}")
    scaffold(layout, state, index, record)  # regenerates ref.py/dims.json and restores the frozen baseline copy
    extra = [f"--dcuopt-toolchain={state['toolchain']}", *state.get("pytest_args", []), *shlex.split(args.pytest_args)]
    folder = layout.iteration(index)
    if args.ingested:
        harness = ingested_run(layout, index)
    else:
        harness = run_pytest([str(folder)], layout.harness_dir(index), [*extra, "-k", MEASURE_SELECTION],
                             cwd=layout.run_dir)
    entry = toolchain_entry(harness, folder.name, state["toolchain"])
    outcome = judge_branches(entry, args.min_gain)
    if outcome["promoted"]:
        outcome["isa"] = champion_isa(harness.report("isa_check.json"), outcome["champion"],
                                      [m["id"] for m in document["methods"]], toolchain_class(state["toolchain"]))
        if args.ingested:
            outcome["ablation"] = ingested_ablation(layout, index, outcome["champion"], document, args.min_gain)
            outcome["champion_profile"] = ingested_champion_profile(layout, state, index, outcome["champion"],
                                                                    args.min_gain)
        else:
            outcome["ablation"] = ablate(layout, state, index, outcome["champion"], document, extra)
            outcome["champion_profile"] = profile_champion(layout, state, index, outcome["champion"], extra)
    elif outcome["any_correct_branch"]:
        correct = [n for n, b in outcome["branches"].items() if n != "baseline" and b["correct"] is True]
        outcome["isa"] = branches_isa(harness.report("isa_check.json"), correct,
                                      [m["id"] for m in document["methods"]], toolchain_class(state["toolchain"]))
    classified = classify(document["methods"], outcome)
    write_atomic(folder / "attribution.json", json.dumps({"iter": index, **outcome, "methods": classified,
                                                          "validation_notes": notes}, indent=2, default=str) + "\n")
    record["validation_notes"] = notes
    update_state(layout, state, index, record, document, outcome, classified, harness)
    save_state(layout, state)
    report(state, index, outcome, classified)
    return 0


def checked_methods(layout: RunLayout, state: dict[str, Any], index: int) -> tuple[dict[str, Any], list[str]]:
    """The valid methods.json of iteration `index` and the rules that could not be applied, or a LoopError listing
    every rejection with its rule."""
    folder = layout.iteration(index)
    budget = load_budget(folder)
    if budget is None:
        raise LoopError(f"{folder / BUDGET_NAME} is missing: methods.json is checked against the budget of the "
                        f"current best. Run `dcuopt open-iter {layout.run_dir}` to profile it and write the budget.")
    selection = methods_json.Selection(index, budget["budget"], budget["bound"], budget["arch"], budget.get("stop"),
                                       budget.get("reason") or "", methods_json.history_of(state, index),
                                       load_probes(layout.run_dir / PROBES_DIR))
    path = folder / "methods.json"
    validation = methods_json.validate(path, selection)
    if validation.problems:
        raise LoopError(f"methods.json of iteration {index} is not valid (budget: {budget_line(budget)}); nothing was "
                        "run:\n  " + "\n  ".join(validation.problems))
    return dict(json.loads(path.read_text())), validation.notes


def judge_branches(entry: dict[str, Any], min_gain: float = MIN_GAIN) -> dict[str, Any]:
    """The harness's verdicts for every branch, and whether its champion replaces the current best: correct in this
    run, faster than the current best beyond the noise, and by more than `min_gain` (a copy of the best measured
    a little faster by drift must not be promoted)."""
    branches = entry["branches"]
    base = branches.get("baseline", {})
    if base.get("correct") is not True or not base.get("timing"):
        raise LoopError("the current best (this iteration's baseline) was not measured correct and timed: "
                        f"{branch_problem(base)}. See the harness log in the iteration's pytest/ folder.")
    table = {name: {"correct": r.get("correct"), "median_ms": (r.get("timing") or {}).get("median_ms"),
                    "speedup": r.get("speedup_vs_baseline"), "speedup_interval": speedup_interval(r),
                    "beats_current_best": r.get("beats_baseline"),
                    "problem": None if r.get("correct") is True and r.get("timing") else branch_problem(r)}
             for name, r in branches.items()}
    champion = entry.get("champion")
    # Never on `correct: null`: only a branch whose correctness test passed in this run may become the best.
    promoted = (champion not in (None, "baseline") and branches[champion].get("correct") is True
                and branches[champion].get("beats_baseline") is True
                and clears_min_gain(table[champion]["speedup_interval"], table[champion]["speedup"], min_gain))
    candidates = [n for n in branches if n != "baseline"]
    return {"promoted": promoted, "champion": champion if promoted else None,
            "current_best_ms": base["timing"]["median_ms"], "branches": table,
            "any_correct_branch": any(table[n]["correct"] is True and table[n]["median_ms"] for n in candidates)}


def clears_min_gain(interval: list[float] | None, speedup: float | None, min_gain: float) -> bool:
    """The A/B speedup interval's lower end (else the speedup itself) above 1 + min_gain."""
    low = interval[0] if interval else speedup
    return low is not None and low > 1 + min_gain


def ablate(layout: RunLayout, state: dict[str, Any], index: int, champion: str, document: dict[str, Any],
           extra: list[str]) -> dict[str, Any]:
    """The champion's ablation run (methods with an ablation_flag), or why there is none."""
    reason = ablation_unneeded(document)
    if reason:
        return {"status": "not run", "reason": reason}
    targets, args = ablation_step(layout.iteration(index), state["toolchain"], champion, extra)
    return ablation_outcome(run_pytest(targets, layout.ablation_dir(index), args, cwd=layout.run_dir), champion)


def ablation_unneeded(document: dict[str, Any]) -> str | None:
    """Why methods.json asks for no ablation (None when a method carries an ablation_flag)."""
    if not any(m.get("ablation_flag") for m in document["methods"]):
        return "no method in methods.json has an ablation_flag"
    return None


def ablation_step(folder: Path, toolchain: str, champion: str, extra: Sequence[str]) -> tuple[list[str], list[str]]:
    """pytest's targets and arguments for the champion's ablation, here or where a pack runs (`folder` is the
    iteration case, absolute here, relative to the pack's root there)."""
    return [f"{folder / 'ref.py'}::test_ablation_{toolchain}[{champion}]"], list(extra)


def ablation_outcome(harness: HarnessRun, champion: str) -> dict[str, Any]:
    """The champion's entry of an ablation run's ablation.json, or why the run wrote none."""
    report = harness.report("ablation.json")
    entries = [e for e in (report or {}).get("ablations", []) if e["branch"] == champion]
    if not entries:
        return {"status": "not run", "reason": ablation_missing(harness)}
    return {"status": "ran", **entries[0]}


def profile_step(folder: Path, toolchain: str, champion: str, extra: Sequence[str]) -> tuple[list[str], list[str]]:
    """pytest's targets and arguments for the champion's profile (as `ablation_step`)."""
    return [f"{folder / 'ref.py'}::test_profile_{toolchain}[{champion}]"], [*extra, "-rs"]



def ingested_ablation(layout: RunLayout, index: int, champion: str, document: dict[str, Any],
                      min_gain: float) -> dict[str, Any]:
    """The champion's ablation as the pack's run measured it (close-iter --ingested), or why there is none."""
    reason = ablation_unneeded(document)
    if reason:
        return {"status": "not run", "reason": reason}
    found = ingested_step(layout, index, "ablation", champion, min_gain)
    if isinstance(found, str):
        return {"status": "not run", "reason": found}
    return {**ablation_outcome(found, champion), "measured": "remote"}


def profile_champion(layout: RunLayout, state: dict[str, Any], index: int, champion: str,
                     extra: list[str]) -> dict[str, Any]:
    """The promoted branch under the `profile` marker, as open-iter profiles the best (the seed profiles the champion
    too): iterv<i>/champion_profile.json, and its summary (verdict, bound, register pressure)."""
    folder = layout.iteration(index)
    targets, args = profile_step(folder, state["toolchain"], champion, extra)
    harness = run_pytest(targets, folder / CHAMPION_PROFILE, args, cwd=layout.run_dir)
    return champion_profile_record(folder, index, champion, harness, state["toolchain"])


def ingested_champion_profile(layout: RunLayout, state: dict[str, Any], index: int, champion: str,
                              min_gain: float) -> dict[str, Any]:
    """The champion's profile as the pack's run made it (close-iter --ingested), or why there is none."""
    found = ingested_step(layout, index, CHAMPION_PROFILE, champion, min_gain)
    if isinstance(found, str):
        return {"verdict": f"not run: {found}", "bound": None, "utilization": None, "registers": None, "file": None}
    return {**champion_profile_record(layout.iteration(index), index, champion, found, state["toolchain"], "remote"),
            "measured": "remote"}


def champion_profile_record(folder: Path, index: int, champion: str, harness: HarnessRun, toolchain: str,
                            measured: str = "here") -> dict[str, Any]:
    """iterv<i>/champion_profile.json from the champion's profile run (`measured` here or remote, with the SHA-256
    of the kernel it profiled), and its summary."""
    entry = branch_profile(harness, folder.name, toolchain, champion)
    verdict = profile_verdict(entry, harness, toolchain)
    source = kernel_file(folder / "branches" / champion)
    write_atomic(folder / f"{CHAMPION_PROFILE}.json", json.dumps(
        {"iter": index, "branch": champion, "verdict": verdict, "command": harness.result.command_line,
         "exit_status": harness.result.returncode, "measured": measured,
         "kernel_sha256": sha256(source) if source is not None else None, "profile": entry},
        indent=2, default=str) + "\n")
    roofline = (entry or {}).get("roofline") or {}
    return {"verdict": verdict, "bound": roofline.get("bound"), "utilization": roofline.get("utilization"),
            "registers": (entry or {}).get("registers"), "file": str(folder / f"{CHAMPION_PROFILE}.json")}


def ablation_missing(harness: HarnessRun) -> str:
    if harness.result.returncode == 4 or "not found" in harness.result.stdout + harness.result.stderr:
        return ("no test_ablation item: the `ablation` observer is not registered in this pytest (plugin.py's "
                "pytest_dcuopt_observers, or a conftest returning observe.ablation.AblationObserver())")
    return f"the ablation run wrote no result (pytest exit {harness.result.returncode}): {harness.output_tail(5)}"



def update_state(layout: RunLayout, state: dict[str, Any], index: int, record: dict[str, Any],
                 document: dict[str, Any], outcome: dict[str, Any], classified: list[dict[str, Any]],
                 harness: HarnessRun) -> None:
    """Replace this iteration's entries (a second close changes no count), then add the new ones."""
    for name in METHOD_LISTS:
        state[name] = [m for m in state[name] if m.get("iter") != index]
    state["history"] = [h for h in state["history"] if h.get("iter") != index]
    state["frontier"] = [f for f in state["frontier"] if f.get("iter") != index]
    by_id = {m["id"]: m for m in document["methods"]}
    for method in classified:
        # The bound the kernel had when the method was tried: the registry's history rule compares it later.
        full = {**by_id[method["id"]], **method, "iter": index, "bound": (record.get("profile") or {}).get("bound")}
        state["selected_methods"].append(full)
        state[f"{method['bucket']}_methods"].append(full)
    best_before = record["baseline_file"]
    if outcome["promoted"]:
        source = kernel_file(layout.iteration(index) / "branches" / outcome["champion"])
        assert source is not None
        frozen = layout.iteration(index) / "champion" / source.name
        copy_fresh(source, frozen)
        state["best_file"] = str(frozen)
        state["best_metric_ms"] = outcome["branches"][outcome["champion"]]["median_ms"]
    else:
        state["best_file"] = best_before
        state["best_metric_ms"] = outcome["current_best_ms"]
    champion = outcome["branches"].get(outcome["champion"] or "", {})
    state["history"].append({
        "iter": index, "status": "improved" if outcome["promoted"] else
        ("no_gain" if outcome["any_correct_branch"] else "all_branches_failed"),
        "champion": outcome["champion"], "kernel_file": state["best_file"], "best_before_file": best_before,
        "best_before_ms": outcome["current_best_ms"], "ms": state["best_metric_ms"],
        "speedup_vs_best_before": champion.get("speedup"), "speedup_interval": champion.get("speedup_interval"),
        "methods": [m["id"] for m in classified], "method_names": [m["name"] for m in classified],
        "branches": outcome["branches"], "ablation": _ablation_summary(outcome.get("ablation")),
        "harness_state": str(harness.run_dir / "state.json"), "closed_at": now()})
    state["history"].sort(key=lambda h: h["iter"])
    state["frontier"] += [{"iter": index, "branch": name, "ms": b["median_ms"], "speedup": b["speedup"]}
                          for name, b in outcome["branches"].items()
                          if name not in ("baseline", outcome["champion"]) and b["correct"] is True and b["median_ms"]]
    state["iterations"][str(index)] = {**record, "status": "closed", "closed_at": now()}
    state["roofline_history"] = [r for r in state.get("roofline_history", [])
                                 if (r.get("iter"), r.get("stage")) != (index, "champion")]
    if (outcome.get("champion_profile") or {}).get("file"):
        state["roofline_history"].append({"iter": index, "stage": "champion", "branch": outcome["champion"],
                                          **outcome["champion_profile"]})
    state["recommendation"] = recommendation(state)


def _ablation_summary(ablation: dict[str, Any] | None) -> dict[str, Any] | None:
    if not ablation:
        return None
    return {k: v for k, v in ablation.items() if k in ("status", "reason", "methods", "interactions", "full_median_ms",
                                                         "min_effect")}


def recommendation(state: dict[str, Any]) -> str | None:
    flat = flat_iterations(state)
    if flat >= FLAT_ITERATIONS_FOR_TRIAGE:
        return (f"{flat} iterations without a material gain: the next `dcuopt open-iter` triages with SQTT (hipprof "
                "--sqtt on a DCU, iterv<i>/sqtt_triage.json; ncu source counters on NVIDIA) before more source "
                "changes")
    return None


def report(state: dict[str, Any], index: int, outcome: dict[str, Any], classified: list[dict[str, Any]]) -> None:
    for name, branch in sorted(outcome["branches"].items()):
        figure = f"{branch['median_ms']:.4g} ms" if branch["median_ms"] else "-"
        interval = f" {branch['speedup_interval']}" if branch["speedup_interval"] else ""
        speed = f", {branch['speedup']:.3g}x{interval}" if branch["speedup"] and name != "baseline" else ""
        print(f"  {name}: {figure}{speed}{' - ' + branch['problem'] if branch['problem'] else ''}")
    if outcome["promoted"]:
        print(f"iteration {index}: {outcome['champion']} is the new best ({state['best_file']})")
    else:
        print(f"iteration {index}: no branch beat the current best beyond noise; the best stays {state['best_file']}")
    for method in classified:
        print(f"  method {method['id']}: {method['bucket']}{' - ' + method['note'] if method.get('note') else ''}")
    if state["recommendation"]:
        print(f"recommendation: {state['recommendation']}")
    total = state["iterations_total"]
    print(f"next: dcuopt {'open-iter' if index < total else 'finalize'} {state['run_dir']}")
