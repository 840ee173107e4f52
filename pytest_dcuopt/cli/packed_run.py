"""What a pack's run.sh runs on the device host: `python -m pytest_dcuopt.cli.packed_run` in the pack's root folder,
with the packed plugin first on PYTHONPATH (docs/loop.md "Remote devices").

1. results/files.json (the sha256 of every packed file as it is there, before anything runs) and results/remote.json
   (which pytest_dcuopt runs, from where, its wheel's sha256; Python, host). Refused (exit 3) when a dependency is
   missing or the running pytest_dcuopt is not the packed one.
2. The measurement: the manifest's pytest command into results/pytest/ (close-iter's selection for an iteration).
3. An iteration only, the steps close-iter takes after it, with close-iter's own code: the champion by close-iter's
   rule (`judge_branches` with the pack's min gain), then its ablation (when methods.json carries ablation flags)
   into results/ablation/ and its profile into results/champion_profile/.
results/steps.json says what each step did (command, exit status, folder) or why it did not run. The exit status is
the measurement's pytest exit status.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from ..files import write_atomic
from .close_iter import ablation_step, ablation_unneeded, judge_branches, profile_step
from .harness import HarnessRun, run_pytest, toolchain_entry
from .layout import CHAMPION_PROFILE, LoopError
from .pack import ABLATION, MANIFEST, PLUGIN_ROOT, REMOTE_RUN_DIR, RESULTS, STEPS_NAME

# The plugin's dependencies that a run imports (matplotlib is optional: plots only; xdist is not used here).
REQUIRED = {"pytest": "pytest", "pytest_benchmark": "pytest-benchmark", "hypothesis": "hypothesis",
            "numpy": "numpy", "jsonschema": "jsonschema", "xxhash": "xxhash"}
MISSING_STATUS = 3


def main() -> int:
    root = Path.cwd()
    manifest = json.loads((root / MANIFEST).read_text())
    results = root / RESULTS
    results.mkdir(exist_ok=True)
    record_files(root, manifest, results)
    remote = describe_remote(root, manifest)
    write_json(results / "remote.json", remote)
    problem = refusal(remote)
    if problem:
        print(f"packed_run: {problem}", file=sys.stderr)
        return MISSING_STATUS
    measure = run_pytest([manifest["name"]], Path(REMOTE_RUN_DIR), manifest["harness_args"], cwd=root)
    shutil.copyfile(measure.run_dir / "pytest.log", results / "pytest.log")
    report("measurement", measure)
    steps: dict[str, Any] = {"measure": step_record(measure, "pytest")}
    if manifest["kind"] == "iteration":
        steps.update(champion_steps(root, manifest, measure))
    write_json(results / STEPS_NAME, steps)
    return measure.result.returncode


def record_files(root: Path, manifest: dict[str, Any], results: Path) -> None:
    """The sha256 of every packed file as it is here, before anything runs (ingest compares them with the pack)."""
    found = {name: hashlib.sha256((root / name).read_bytes()).hexdigest() if (root / name).is_file() else None
             for name in manifest["files"]}
    write_json(results / "files.json", found)


def describe_remote(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Which pytest_dcuopt runs here and whether it is the pack's own (unpacked under PLUGIN_ROOT by run.sh)."""
    package = Path(__file__).resolve().parents[1]
    wheel = root / manifest["plugin"]["file"]
    return {"harness_version": __version__, "harness_path": str(package),
            "plugin_from_pack": package.is_relative_to((root / PLUGIN_ROOT).resolve()),
            "plugin_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest() if wheel.is_file() else None,
            "missing_dependencies": [pip for module, pip in REQUIRED.items()
                                     if importlib.util.find_spec(module) is None],
            "python": sys.version.split()[0], "executable": sys.executable, "host": platform.node()}


def refusal(remote: dict[str, Any]) -> str | None:
    if remote["missing_dependencies"]:
        missing = " ".join(remote["missing_dependencies"])
        return (f"{remote['executable']} lacks {missing}: the packed run needs them (pytest_dcuopt itself comes "
                f"with the pack). Install them (pip install {missing}) or set PYTHON to an interpreter that has them.")
    if not remote["plugin_from_pack"]:
        return (f"pytest_dcuopt was imported from {remote['harness_path']}, not from the pack's {PLUGIN_ROOT}/: run "
                "the pack through its run.sh, which puts the packed plugin first on PYTHONPATH.")
    return None


def champion_steps(root: Path, manifest: dict[str, Any], measure: HarnessRun) -> dict[str, Any]:
    """The champion by close-iter's rule, then its ablation and its profile, each into results/<step>/."""
    name, toolchain = manifest["name"], manifest["toolchain"]
    min_gain = float(manifest["min_gain"])
    try:
        outcome = judge_branches(toolchain_entry(measure, name, toolchain), min_gain)
    except LoopError as exc:
        reason = f"no champion could be chosen: {exc}"
        return {"champion": {"status": "not chosen", "champion": None, "min_gain": min_gain, "reason": reason},
                ABLATION: not_run(reason), CHAMPION_PROFILE: not_run(reason)}
    champion = outcome["champion"]
    chosen = {"status": "chosen", "champion": champion, "promoted": outcome["promoted"], "min_gain": min_gain,
              "reason": None if champion else "no branch beat the current best beyond noise and the min gain"}
    print(f"packed_run: champion {champion or 'none'} (close-iter's rule, min gain {min_gain})")
    if not champion:
        return {"champion": chosen, ABLATION: not_run(chosen["reason"]), CHAMPION_PROFILE: not_run(chosen["reason"])}
    folder, extra = Path(name), manifest["champion_args"]
    document = json.loads((root / name / "methods.json").read_text())
    unneeded = ablation_unneeded(document)
    if unneeded:
        ablation = not_run(unneeded)
    else:
        targets, args = ablation_step(folder, toolchain, champion, extra)
        ran = run_pytest(targets, Path(RESULTS) / ABLATION, args, cwd=root)
        report("champion's ablation", ran)
        ablation = step_record(ran, ABLATION)
    targets, args = profile_step(folder, toolchain, champion, extra)
    profiled = run_pytest(targets, Path(RESULTS) / CHAMPION_PROFILE, args, cwd=root)
    report("champion's profile", profiled)
    return {"champion": chosen, ABLATION: ablation, CHAMPION_PROFILE: step_record(profiled, CHAMPION_PROFILE)}


def step_record(harness: HarnessRun, folder: str) -> dict[str, Any]:
    return {"status": "ran", "command": harness.result.command_line, "exit_status": harness.result.returncode,
            "folder": folder}


def not_run(reason: str) -> dict[str, Any]:
    return {"status": "not run", "reason": reason}


def report(what: str, harness: HarnessRun) -> None:
    print(f"packed_run: {what}: pytest exit {harness.result.returncode} ({harness.run_dir})\n{harness.output_tail(15)}",
          flush=True)


def write_json(path: Path, document: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(document, indent=2, default=str) + "\n")


if __name__ == "__main__":
    sys.exit(main())
