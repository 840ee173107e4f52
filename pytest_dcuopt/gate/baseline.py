"""The baseline of a gated run: an earlier run's state.json, and whether one of its branches may be compared with
a branch of this run (same device, toolchain identity, dims and timing mode) or why not."""
from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from ..option_declarations import COMPARE_OPTION
from ..report.state import READABLE_SCHEMA_VERSIONS, SCHEMA_VERSION, validate_state

LATEST = "latest"


def resolve_baseline(text: str, run_dir: Path) -> Path:
    """The state.json named by --dcuopt-compare: a file, a run directory, or `latest` (the newest run beside this
    run's directory). Resolved now, before this run moves `latest`."""
    given = run_dir.parent / LATEST if text == LATEST else Path(text).expanduser()
    path = given / "state.json" if given.is_dir() else given
    if not path.is_file():
        hint = (f"no earlier run beside {run_dir}: run once without {COMPARE_OPTION} first, or give the path of a "
                "state.json" if text == LATEST else "give an earlier run's state.json, its run directory, or `latest`")
        raise pytest.UsageError(f"{COMPARE_OPTION}={text}: {path} does not exist; {hint}")
    return path.resolve()


def xdist_workers(config: pytest.Config) -> int:
    """How many xdist workers this session ran its tests on (0: no xdist, the tests ran in this process). On the
    controller xdist has turned `-n N` into N `popen` specs; `--tx` specs may say `N*spec`."""
    option = config.option
    if getattr(option, "dist", "no") == "no":
        return 0
    count = 0
    for spec in getattr(option, "tx", None) or []:
        times, star, _ = str(spec).partition("*")
        count += int(times) if star and times.isdigit() else 1
    return count


def describe_workers(workers: int) -> str:
    return "no xdist workers (-n 0)" if workers == 0 else f"{workers} xdist workers (-n {workers})"


def parallelism_warning(baseline_workers: int | None, workers: int | None) -> str | None:
    """A sentence when the baseline ran with another number of xdist workers than this run, else None (also when
    either run did not record it). Under the device lock such timings are comparable, so the gate goes on; a branch
    timed beside other workers without the lock is REFUSED on its own (`refusals`)."""
    if baseline_workers is None or workers is None or baseline_workers == workers:
        return None
    return (f"the baseline ran with {describe_workers(baseline_workers)}, this run with {describe_workers(workers)}: "
            "builds, collection and the other workers' work share the host with every timing, so the two runs were "
            "not measured alike; gate runs made the same way (both with -n 0 for a CPU kernel)")


def refuse_partial(path: Path, state: Mapping[str, Any], selection: Sequence[str]) -> None:
    """A baseline must have run what this run runs: against a partial one, every branch it did not run passes as
    NEW. A baseline with this run's own selection (the same -k, -m, test ids) ran the same tests and is taken; one
    cut short (stopped, interrupted, nothing timed) never is. A state written before runs recorded their scope has
    no `scope` and is taken as it is."""
    scope = state.get("scope")
    if not isinstance(scope, Mapping) or scope.get("complete") is not False:
        return
    because = [str(reason) for reason in scope.get("partial_because") or []]
    chosen = [str(reason) for reason in scope.get("selection") or []]
    if because == chosen and chosen == list(selection):
        return
    why = "; ".join(because) or "reason not recorded"
    cases = ", ".join(sorted(state.get("cases", {}))) or "no case"
    mine = f"this run's selection ({'; '.join(selection)})" if selection else "no selection (every test)"
    raise pytest.UsageError(
        f"{COMPARE_OPTION}: {path} is a partial run ({why}), so every branch it did not run would pass this gate as "
        f"NEW. The baseline must be a complete run of the cases ({cases}): no -k, -m, --lf or test ids, every "
        f"benchmark size, not stopped early, with timings (or a run with exactly {mine}, run to the end). Run that "
        f"once, then gate against its state.json or `{LATEST}` (which only a complete run moves).")


@dataclass(frozen=True)
class Baseline:
    path: Path
    state: Mapping[str, Any]

    @classmethod
    def load(cls, path: Path, selection: Sequence[str] = ()) -> Baseline:
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
            raise pytest.UsageError(f"{COMPARE_OPTION}: cannot read {path} as a state.json ({exc}); give an "
                                    "earlier run's state.json") from None
        if not isinstance(state, dict) or state.get("schema_version") not in READABLE_SCHEMA_VERSIONS:
            found = state.get("schema_version") if isinstance(state, dict) else type(state).__name__
            raise pytest.UsageError(f"{COMPARE_OPTION}: {path} has schema_version {found!r}, this harness writes "
                                    f"{SCHEMA_VERSION} and reads {READABLE_SCHEMA_VERSIONS}; re-run the baseline with "
                                    "this version")
        try:
            validate_state(state)
        except Exception as exc:  # jsonschema.ValidationError: jsonschema is imported lazily by validate_state
            first_line = str(exc).splitlines()[0]
            raise pytest.UsageError(f"{COMPARE_OPTION}: {path} is not a valid state.json: {first_line}") from None
        refuse_partial(path, state, selection)
        return cls(path, state)

    @property
    def workers(self) -> int | None:
        """How many xdist workers the baseline ran with (state.json `scope.workers`); None when not recorded."""
        value = (self.state.get("scope") or {}).get("workers")
        return value if isinstance(value, int) else None

    @property
    def label(self) -> str:
        return f"{self.path} ({self.state.get('created_at', 'time not recorded')})"

    def case_key(self, case: str) -> str:
        """The key this baseline gives the case this run keys `case` (its folder relative to the rootdir): the same,
        or the folder's name in a baseline of schema_version 1, which keyed cases by name."""
        return PurePosixPath(case).name if self.state.get("schema_version") == 1 else case

    def branch(self, case: str, toolchain: str, branch: str, size: str | None = None) -> Mapping[str, Any] | None:
        """The baseline's entry of a branch; with `size`, the branch as timed at that benchmark size (the size's
        entry over the branch's, which holds its build and verdicts), or None when it was not there."""
        toolchains = self.state["cases"].get(self.case_key(case), {}).get("toolchains", {})
        found = toolchains.get(toolchain, {}).get("branches", {})
        entry: Mapping[str, Any] | None = found.get(branch)
        if size is None or entry is None:
            return entry
        sized = (entry.get("sizes") or {}).get(size)
        return None if sized is None else {**entry, **sized}

    def identity(self, toolchain: str) -> str | None:
        """The compiler identity the baseline recorded for `toolchain` (None in states written before it was)."""
        value = self.state.get("toolchains", {}).get(toolchain, {}).get("identity")
        return str(value) if value else None

    def branch_keys(self) -> list[tuple[str, ...]]:
        """(case, toolchain, branch) of every branch; (case, toolchain, branch, size) per benchmark size instead
        for a branch timed at sizes."""
        keys: list[tuple[str, ...]] = []
        for case, data in self.state["cases"].items():
            for toolchain, result in data["toolchains"].items():
                for branch, entry in result["branches"].items():
                    sizes = list(entry.get("sizes") or {})
                    keys += [(case, toolchain, branch, size) for size in sizes] or [(case, toolchain, branch)]
        return keys


