"""`dcuopt setup CASE_DIR`: preflight the case and create the run directory with the baseline seeded.

Preflight is the harness itself: pytest in a subprocess on the case with
`-k "baseline and (correctness or benchmark)"` (ref.py imports, the reference runs at the boundary and Hypothesis
dims, the baseline builds and passes, and is timed). Only then is `<case>/run_<timestamp>/` created, with the
baseline copied, env.json, state.json (`best_metric_ms` = the baseline's median) and `baseline/bench.json` (its
timing, or why there is none).
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .. import __version__
from ..case.model import KernelCase, load_case
from ..errors import CaseError
from ..files import write_atomic
from ..report.machine import now
from ..report.state import find_case
from ..toolchains import toolchain_class
from . import env
from .harness import branch_problem, run_pytest
from .layout import (
    INGESTED_NAME,
    LAYOUT_VERSION,
    METHOD_LISTS,
    LoopError,
    RunLayout,
    copy_fresh,
    save_state,
    stale_sources,
)

DEFAULT_ITERATIONS = 3  # the seed's defaults
DEFAULT_BRANCHES = 4
DEFAULT_NOISE_PCT = 2.0
DEFAULT_TOP_METRICS = 5
PREFLIGHT_SELECTION = "baseline and (correctness or benchmark)"
BENCH_NAME = "bench.json"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("setup", help="preflight a case and create its run directory")
    parser.add_argument("case_dir", type=Path)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="iterations (default 3)")
    parser.add_argument("--branches", type=int, default=DEFAULT_BRANCHES, help="branches per iteration (default 4)")
    parser.add_argument("--toolchain", "--backend", dest="toolchain", default=None,
                        help="toolchain (default: the one that runs the baseline; --backend is its old name)")
    parser.add_argument("--noise-threshold-pct", type=float, default=DEFAULT_NOISE_PCT,
                        help="a 'material' gain for the 3-flat-iterations SQTT rule (default 2.0)")
    # The seed's flat element count for every pointer buffer: removed (buffer shapes come from ref.py). Still parsed,
    # hidden, so that a seed command line gets `deprecated_ptr_size`'s message instead of "unrecognized arguments".
    parser.add_argument("--ptr-size", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--ncu-num", type=int, default=DEFAULT_TOP_METRICS,
                        help="how many metrics the profile ranks as the most telling (the seed's top-K; default "
                             f"{DEFAULT_TOP_METRICS})")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="the run directory (default <case>/run_<timestamp>); an existing one with no iteration "
                             "opened is set up again")
    parser.add_argument("--pytest-args", default="", help="extra pytest arguments for every harness run of this run")
    parser.add_argument("--preflight-from", type=Path, default=None, metavar="DIR",
                        help="judge the case's results measured on another machine instead of running the preflight "
                             "here (a DCU on another host): `dcuopt pack CASE_DIR --toolchain T`, run it there, then "
                             "`dcuopt ingest CASE_DIR results.tar.gz --into DIR`")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.ptr_size is not None:
        deprecated_ptr_size(args.ptr_size)
    if args.iterations < 1 or args.branches < 1 or args.ncu_num < 1:
        raise LoopError(f"--iterations {args.iterations}, --branches {args.branches} and --ncu-num {args.ncu_num} "
                        "must all be at least 1.")
    case_dir = args.case_dir.resolve()
    try:
        case = load_case(case_dir)
    except CaseError as exc:
        raise LoopError(f"{case_dir} is not a kernel case: {exc}") from exc
    run_dir = choose_run_dir(case_dir, args.run_dir)
    pytest_args = shlex.split(args.pytest_args)
    with tempfile.TemporaryDirectory(prefix="dcuopt-preflight-") as scratch:
        if args.preflight_from is not None:
            toolchain, baseline, preflight = ingested_preflight(case_dir, args.toolchain, args.preflight_from.resolve())
            shutil.copytree(args.preflight_from, Path(scratch) / "preflight")
        else:
            toolchain, baseline, preflight = run_preflight(case_dir, args.toolchain, pytest_args, Path(scratch))
        created = not run_dir.exists()
        try:
            seed_run(args, case, case_dir, run_dir, Path(scratch) / "preflight", toolchain, baseline, preflight)
        except BaseException:
            # A run folder without its state.json is neither usable nor obviously broken: take back what this call
            # made (a --run-dir that existed before is the user's and is left as it is).
            if created:
                shutil.rmtree(run_dir, ignore_errors=True)
            raise
    source = next(b.source for b in case.branches if b.is_baseline and b.source.name == baseline)
    print(f"preflight passed: {case.name} baseline {source.name} is correct on {toolchain}")
    print(f"run: {run_dir}\nnext: dcuopt open-iter {run_dir}")
    return 0


def seed_run(args: argparse.Namespace, case: KernelCase, case_dir: Path, run_dir: Path, preflight_dir: Path,
             toolchain: str, baseline: str, preflight: dict[str, Any]) -> None:
    """Write the run directory: the preflight's harness run, the seeded baseline and its bench.json, env.json and
    state.json."""
    layout = RunLayout(run_dir)
    if layout.baseline_dir.exists():
        shutil.rmtree(layout.baseline_dir)
    shutil.copytree(preflight_dir, layout.baseline_dir / "preflight")
    source = next(b.source for b in case.branches if b.is_baseline and b.source.name == baseline)
    seeded = layout.baseline_dir / source.name
    copy_fresh(source, seeded)
    environment = env.probe()
    write_atomic(run_dir / "env.json", json.dumps(environment, indent=2, default=str) + "\n")
    dims = case.for_toolchain(toolchain).dims
    state = initial_state(args, case_dir, run_dir, case.ref_path, dims, toolchain, source, seeded, environment)
    state["preflight"] = preflight
    bench = baseline_bench(preflight, seeded)
    write_atomic(layout.baseline_dir / BENCH_NAME, json.dumps(bench, indent=2) + "\n")
    state["best_metric_ms"] = bench["median_ms"]
    save_state(layout, state)


def deprecated_ptr_size(value: int) -> None:
    """--ptr-size is gone: a size for every buffer is refused (it would be ignored), the seed's 0 only noted."""
    why = ("the seed's --ptr-size gave every pointer buffer one flat element count (0: guessed from the int "
           "parameters); here each buffer has its own shape, from ref.py's `shapes` and the dims (dims.json), so "
           "there is nothing for it to set")
    if value != 0:
        raise LoopError(f"--ptr-size {value} is no longer accepted: {why}. Declare the buffers' shapes in ref.py's "
                        "`shapes` (e.g. shapes = {\"x\": (\"M\", \"K\")}) and drop --ptr-size.")
    print(f"setup: note: --ptr-size is deprecated and ignored: {why}; drop it.", file=sys.stderr)


