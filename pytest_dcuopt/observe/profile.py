"""The `test_profile_<toolchain>[<branch>]` items: run the branch under the platform's profiler, keep only the
kernel under test, normalize, classify on the roofline, record.

`ProfileObserver` is registered through the `pytest_dcuopt_observers` hook. The profiler (a profiler of
`profile.profilers`, chosen by toolchain and ISA family) wraps `python -m pytest_dcuopt.run.profile_target`,
which makes one warm-up call and one profiled `solve` call at the case's dims. Outcomes: the kernel was
profiled -> pass; the mark is invalid or the build failed -> fail; the profiler is missing -> skip naming it;
it failed, found no row of the kernel, or could only run degraded (e.g. perf without hardware counters) ->
skip with the reason and the tool's stderr (never a pass). Everything goes to `profile.json` in the run
directory, a summary to the branch record's `observations["profile"]`; raw files stay under
`<run dir>/profile/<case>__<toolchain>__<branch>/`.
"""
from __future__ import annotations

import json
import pickle
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..bench.run import held_locks
from ..case.reference import call_with_declared_dims
from ..markers import PROFILE_MARKER
from ..profile.kernels import KernelFilter, select_rows
from ..profile.metrics import derive, metric_set, rank_metrics
from ..profile.profilers import Collected, ProfileJob, Profiler, profiled_toolchains, profiler_for
from ..profile.registers import register_pressure
from ..profile.roofline import ceilings_for, classify
from ..profile.spec import ProfileMarkError, ProfileSpec, merge_specs
from ..toolchains.binding import BindSpec
from . import built_artifact
from .isa import collect_dump

if TYPE_CHECKING:
    from ..context import RunContext
    from ..toolchains.base import Toolchain
    from ..variant import Variant

REPORT_NAME = "profile.json"
REPORT_SCHEMA_VERSION = 1
COPY_BYTES = {"cpu": 256 << 20}  # a host copy well beyond the last-level cache; GPUs: 1 GiB
DEFAULT_COPY_BYTES = 1 << 30


