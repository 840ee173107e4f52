"""Driver of tools/device/pack_check.sh: a packed run on the device, and the remote loop of two iterations.

    python3 tools/device/pack_check.py run --archive PACK.tar.gz --work W --out OUT [--python python3]
    python3 tools/device/pack_check.py loop --case CASE --toolchain cuda --fast BRANCH_FILE --work W --out OUT \
        [--real-flag F --placebo-flag F --python python3 --pytest-args "..."]

`run`: PACK unpacked into W/remote, its run.sh run with PYTHON (an interpreter that need not have pytest_dcuopt: the
pack carries it), from W; results.tar.gz is copied to OUT/<pack>-results.tar.gz and what remote.json and steps.json
say goes into OUT/pack-check.json.

`loop`: two iterations of the loop and finalize with every device step packed, as a person whose device is on
another host does it. The "here" side is this checkout with the GPU hidden (CUDA_VISIBLE_DEVICES and
HIP_VISIBLE_DEVICES empty), the "there" side run.sh with PYTHON in a folder of its own; each pack is made here, run
there and ingested here: `dcuopt pack` of a copy of CASE (the preflight's selection) then `setup --preflight-from`;
`open-iter --ingested` (the iteration opens, its profile to come), `pack --profile` (the best's profile, there),
`open-iter --ingested` (profile.json, budget.json from it); a methods.json proposed as tools/device/loop_check.py
does (the first method carrying --real-flag, the second --placebo-flag), b1 = FAST, b2 = the baseline, `pack --iter
1` (measurement, champion, its ablation and profile, there), `close-iter --ingested`; `open-iter --ingested` of
iteration 2 (its best is the champion: its profile is the one made there), both branches the first baseline, `pack
--iter 2`, `close-iter --ingested` (nothing promoted); `pack --final` (the first baseline against the final best,
there), `finalize --ingested`. OUT/pack-loop.json says what each step did, where each iteration's profile came from,
the methods' buckets, where the ablation and the champion's profile were measured, whether close-iter changed any
ingested file (it must measure nothing), the history and the head-to-head; OUT gets the results of each iteration's
pack, state.json, summary.md, the attributions, iteration 1's champion profile and head_to_head.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tarfile
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "tools" / "device"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from loop_check import PLACEBO_FLAG, REAL_FLAG, kernel_of, methods_for  # noqa: E402

from pytest_dcuopt.external_tools import run_tool  # noqa: E402

STEP_TIMEOUT_S = 480.0
HIDDEN_DEVICE = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": ""}
PREFLIGHT_SELECTION = "baseline and (correctness or benchmark)"


def here_env() -> dict[str, str]:
    """The environment of the commands here (overrides): this checkout first, the device hidden, and the plugin
    registered by name where it is not installed (no entry point)."""
    env = {**HIDDEN_DEVICE, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    try:
        metadata.distribution("pytest-dcuopt")
    except metadata.PackageNotFoundError:
        env["PYTEST_PLUGINS"] = "pytest_dcuopt.plugin"
    return env


def dcuopt(*argv: str | Path, timeout: float = STEP_TIMEOUT_S) -> dict[str, Any]:
    """A dcuopt command here: this checkout's plugin, the device hidden."""
    result = run_tool([sys.executable, "-m", "pytest_dcuopt.cli.main", *map(str, argv)], timeout=timeout, cwd=REPO,
                      env=here_env())
    return {"command": "dcuopt " + " ".join(map(str, argv)), "exit": result.returncode,
            "seconds": round(result.seconds, 1), "tail": (result.stdout + result.stderr).strip()[-2000:]}


def there_env() -> dict[str, str]:
    """run.sh's environment (overrides of this one): no checkout on PYTHONPATH (carried wheels stay)."""
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != REPO]
    return {"PYTHONPATH": os.pathsep.join(kept), "PYTEST_PLUGINS": ""}