def choose_run_dir(case_dir: Path, wanted: Path | None) -> Path:
    if wanted is not None:
        run_dir = wanted.resolve()
        state = run_dir / "state.json"
        if state.is_file() and json.loads(state.read_text()).get("iterations"):
            raise LoopError(f"{run_dir} already has opened iterations; setting it up again would orphan them. "
                            "Give a new --run-dir, or leave it out for a fresh run_<timestamp>.")
        return run_dir
    stamp = time.strftime("%Y%m%d_%H%M%S")
    run_dir, n = case_dir / f"run_{stamp}", 1
    while run_dir.exists():  # two setups in one second get distinct runs
        n += 1
        run_dir = case_dir / f"run_{stamp}_{n}"
    return run_dir


def run_preflight(case_dir: Path, wanted: str | None, pytest_args: list[str],
                  scratch: Path) -> tuple[str, str, dict[str, Any]]:
    """(toolchain, baseline file name, what preflight saw), or a LoopError stating the contract failure."""
    extra = ["-k", PREFLIGHT_SELECTION, f"--ignore-glob={case_dir}/run_*", *pytest_args]
    if wanted:
        extra.append(f"--dcuopt-toolchain={wanted}")
    harness = run_pytest([str(case_dir)], scratch / "preflight", extra, cwd=case_dir)
    cases = (find_case(harness.state or {}, case_dir.name) or {}).get("toolchains", {})
    passed = {name: entry["branches"]["baseline"] for name, entry in cases.items()
              if entry["branches"].get("baseline", {}).get("correct") is True}
    if harness.result.returncode != 0 or not passed:
        problems = [f"  {name}: {branch_problem(entry['branches']['baseline'])}" for name, entry in cases.items()
                    if "baseline" in entry["branches"]]
        raise LoopError(f"preflight of {case_dir} failed (pytest exit {harness.result.returncode}): the baseline must "
                        "build and pass its correctness test before any iteration.\n" + "\n".join(problems) +
                        f"\npytest said:\n{harness.output_tail()}")
    if len(passed) > 1:
        raise LoopError(f"the baseline ran on several toolchains ({', '.join(sorted(passed))}); the loop optimizes "
                        "for one: pass --toolchain NAME.")
    return preflight_record(passed, harness.result.command_line, now())


