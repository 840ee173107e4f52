"""Results a pack's run.sh made on the device host, placed here by `dcuopt ingest`, read back as harness runs that
ran here (docs/loop.md "Remote devices"): close-iter --ingested and finalize --ingested judge them instead of
measuring. Each is checked first: its ingest record is there, and no packed file changed here since the pack."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from ..external_tools import ToolResult
from .harness import HarnessRun
from .layout import CHAMPION_PROFILE, INGESTED_NAME, LoopError, RunLayout, stale_sources


def ingested_run(layout: RunLayout, index: int) -> HarnessRun:
    """The harness run `dcuopt ingest` placed in iterv<i>/pytest/, after checking that every packed file is still
    what was measured (a file changed since the pack makes the results stale)."""
    how = (f"`dcuopt pack {layout.run_dir}`, run it on the device host, then `dcuopt ingest {layout.run_dir} "
           "results.tar.gz`; or close without --ingested to measure here")
    return ingested_harness(layout.harness_dir(index), "iteration", index, how, "close-iter")


def ingested_harness(folder: Path, kind: str, index: int | None, how: str, command: str) -> HarnessRun:
    """The harness run that `dcuopt ingest` placed in `folder` from a pack of `kind` (of iteration `index`), checked:
    its record is there (else `how` says how to make it), it is of that pack, and no packed file changed here since
    the pack. `command` (the loop step judging it) prints where the results came from."""
    record = read_record(folder, how)
    manifest = record["manifest"]
    if manifest.get("kind", "iteration") != kind:
        raise LoopError(f"the results ingested into {folder} are of a `{manifest.get('kind')}` pack, not of a `{kind}` "
                        f"pack: {how}.")
    if index is not None and int(manifest.get("iteration") or 0) != index:
        raise LoopError(f"the ingested results are of iteration {manifest.get('iteration')}, not {index}.")
    changed = stale_sources(manifest)
    if changed:
        raise LoopError(f"{', '.join(changed)} changed here since the pack was made: the ingested results measured "
                        f"the earlier version. Pack again, run it there, ingest, then run `dcuopt {command}` again.")
    status = str(record.get("exit_status", ""))
    print(f"{command}: judging the results ingested at {record.get('ingested_at')} from {record.get('from')} "
          "(measured on the remote machine; nothing is measured here)")
    return remote_harness(folder, manifest["command"], int(status) if status.lstrip("-").isdigit() else -1)


def ingested_record(layout: RunLayout, index: int) -> dict[str, Any]:
    return read_record(layout.harness_dir(index), f"`dcuopt pack {layout.run_dir}`, run it on the device host, then "
                                                  f"`dcuopt ingest {layout.run_dir} results.tar.gz`; or close without "
                                                  "--ingested to measure here")


def read_record(folder: Path, how: str) -> dict[str, Any]:
    """`dcuopt ingest`'s record in `folder`, or a LoopError saying how to make one."""
    record_path = folder / INGESTED_NAME
    if not record_path.is_file():
        raise LoopError(f"{folder} holds no ingested results ({INGESTED_NAME} is missing): {how}.")
    return dict(json.loads(record_path.read_text()))


def remote_harness(folder: Path, command: str, status: int) -> HarnessRun:
    """A harness run made on another machine, as if it had run here: its pytest.log stands for the output."""
    log = folder / "pytest.log"
    result = ToolResult(tuple(shlex.split(command)), status, log.read_text(errors="replace") if log.is_file() else "",
                        "", 0.0)
    return HarnessRun(result, folder)


def ingested_step(layout: RunLayout, index: int, name: str, champion: str, min_gain: float) -> HarnessRun | str:
    """The champion step `name` (`ablation`, `champion_profile`) that the pack's run made for `champion` and ingest
    placed here, or why there is none (the remote run did not make it, or made it for another champion)."""
    steps = ingested_record(layout, index).get("steps")
    what = STEP_WHAT[name]
    if not isinstance(steps, dict) or name not in steps:
        return (f"the ingested results hold no {what}: the pack that made them ran the measurement only; pack "
                "the iteration again with this dcuopt (`dcuopt pack RUN_DIR --iter N`) and run it there")
    chosen = steps.get("champion") or {}
    if chosen.get("champion") != champion:
        why = f": {chosen['reason']}" if chosen.get("reason") else ""
        return (f"the remote run chose {chosen.get('champion') or 'no champion'} (min gain {chosen.get('min_gain')})"
                f"{why} and made the {what} of that choice; this close promotes {champion} (min gain {min_gain}). "
                f"Pack again with `--min-gain {min_gain}`, run it there and ingest")
    step = steps[name]
    if step.get("status") != "ran":
        return f"the remote run did not run the {what}: {step.get('reason')}"
    folder = layout.iteration(index) / step["folder"]
    if not folder.is_dir():
        return f"the remote run made the {what}, but {folder} is missing: run `dcuopt ingest` again"
    return remote_harness(folder, step["command"], int(step["exit_status"]))


STEP_WHAT = {"ablation": "champion's ablation", CHAMPION_PROFILE: "champion's profile"}