def run_there(archive: Path, where: Path, python: str, timeout: float = STEP_TIMEOUT_S) -> dict[str, Any]:
    """The pack unpacked into `where` and its run.sh run with `python` from there."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    with tarfile.open(archive) as packed:
        packed.extractall(where, filter="data")
    (root,) = [p for p in where.iterdir() if p.is_dir()]
    importable = run_tool([python, "-c", "import pytest_dcuopt, sys; sys.stdout.write(pytest_dcuopt.__file__)"],
                          timeout=120, cwd=where, env=there_env())
    result = run_tool(["bash", str(root / "run.sh")], timeout=timeout, cwd=where,
                      env={**there_env(), "PYTHON": python})
    results = root / "results"
    found: dict[str, Any] = {"archive": str(archive), "run_sh_exit": result.returncode,
                             "seconds": round(result.seconds, 1), "tail": (result.stdout + result.stderr)[-2500:],
                             "results": str(root / "results.tar.gz")}
    # Whether that interpreter has a pytest_dcuopt of its own (the packed one must run all the same).
    found["pytest_dcuopt_installed_there"] = importable.stdout if importable.returncode == 0 else None
    for name in ("remote.json", "steps.json"):
        path = results / name
        found[name.removesuffix(".json")] = json.loads(path.read_text()) if path.is_file() else None
    return found


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def run_command(args: argparse.Namespace) -> int:
    work, out = Path(args.work), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    archive = Path(args.archive).resolve()
    found = run_there(archive, work / "remote", args.python)
    results = Path(found["results"])
    if results.is_file():
        shutil.copyfile(results, out / f"{archive.name.removesuffix('.tar.gz')}-results.tar.gz")
    write(out / "pack-check.json", found)
    print(json.dumps({k: v for k, v in found.items() if k != "tail"}, indent=1)[:4000])
    print(found["tail"])
    return int(found["run_sh_exit"])


def loop(args: argparse.Namespace) -> int:
    work, out = Path(args.work).resolve(), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    case = work / "case"
    for folder in (case, work / "run", work / "measured"):
        if folder.exists():
            shutil.rmtree(folder)
    shutil.copytree(args.case, case, ignore=shutil.ignore_patterns("run_*", "__pycache__", "*.so", "*.o"))
    baseline = kernel_of(case)
    run_dir = work / "run"
    report: dict[str, Any] = {"case": str(args.case), "toolchain": args.toolchain, "steps": [], "checks": {}}
    steps, checks = report["steps"], report["checks"]

    def step(*argv: str | Path) -> bool:
        steps.append(dcuopt(*argv))
        write(out / "pack-loop.json", report)
        print(f"--- {steps[-1]['command'][:160]}: exit {steps[-1]['exit']} ({steps[-1]['seconds']} s)", flush=True)
        return bool(steps[-1]["exit"] == 0)

    def packed(target: Path, label: str, *pack_args: str | Path, into: Path | None = None) -> bool:
        """`dcuopt pack TARGET PACK_ARGS`, its run.sh run there, its results ingested here."""
        archive = work / f"{label}.pack.tar.gz"
        if not step("pack", target, *pack_args, "-o", archive):
            return False
        found = run_there(archive, work / f"there-{label}", args.python)
        steps.append({"command": f"run.sh of {archive.name} with {args.python}", "exit": found["run_sh_exit"],
                      "seconds": found["seconds"], "tail": found["tail"], "remote": found["remote"],
                      "steps": found["steps"]})
        write(out / "pack-loop.json", report)
        print(f"--- run.sh of {archive.name}: exit {found['run_sh_exit']} ({found['seconds']} s)", flush=True)
        if Path(found["results"]).is_file() and label.startswith("iterv"):
            shutil.copyfile(found["results"], out / f"{label}-results.tar.gz")
        where: list[str | Path] = ["--into", into] if into else []
        return step("ingest", target, found["results"], *where)

    harness = f"--dcuopt-toolchain={args.toolchain} {args.pytest_args}".strip()
    if not (packed(case, "case", "--toolchain", args.toolchain, "--pytest-args",
                   f"{args.pytest_args} -k '{PREFLIGHT_SELECTION}'", into=work / "measured")
            and step("setup", case, "--iterations", "2", "--branches", "2", "--run-dir", run_dir,
                     "--preflight-from", work / "measured", "--pytest-args", harness)
            # open-iter: the best's profile is measured there (the budget comes before the methods).
            and step("open-iter", run_dir, "--ingested")
            and packed(run_dir, "iterv1-profile", "--profile")
            and step("open-iter", run_dir, "--ingested")):
        return finish(report, out, False)
    report["profiles"] = {"iterv1": profile_origin(run_dir, 1)}
    iteration = run_dir / "iterv1"
    write(iteration / "methods.json", methods_for(run_dir, 1, (args.real_flag, args.placebo_flag), args.toolchain))
    shutil.copyfile(args.fast, iteration / "branches" / "b1" / f"kernel{baseline.suffix}")
    shutil.copyfile(baseline, iteration / "branches" / "b2" / f"kernel{baseline.suffix}")
    if not packed(run_dir, "iterv1", "--iter", "1"):
        return finish(report, out, False)
    placed = {name: digests(iteration / name) for name in ("pytest", "ablation", "champion_profile")}
    closed = step("close-iter", run_dir, "--ingested")
    checks["close_iter_changed_no_ingested_file"] = placed == {
        name: digests(iteration / name) for name in ("pytest", "ablation", "champion_profile")}
    checks["close_iter_measured_nothing"] = "nothing is measured here" in steps[-1]["tail"] or None
    if not closed:
        return finish(report, out, False)
    attribution = json.loads((iteration / "attribution.json").read_text())
    report["buckets"] = {m["id"]: (m["bucket"], m.get("note")) for m in attribution["methods"]}
    report["ablation"] = {k: attribution.get("ablation", {}).get(k) for k in ("status", "reason", "measured")}
    report["ablation_methods"] = {k: {f: v.get(f) for f in ("outcome", "slowdown_when_removed", "slowdown_interval",
                                                             "rounds")}
                                  for k, v in (attribution.get("ablation", {}).get("methods") or {}).items()}
    report["champion_profile"] = attribution.get("champion_profile")
    # Iteration 2: its best is the champion (its profile came from there); both branches the first baseline, so
    # nothing may be promoted.
    if not step("open-iter", run_dir, "--ingested"):
        return finish(report, out, False)
    report["profiles"]["iterv2"] = profile_origin(run_dir, 2)
    second = run_dir / "iterv2"
    write(second / "methods.json", methods_for(run_dir, 2, (), args.toolchain))
    for branch in ("b1", "b2"):
        shutil.copyfile(baseline, second / "branches" / branch / f"kernel{baseline.suffix}")
    done = (packed(run_dir, "iterv2", "--iter", "2") and step("close-iter", run_dir, "--ingested")
            and packed(run_dir, "final", "--final") and step("finalize", run_dir, "--ingested"))
    return finish(report, out, done, run_dir)


def profile_origin(run_dir: Path, index: int) -> dict[str, Any]:
    """Where iteration `index`'s profile of the best and its budget came from."""
    folder = run_dir / f"iterv{index}"
    profile = json.loads((folder / "profile.json").read_text())
    budget = json.loads((folder / "budget.json").read_text())
    return {"measured": profile.get("measured", "here"), "from": profile.get("from"), "verdict": profile["verdict"],
            "bound": budget.get("bound"), "budget": budget.get("budget")}