def gate_samples_ms(timing: Mapping[str, Any]) -> list[float] | None:
    """The raw samples the branch's median came from: hot ones in hot mode (device timing keeps its cold samples
    in `samples_ms` and hot ones under `hot`), else `samples_ms`."""
    hot = timing.get("hot")
    if timing.get("mode") == "hot" and isinstance(hot, Mapping) and hot.get("samples_ms"):
        return list(hot["samples_ms"])
    samples = timing.get("samples_ms")
    return list(samples) if samples else None


def refusals(before: Mapping[str, Any], after: Mapping[str, Any], before_identity: str | None,
             after_identity: str | None) -> list[str]:
    """Why the two branch records may not be compared ([] when they may). Both are state.json branch entries."""
    before_timing, after_timing = before.get("timing") or {}, after.get("timing") or {}
    if not before_timing:
        why = before.get("skipped") or ("it failed its correctness test" if before.get("correct") is False
                                        else "it was deselected or failed before timing")
        return [f"the baseline did not time this branch ({why})"]
    if not gate_samples_ms(before_timing):
        return ["the baseline kept no raw samples (timing.samples_ms): it was written by a harness that stored "
                "only host medians; re-run the baseline with this version"]
    if not after_timing or not gate_samples_ms(after_timing):
        return ["this run kept no raw samples for the branch"]
    reasons = _differences("device", _device(before), _device(after))
    if before_identity and after_identity and before_identity != after_identity:
        reasons.append(f"compiler identity differs: {before_identity!r} then, {after_identity!r} now")
    reasons += _differences("build command", build_signature(before), build_signature(after))
    reasons += _differences("dims", before_timing.get("dims"), after_timing.get("dims"))
    reasons += _differences("timing mode", timing_mode(before_timing), timing_mode(after_timing))
    reasons += [why for side, timing in (("the baseline", before_timing), ("this run", after_timing))
                if (why := _shared(side, timing))]
    return reasons


def _shared(side: str, timing: Mapping[str, Any]) -> str:
    """Why samples taken while other xdist workers ran on the machine, without the device lock, are no measure."""
    workers = int(timing.get("concurrent_workers") or 1)
    if workers <= 1 or (timing.get("device_lock") or {}).get("held"):
        return ""
    return (f"{side} timed it while {workers} xdist workers shared the machine, without the device lock: its samples "
            "include the other workers' load; time with -n 0")


def _differences(what: str, before: Any, after: Any) -> list[str]:
    if before == after:
        return []
    return [f"{what} differs: {_show(before)} then, {_show(after)} now"]


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else repr(value)


def _device(branch: Mapping[str, Any]) -> dict[str, Any]:
    """What names the device a branch was timed on: its name and, for GPUs, its architecture."""
    device = branch.get("device") or {}
    return {key: device[key] for key in ("device", "arch") if device.get(key) is not None}


def timing_mode(timing: Mapping[str, Any]) -> dict[str, Any]:
    """What decides what a sample means: cold or hot, the timer, the L2 flush and the event-offset correction."""
    mode: dict[str, Any] = {"mode": timing.get("mode"), "timer": timing.get("timer")}
    flush = timing.get("flush")
    if isinstance(flush, Mapping):
        mode["flush"] = flush.get("mode")
    offset = timing.get("event_offset")
    if isinstance(offset, Mapping):
        mode["event_offset"] = offset.get("method")
    return mode


def build_signature(branch: Mapping[str, Any]) -> str:
    """The build command with this run's paths taken out (the build cache, the source's checkout path), so two
    checkouts of one commit compare equal while a different compiler or flag does not."""
    build = branch.get("build") or {}
    command = str(build.get("command") or "")
    artifact = str(build.get("artifact") or "")
    source = str(branch.get("source") or "")
    cache_root = str(Path(artifact).parent.parent) if artifact else ""
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    return " ".join(_neutral(token, cache_root, source) for token in tokens)


def _neutral(token: str, cache_root: str, source: str) -> str:
    if cache_root and cache_root != "." and cache_root in token:
        before, _, rest = token.partition(cache_root)
        return before + "<build>/" + Path(rest).name
    if source and token.endswith(source):
        return "<source>"
    return token
