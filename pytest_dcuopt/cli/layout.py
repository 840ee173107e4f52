"""The loop's run directory: where every file lives, and its state.json (the seed's keys plus the loop's).

    <case>/run_<YYYYmmdd_HHMMSS>/
      state.json            the loop state (seed layout: ref_file, dims, best_file, history, method lists ...)
      env.json              `dcuopt env` at setup
      baseline/kernel.<ext> the seeded baseline; baseline/preflight/ = the harness run that proved it
      iterv<i>/             a kernel case of its own: ref.py (generated), dims.json, kernel.<ext> = the best
                            before this iteration (its `baseline`), methods.json, analysis.md, branches/b<k>/,
                            pytest/ (the harness run of close-iter), ablation/ (the champion's ablation run),
                            champion/kernel.<ext> (a frozen copy when a branch was promoted)
      summary.md, *.png     `dcuopt finalize` (best_median.png, iterv<i>__<toolchain>.branches/roofline.png)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DcuOptError
from ..files import write_atomic

LAYOUT_VERSION = 1
STATE_NAME = "state.json"
INGESTED_NAME = "ingested.json"  # `dcuopt ingest`'s record beside results measured on another machine
CHAMPION_PROFILE = "champion_profile"  # close-iter's profile of the promoted branch: iterv<i>/champion_profile.json
ITERATION_PREFIX = "iterv"
# The seed's method buckets (state rules), plus `inconclusive` for evidence that could not be gathered.
METHOD_LISTS = ("selected_methods", "effective_methods", "ineffective_methods", "implementation_failed_methods",
                "inconclusive_methods")


class LoopError(DcuOptError):
    """A loop command cannot go on; the message says what is wrong and how to fix it."""


@dataclass(frozen=True)
class RunLayout:
    run_dir: Path

    @property
    def state_path(self) -> Path:
        return self.run_dir / STATE_NAME

    @property
    def baseline_dir(self) -> Path:
        return self.run_dir / "baseline"

    def iteration(self, index: int) -> Path:
        return self.run_dir / f"{ITERATION_PREFIX}{index}"

    def branch(self, index: int, k: int) -> Path:
        return self.iteration(index) / "branches" / f"b{k}"

    def harness_dir(self, index: int) -> Path:
        return self.iteration(index) / "pytest"

    def ablation_dir(self, index: int) -> Path:
        return self.iteration(index) / "ablation"


def load_state(layout: RunLayout) -> dict[str, Any]:
    path = layout.state_path
    if not path.is_file():
        raise LoopError(f"{layout.run_dir} has no {STATE_NAME}: it is not a run directory. Create one with "
                        "`dcuopt setup CASE_DIR`.")
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise LoopError(f"{path} is not valid JSON ({exc}); restore it or start a new run with `dcuopt setup`."
                        ) from exc
    if not isinstance(state, dict):
        raise LoopError(f"{path} holds a JSON {type(state).__name__}, not the run's state object; restore it or start "
                        "a new run with `dcuopt setup`.")
    if state.get("layout_version") != LAYOUT_VERSION:
        raise LoopError(f"{path} has layout_version {state.get('layout_version')!r}; this dcuopt reads version "
                        f"{LAYOUT_VERSION}. A run of the original skill (no layout_version) is read by pytest "
                        "(collection) but cannot be continued by dcuopt: start a new run with `dcuopt setup`.")
    return dict(state)


def add_run_dir_command(commands: argparse._SubParsersAction[argparse.ArgumentParser], name: str, help: str,
                        run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    """The subcommand `name RUN_DIR` (a run directory made by `dcuopt setup`) that calls `run`; more arguments may be
    added to the parser it returns."""
    parser = commands.add_parser(name, help=help)
    parser.add_argument("run_dir", type=Path)
    parser.set_defaults(run=run)
    return parser


def open_run(args: argparse.Namespace) -> tuple[RunLayout, dict[str, Any]]:
    """The layout and the loaded state of the run directory that `add_run_dir_command` parsed into `args.run_dir`."""
    layout = RunLayout(args.run_dir.resolve())
    return layout, load_state(layout)


def save_state(layout: RunLayout, state: dict[str, Any]) -> None:
    write_atomic(layout.state_path, json.dumps(state, indent=2, sort_keys=False, default=str) + "\n")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_fresh(source: Path, target: Path) -> None:
    """Copy `source` over `target` (never keeping an old copy of something else)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def kernel_file(folder: Path) -> Path | None:
    """The one kernel.<ext> source in `folder` (None when there is none)."""
    found = sorted(p for p in folder.glob("kernel.*") if p.is_file() and p.suffix not in (".so", ".o", ".json"))
    if len(found) > 1:
        raise LoopError(f"{folder} holds {len(found)} kernel files ({', '.join(p.name for p in found)}); a loop "
                        "branch has exactly one. Remove the others.")
    return found[0] if found else None


def iteration_record(state: dict[str, Any], index: int) -> dict[str, Any]:
    record = state.get("iterations", {}).get(str(index))
    if record is None:
        raise LoopError(f"iteration {index} was never opened in {state.get('run_dir')}; run `dcuopt open-iter` first.")
    return dict(record)


def current_iteration(state: dict[str, Any]) -> int | None:
    """The highest opened iteration (None before the first open-iter)."""
    opened = [int(k) for k in state.get("iterations", {})]
    return max(opened) if opened else None


FLAT_ITERATIONS_FOR_TRIAGE = 3  # the seed: three iterations in a row without a material gain -> SQTT triage


def flat_iterations(state: dict[str, Any]) -> int:
    """Closed iterations in a row, counted back from the last, without a material gain: no promotion, or a promotion
    whose speedup is below the run's noise threshold (`noise_threshold_pct`, the seed's 2%)."""
    material = 1 + float(state.get("noise_threshold_pct") or 0) / 100
    flat = 0
    for entry in reversed(state.get("history", [])):
        if entry["status"] == "improved" and (entry.get("speedup_vs_best_before") or 0) >= material:
            break
        flat += 1
    return flat


def stale_sources(manifest: dict[str, Any]) -> list[str]:
    """The packed files (of a `dcuopt pack` manifest) whose source here is gone or no longer has the hash it had when
    packed: results measured from them describe an earlier version."""
    return [f"{name} ({entry['source']})" for name, entry in manifest["files"].items()
            if not Path(entry["source"]).is_file()
            or hashlib.sha256(Path(entry["source"]).read_bytes()).hexdigest() != entry["source_sha256"]]