def preflight_record(passed: dict[str, Any], command: str, ran_at: str | None) -> tuple[str, str, dict[str, Any]]:
    """(toolchain, baseline file name, what preflight saw) of the one toolchain whose baseline passed."""
    toolchain, record = next(iter(passed.items()))
    name = Path(record["source"]).name
    if Path(name).suffix not in toolchain_class(toolchain).extensions:
        raise LoopError(f"the {toolchain} baseline {name} has a suffix that toolchain does not build.")
    return toolchain, name, {"toolchain": toolchain, "command": command,
                             "examples": record.get("examples"), "timing": record.get("timing"),
                             "timing_problem": None if record.get("timing") else branch_problem(record),
                             "ran_at": ran_at}


def ingested_preflight(case_dir: Path, wanted: str | None, folder: Path) -> tuple[str, str, dict[str, Any]]:
    """The preflight judged from a case's results measured elsewhere and ingested into `folder`: the pack must be of
    this case, its sources unchanged here, and the baseline correct there."""
    record_path = folder / INGESTED_NAME
    if not record_path.is_file():
        raise LoopError(f"{folder} holds no ingested results ({INGESTED_NAME} is missing): `dcuopt pack {case_dir} "
                        f"--toolchain T`, run it on the device host, then `dcuopt ingest {case_dir} results.tar.gz "
                        f"--into {folder}`.")
    record = json.loads(record_path.read_text())
    manifest = record["manifest"]
    if manifest.get("kind") != "case" or Path(manifest.get("target", "")) != case_dir:
        raise LoopError(f"the results in {folder} are of {manifest.get('target')} ({manifest.get('kind')}), not of "
                        f"the case {case_dir}.")
    stale = stale_sources(manifest)
    if stale:
        raise LoopError(f"{', '.join(stale)} changed here since the pack was made: the results measured the earlier "
                        "version. Pack again, run it there and ingest it.")
    state = json.loads((folder / "state.json").read_text()) if (folder / "state.json").is_file() else {}
    cases = (find_case(state, case_dir.name) or {}).get("toolchains", {})
    passed = {name: entry["branches"]["baseline"] for name, entry in cases.items()
              if (wanted is None or name == wanted) and entry["branches"].get("baseline", {}).get("correct") is True}
    if not passed:
        problems = [f"  {name}: {branch_problem(entry['branches']['baseline'])}" for name, entry in cases.items()
                    if "baseline" in entry["branches"]]
        raise LoopError(f"the results in {folder} (remote exit status {record.get('exit_status')}) do not show the "
                        "baseline built and correct:\n" + ("\n".join(problems) or "  no baseline result"))
    if len(passed) > 1:
        raise LoopError(f"the baseline ran on several toolchains ({', '.join(sorted(passed))}); the loop optimizes "
                        "for one: pass --toolchain NAME.")
    toolchain, name, preflight = preflight_record(passed, str(manifest["command"]), state.get("finished_at"))
    preflight.update(ingested_from=record.get("from"), remote=record.get("remote"))
    return toolchain, name, preflight


def baseline_bench(preflight: dict[str, Any], seeded: Path) -> dict[str, Any]:
    """baseline/bench.json: the baseline's timing in the preflight run (median_ms None, and why, when untimed)."""
    timing = preflight.get("timing") or {}
    found = {"kernel": str(seeded), "toolchain": preflight["toolchain"], "command": preflight["command"],
             "median_ms": timing.get("median_ms"), "timing": timing or None, "measured_at": preflight["ran_at"]}
    if not timing:
        found["reason"] = f"the preflight did not time the baseline: {preflight.get('timing_problem')}"
    return found


def initial_state(args: argparse.Namespace, case_dir: Path, run_dir: Path, ref: Path, dims: dict[str, Any],
                  toolchain: str, original: Path, seeded: Path, environment: dict[str, Any]) -> dict[str, Any]:
    """The seed's state.json keys (state.py init) plus the loop's own (layout_version, toolchain, iterations)."""
    return {
        "layout_version": LAYOUT_VERSION, "tool": {"name": "pytest_dcuopt", "version": __version__},
        "run_dir": str(run_dir), "case_dir": str(case_dir), "case": case_dir.name, "toolchain": toolchain,
        "baseline_file": str(seeded), "baseline_file_original": str(original), "ref_file": str(ref.resolve()),
        "best_file": str(seeded), "best_metric_ms": None, "best_hipprof_output": None, "env": environment,
        "iterations_total": args.iterations, "ncu_num": args.ncu_num, "branches": args.branches,
        "noise_threshold_pct": args.noise_threshold_pct, "dims": dict(dims),
        "pytest_args": shlex.split(args.pytest_args), **{name: [] for name in METHOD_LISTS},
        "history": [], "roofline_history": [], "frontier": [], "iterations": {}, "recommendation": None,
        "created_at": now(),
    }