def finish(report: dict[str, Any], out: Path, done: bool, run_dir: Path | None = None) -> int:
    """pack-loop.json with the run's decisions, and its small files copied out."""
    if run_dir is not None and (run_dir / "state.json").is_file():
        state = json.loads((run_dir / "state.json").read_text())
        report["history"] = [(h["iter"], h["status"], h["champion"]) for h in state["history"]]
        report["roofline_history"] = [(r["iter"], r["stage"], r.get("verdict")) for r in state["roofline_history"]]
        final = run_dir / "final" / "head_to_head.json"
        report["head_to_head"] = json.loads(final.read_text()) if final.is_file() else None
        report["checks"]["iteration2_not_promoted"] = [h["status"] for h in state["history"]][1:] == ["no_gain"]
        for name in ("state.json", "summary.md", "iterv1/attribution.json", "iterv1/champion_profile.json",
                     "iterv2/attribution.json", "final/head_to_head.json"):
            if (run_dir / name).is_file():
                shutil.copyfile(run_dir / name, out / name.replace("/", "-"))
    write(out / "pack-loop.json", report)
    print(json.dumps({k: v for k, v in report.items() if k != "steps"}, indent=1, default=str)[:8000])
    return 0 if done else 1


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a pack's run.sh and keep its results")
    run.add_argument("--archive", required=True)
    loop_parser = commands.add_parser("loop", help="one iteration with every device step packed")
    loop_parser.add_argument("--case", type=Path, required=True)
    loop_parser.add_argument("--toolchain", required=True)
    loop_parser.add_argument("--fast", type=Path, required=True, help="b1's kernel (b2 is the baseline)")
    loop_parser.add_argument("--real-flag", default=REAL_FLAG)
    loop_parser.add_argument("--placebo-flag", default=PLACEBO_FLAG)
    loop_parser.add_argument("--pytest-args", default="")
    for sub in (run, loop_parser):
        sub.add_argument("--work", required=True)
        sub.add_argument("--out", required=True)
        sub.add_argument("--python", default="python3", help="the interpreter run.sh uses there")
    args = parser.parse_args(argv)
    return run_command(args) if args.command == "run" else loop(args)


if __name__ == "__main__":
    sys.exit(main())