class ProfileObserver:
    """The `profile` marker: profile the branch's kernel, normalize, classify, record."""

    name = "profile"
    marker = PROFILE_MARKER
    report_name = REPORT_NAME
    measures = True

    def __init__(self) -> None:
        self.ceilings: dict[tuple[str, str], dict[str, Any]] = {}  # measured copies, once per toolchain+device

    def applies(self, toolchain: type[Toolchain], marks: Sequence[pytest.Mark]) -> bool:
        return toolchain.name in profiled_toolchains() and any(m.name == PROFILE_MARKER for m in marks)

    def observe(self, context: RunContext, variant: Variant, item: pytest.Item) -> None:
        invalid: str | None = None
        try:
            spec = profile_spec(item)
        except ProfileMarkError as exc:
            invalid = str(exc)  # failed outside the except block, so pytest shows no chained traceback
        if invalid is not None:
            pytest.fail(invalid, pytrace=False)
        entry = self.profile(context, variant, spec, item.nodeid)
        context.add_report(self.name, entry)
        variant.record.observations["profile"] = record_summary(entry)
        conclude(entry)

    def write_report(self, path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
        write_report(path, entries, header)

    def profile(self, context: RunContext, variant: Variant, spec: ProfileSpec, nodeid: str) -> dict[str, Any]:
        toolchain = variant.toolchain
        artifact = built_artifact(context, variant, runs_kernel=True)
        assert variant.reference is not None
        dump = collect_dump(toolchain, artifact)
        profiler = profiler_for(toolchain.name, dump.family)
        if profiler is None:
            pytest.skip(f"no profiler for toolchain {toolchain.name!r} with ISA family {dump.family!r}")
        missing = profiler.missing()
        if missing:
            pytest.skip(f"profile: {profiler.tool} unavailable: {missing}")
        kernels = kernel_filter(toolchain.name, dump.functions, dump.demangled)
        dims = {**variant.case.dims, **spec.dims}
        workdir = work_dir(context, variant)
        request = self.write_request(variant, profiler, spec, dims, workdir)
        job = ProfileJob((sys.executable, "-m", "pytest_dcuopt.run.profile_target", str(request)), workdir,
                         spec.metrics, spec.sections, spec.sqtt, spec.timeout_s)
        with held_locks(variant):  # a profile is a measurement: nothing else times on the device meanwhile
            collected = profiler.collect(job)
        target = read_target_result(request)
        entry = self.analyse(variant, spec, dims, profiler, kernels, collected, target)
        arch = dump.arch or (platform.machine() if dump.family == "x86" else None)  # host code: the host's arch
        entry.update({"nodeid": nodeid, "workdir": str(workdir), "kernel_names": dict(kernels.names),
                      "isa_dump": {"family": dump.family, "arch": arch, "errors": list(dump.errors)},
                      "registers": register_pressure(dump.resources, arch)})
        return entry

    def write_request(self, variant: Variant, profiler: Profiler, spec: ProfileSpec, dims: Mapping[str, Any],
                      workdir: Path) -> Path:
        assert variant.reference is not None
        toolchain = variant.toolchain
        bind = BindSpec(dict(dims), 0, variant.shapes(dims), variant.reference.inputs)
        measured = (toolchain.name, str(variant.artifact.arch if variant.artifact else None)) in self.ceilings
        assert variant.worker is not None  # the branch's worker: the target loads the artifact as it does
        loads = variant.worker.spec  # the build settings' arch and flags (variant.resolve), not a second route
        request = {"toolchain": toolchain.name, "arch": loads.arch, "flags": loads.flags,
                   "artifact": variant.artifact, "params": variant.params, "spec": bind, "range": profiler.range_kind,
                   "measure_copy_bytes": 0 if measured else COPY_BYTES.get(toolchain.name, DEFAULT_COPY_BYTES),
                   **profiler.range_request(workdir)}
        path = workdir / "request.pickle"
        path.write_bytes(pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
        return path

    def analyse(self, variant: Variant, spec: ProfileSpec, dims: Mapping[str, Any], profiler: Profiler,
                kernels: KernelFilter, collected: Collected, target: dict[str, Any]) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "case": variant.case.name, "toolchain": variant.toolchain.name, "branch": variant.branch.name,
            "source": variant.record.source, "mark": spec.to_json(), "dims": dict(dims), "profiler": profiler.name,
            "tool": profiler.tool, "range": profiler.range_kind, "runs": [r.to_json() for r in collected.runs],
            "raw_files": list(collected.files), "notes": list(collected.notes), "target": target,
        }
        if collected.failure is not None:
            return {**entry, "outcome": "inconclusive", "reason": f"{profiler.tool} failed: {collected.failure}"}
        if not target:
            return {**entry, "outcome": "inconclusive",
                    "reason": "the profile target wrote no result (it did not run to the end under the profiler); "
                              f"tool stderr:\n{collected.runs[-1].stderr[-2000:] if collected.runs else ''}"}
        selection = select_rows(collected.rows, kernels, last_call_only=profiler.range_kind == "none")
        entry["kernels"] = selection.to_json()
        entry["rows"] = [row.to_json() for row in selection.counted]
        if selection.problem is not None:
            return {**entry, "outcome": "inconclusive", "reason": selection.problem}
        metrics = derive(metric_set(profiler.normalize(selection.counted, collected, target)))
        roofline = self.roofline(variant, spec, dims, metrics, target)
        entry["metrics"] = {name: metric.to_json() for name, metric in sorted(metrics.items())}
        entry["roofline"] = roofline
        entry["top"] = rank_metrics(metrics, roofline["bound"], spec.top)
        entry["model_check"] = model_check(variant, dims, metrics)
        if collected.degraded is not None:
            return {**entry, "outcome": "degraded", "reason": collected.degraded}
        return {**entry, "outcome": "profiled", "reason": ""}

    def roofline(self, variant: Variant, spec: ProfileSpec, dims: Mapping[str, Any], metrics: Mapping[str, Any],
                 target: Mapping[str, Any]) -> dict[str, Any]:
        assert variant.reference is not None
        device = target.get("device", {})
        key = (variant.toolchain.name, str(variant.artifact.arch if variant.artifact else None))
        if target.get("copy"):
            self.ceilings.setdefault(key, target["copy"])
        copy = self.ceilings.get(key)
        ceilings = ceilings_for(device.get("arch") or (variant.artifact.arch if variant.artifact else None),
                                device.get("device"), spec.precision,
                                copy["bytes_per_s"] if copy else None, copy["how"] if copy else "")
        reference = variant.reference
        flops = float(call_with_declared_dims(reference.flops, dims)) if reference.flops else None
        nbytes = float(call_with_declared_dims(reference.bytes_moved, dims)) if reference.bytes_moved else None
        time_s, time_from = kernel_time(variant, spec, metrics)
        result = classify(metrics, ceilings, flops, nbytes, time_s).to_json()
        result["inputs"]["time_from"] = time_from
        return result


def profile_spec(item: pytest.Item) -> ProfileSpec:
    specs = []
    for node, mark in item.iter_markers_with_node(PROFILE_MARKER):
        origin = "ref.py branch_marks" if node is item else f"{node.name} pytestmark"
        specs.append(ProfileSpec.from_kwargs(mark.kwargs, mark.args, origin))
    return merge_specs(specs)


def kernel_filter(toolchain: str, functions: Mapping[str, str], demangled: Mapping[str, str]) -> KernelFilter:
    """The names the profiler may report for this artifact: `solve` on the CPU (the profiled range is one call
    of it), the device functions of the artifact's ISA on a GPU."""
    if toolchain == "cpu":
        return KernelFilter({"solve": "solve"})
    return KernelFilter.from_symbols(functions, demangled)


def kernel_time(variant: Variant, spec: ProfileSpec, metrics: Mapping[str, Any]) -> tuple[float | None, str]:
    """The profiler's kernel time; on the CPU (one host-timed call is noise) the benchmark's median at the same
    dims when this run measured it."""
    timing = variant.record.timing or {}
    if variant.toolchain.name == "cpu" and not spec.dims and timing.get("median_ms"):
        return timing["median_ms"] * 1e-3, "benchmark median of this run (test_benchmark, same dims)"
    metric = metrics.get("kernel_time_s")
    return (metric.value, f"profiler: {metric.source}") if metric is not None else (None, "unknown")


def model_check(variant: Variant, dims: Mapping[str, Any], metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """Counted DRAM bytes against ref.py's bytes_moved (at a size far beyond the cache they should agree)."""
    reference = variant.reference
    counted = metrics.get("dram_bytes")
    if reference is None or reference.bytes_moved is None or counted is None:
        return None
    model = float(call_with_declared_dims(reference.bytes_moved, dims))
    return {"dram_bytes": counted.value, "bytes_moved": model,
            "ratio": round(counted.value / model, 4) if model else None}


def work_dir(context: RunContext, variant: Variant) -> Path:
    """`<run dir>/profile/<case>__<toolchain>__<branch>/`: the profiler's raw files stay with the run."""
    folder = context.run_dir / "profile" / variant.label.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def read_target_result(request: Path) -> dict[str, Any]:
    path = Path(f"{request}.result.json")
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def record_summary(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The branch record's `observations["profile"]`: verdict, counted kernels, key metrics, bound, budget."""
    roofline = entry.get("roofline") or {}
    kernels = entry.get("kernels") or {}
    return {
        "outcome": entry["outcome"], "reason": entry.get("reason", ""), "tool": entry["tool"], "dims": entry["dims"],
        "kernels_counted": sorted({k["kernel"] for k in kernels.get("counted", [])}),
        "kernels_dropped": kernels.get("dropped", []), "selection_rule": kernels.get("rule"),
        "metrics": {k: v["value"] for k, v in (entry.get("metrics") or {}).items()},
        "bound": roofline.get("bound"), "evidence": roofline.get("evidence"), "decided_by": roofline.get("decided_by"),
        "stop": roofline.get("stop"), "budget": roofline.get("budget"),
        "utilization": roofline.get("utilization"), "top": [t["name"] for t in entry.get("top", [])],
        "model_check": entry.get("model_check"), "notes": entry.get("notes", []), "report": REPORT_NAME,
        "registers": entry.get("registers"),
    }


def conclude(entry: Mapping[str, Any]) -> None:
    if entry["outcome"] == "profiled":
        return
    label = f"{entry['case']}/{entry['toolchain']}/{entry['branch']}"
    pytest.skip(f"profile {entry['outcome']} for {label}: {entry['reason']}")


def write_report(path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
    from ..files import write_atomic

    ordered = sorted(entries, key=lambda e: (e["case"], e["toolchain"], e["branch"]))
    document = {"schema_version": REPORT_SCHEMA_VERSION, **dict(header), "profiles": ordered}
    write_atomic(path, json.dumps(document, indent=2, default=str) + "\n")

