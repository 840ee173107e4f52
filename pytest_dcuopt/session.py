"""DcuOptSession: builds branches once, runs correctness and timing through isolated workers, keeps records."""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pytest

from . import __version__
from .buffers import is_float, resolve_shapes
from .case import Branch, KernelCase, Reference, load_case, load_reference
from .correctness import compare, decode_all, dims_strategy, reproduce_command, tolerances
from .errors import CaseError, CompileError, DcuOptError, KernelCrashed, KernelTimeout, SignatureError, WorkerError
from .isolation import IsolatedKernel, WorkerSpec
from .options import Options
from .report import render_summary, terminal_lines
from .results import BranchRecord, build_state, validate_state, write_atomic
from .signature import Param, parse_solve_signature
from .timing.policy import summarize
from .toolchains import Availability, Toolchain, make_toolchain
from .toolchains.base import Artifact
from .toolchains.binding import BindSpec, Snapshot
from .toolchains.cache import BuildCache


@dataclass
class Variant:
    """One branch of one case on one toolchain, resolved lazily and at most once per process."""

    case: KernelCase
    toolchain: Toolchain
    branch: Branch
    record: BranchRecord
    reference: Reference | None = None
    params: tuple[Param, ...] = ()
    artifact: Artifact | None = None
    worker: IsolatedKernel | None = None
    setup_error: DcuOptError | None = None
    default_verified: bool = False
    failed_correctness: bool = False
    examples: int = 0
    last_failure: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return f"{self.case.name}/{self.toolchain.name}/{self.branch.name}"


class DcuOptSession:
    def __init__(self, config: pytest.Config, options: Options) -> None:
        self.config = config
        self.options = options
        self.created_at = _now()
        self.cache = BuildCache(options.cache_dir)
        self._toolchains: dict[str, Toolchain] = {}
        self._availability: dict[str, Availability] = {}
        self._variants: dict[tuple[str, str, str], Variant] = {}
        self._cases: dict[Path, KernelCase] = {}
        self.records: dict[tuple[str, str, str], BranchRecord] = {}
        self.state: dict[str, Any] | None = None
        self.isa_checks: list[dict[str, Any]] = []  # isa_check.json entries (isa/runner.py)

    # ----- toolchains -------------------------------------------------------------------
    def toolchain(self, name: str) -> Toolchain:
        if name not in self._toolchains:
            self._toolchains[name] = make_toolchain(name, self.options.arch, self.options.extra_flags)
        return self._toolchains[name]

    def availability(self, name: str) -> Availability:
        if name not in self._availability:
            self._availability[name] = self.toolchain(name).availability()
        return self._availability[name]

    # ----- variants ---------------------------------------------------------------------
    def case(self, root: Path) -> KernelCase:
        if root not in self._cases:
            self._cases[root] = load_case(root)
        return self._cases[root]

    def variant(self, root: Path, toolchain_name: str, branch_id: str, source: Path) -> Variant:
        case = self.case(root)
        key = (case.name, toolchain_name, branch_id)
        if key not in self._variants:
            branch = Branch(branch_id, source)
            record = self.records.setdefault(key, BranchRecord(case.name, toolchain_name, branch_id,
                                                               _relative(source, self.config.rootpath)))
            self._variants[key] = Variant(case.for_toolchain(toolchain_name), self.toolchain(toolchain_name), branch,
                                          record)
        return self._variants[key]

    def prepare(self, variant: Variant) -> None:
        """Skip when the toolchain cannot run here; otherwise make sure the branch is built and loaded."""
        availability = self.availability(variant.toolchain.name)
        if not availability.can_run:
            reason = f"{variant.toolchain.name} toolchain cannot run kernels here: {availability.reason}"
            variant.record.skipped = reason
            pytest.skip(reason)
        self._resolve(variant)
        if variant.setup_error is not None:
            pytest.fail(str(variant.setup_error), pytrace=False)

    def _resolve(self, variant: Variant) -> None:
        if variant.worker is not None or variant.setup_error is not None:
            return
        try:
            variant.reference = load_reference(variant.case.ref_path, variant.case.dims)
            text = variant.branch.source.read_text(errors="replace")
            if variant.toolchain.c_abi:
                variant.params = parse_solve_signature(text, str(variant.branch.source))
                self._check_scalars(variant)
            variant.artifact = variant.toolchain.build(variant.branch.source, self.cache)
            variant.record.build = variant.artifact.to_json()
            log = self.options.log_dir / f"{variant.label.replace('/', '__')}.log"
            spec = WorkerSpec(variant.label, variant.toolchain.name, self.options.arch, self.options.extra_flags,
                              variant.artifact, variant.params, log)
            variant.worker = IsolatedKernel(spec, self.options.timeout_s)
        except CompileError as exc:
            variant.setup_error = exc
            variant.record.build = {"toolchain": variant.toolchain.name, **exc.result.to_json()}
            variant.record.error = {"kind": "compile error", "message": str(exc)}
        except (CaseError, SignatureError) as exc:
            variant.setup_error = exc
            variant.record.error = {"kind": "case error", "message": str(exc)}

    def _check_scalars(self, variant: Variant) -> None:
        assert variant.reference is not None
        dims, declared = variant.case.dims, variant.reference.inputs
        for param in variant.params:
            if not param.pointer and param.name not in dims and param.name not in declared:
                raise CaseError(f"{variant.branch.source}: scalar parameter {param.name!r} has no value: add it to "
                                f"dims.json (dims: {sorted(dims)}).")

    # ----- correctness ------------------------------------------------------------------
    def run_correctness(self, variant: Variant, nodeid: str) -> None:
        self.prepare(variant)
        if self.options.replay_dims is not None:
            failure = self._replay(variant, nodeid)
        else:
            failure = self._first_failure(variant, nodeid)
        variant.record.examples = variant.examples
        if failure is not None:
            variant.failed_correctness = True
            variant.record.correct = False
            variant.record.failure = variant.last_failure or {
                "dims": dict(variant.case.dims), "seed": 0, "message": failure, "reproduce": f"pytest '{nodeid}'"}
            pytest.fail(failure, pytrace=False)
        variant.record.correct = True

    def _replay(self, variant: Variant, nodeid: str) -> str | None:
        dims = {**variant.case.dims, **(self.options.replay_dims or {})}
        try:
            self._checked_call(variant, dims, self.options.replay_seed or 0, nodeid)
        except (AssertionError, DcuOptError) as exc:
            return _with_notes(exc)
        return None

    def _first_failure(self, variant: Variant, nodeid: str) -> str | None:
        """The default dims first; then Hypothesis, which also shrinks a wrong result seen at the default dims."""
        default: tuple[str, dict[str, Any] | None] | None = None
        try:
            self._checked_call(variant, variant.case.dims, 0, nodeid)
            variant.default_verified = True
        except DcuOptError as exc:  # a crash or hang: searching further would only repeat it
            return _with_notes(exc)
        except AssertionError as exc:
            default = (_with_notes(exc), variant.last_failure)
        try:
            self._hypothesis(variant, nodeid)
        except (AssertionError, DcuOptError) as exc:
            return _with_notes(exc)
        if default is not None:  # only the default dims are wrong
            variant.last_failure = default[1]
            return default[0]
        return None

    def _hypothesis(self, variant: Variant, nodeid: str) -> None:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st

        assert variant.reference is not None
        dims_st = dims_strategy(variant.reference.dim_ranges, variant.case.dims)
        profile = settings.get_profile(self.options.hypothesis_profile)
        phases = [p for p in profile.phases if p is not Phase.explain]  # its line lists point into the harness
        chosen = settings(profile, max_examples=self.options.examples or profile.max_examples, deadline=None,
                          suppress_health_check=list(HealthCheck), phases=phases)

        @chosen
        @given(dims=dims_st, seed=st.integers(0, 2**31 - 1))
        def correct_for_all_drawn_dims(dims: dict[str, Any], seed: int) -> None:
            self._checked_call(variant, dims, seed, nodeid)

        correct_for_all_drawn_dims()

    def _checked_call(self, variant: Variant, dims: Mapping[str, Any], seed: int, nodeid: str,
                      reproduce: str | None = None) -> None:
        assert variant.worker is not None and variant.reference is not None
        variant.examples += 1
        shapes = self._shapes(variant, dims)
        spec = BindSpec(dict(dims), seed, shapes, variant.reference.inputs)
        reproduce = reproduce or reproduce_command(nodeid, dims, seed)
        try:
            snapshot: Snapshot = variant.worker.request("run", spec=spec)
        except (KernelCrashed, KernelTimeout, WorkerError) as exc:
            message = f"{exc}\ndims={dict(dims)} seed={seed}"
            variant.last_failure = {"dims": dict(dims), "seed": seed, "message": message, "reproduce": reproduce}
            kind = {KernelCrashed: "crashed", KernelTimeout: "timed out", WorkerError: "raised"}[type(exc)]
            variant.record.error = {"kind": f"kernel {kind}", "message": str(exc)}
            raise
        expected = self._reference_outputs(variant, snapshot, dims, shapes)
        mismatches = []
        for name, kernel_out in snapshot.outputs.items():
            dtype = snapshot.dtypes[name]
            atol, rtol = tolerances(dtype, variant.reference.atol, variant.reference.rtol)
            shape = shapes.get(name) or kernel_out.shape
            found = compare(name, decode_all({name: kernel_out}, snapshot.dtypes)[name], expected[name], dtype,
                            shape, atol, rtol)
            if found is not None:
                mismatches.append(found)
        if mismatches or snapshot.problems:
            lines = [f"{variant.label} is wrong for dims={json.dumps(dict(dims))} seed={seed}:"]
            lines += [f"  kernel {p}" for p in snapshot.problems]
            lines += [m.describe() for m in mismatches]
            lines.append(f"reproduce: {reproduce}")
            message = "\n".join(lines)
            variant.last_failure = {"dims": dict(dims), "seed": seed, "message": message, "reproduce": reproduce,
                                    "mismatches": [m.to_json() for m in mismatches], "problems": snapshot.problems}
            raise AssertionError(message)

    def _shapes(self, variant: Variant, dims: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        if not variant.params:
            return {}
        assert variant.reference is not None
        return resolve_shapes(variant.params, variant.reference.shapes, dims, str(variant.branch.source))

    def _reference_outputs(self, variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                           shapes: Mapping[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
        import torch

        assert variant.reference is not None
        declared = variant.reference.shapes is not None
        values = decode_all({**snapshot.inputs, **snapshot.outputs}, snapshot.dtypes)
        kwargs: dict[str, Any] = {}
        names = [p.name for p in variant.params] or list(snapshot.inputs) + list(snapshot.outputs)
        for name in dict.fromkeys(names):
            array = values[name]
            if array.ndim == 0:
                kwargs[name] = array.item()
                continue
            if name in snapshot.outputs and name not in snapshot.inputs:
                array = np.zeros_like(array)
            shape = shapes.get(name, array.shape) if declared or not shapes else (array.size,)
            kwargs[name] = torch.from_numpy(np.ascontiguousarray(array).reshape(shape))
        try:
            variant.reference.function(**kwargs)
        except Exception as exc:
            raise CaseError(f"{variant.reference.path}: reference(**kwargs) raised {type(exc).__name__}: {exc} "
                            f"(kwargs: {sorted(kwargs)}, dims {dict(dims)}). It must accept the kernel's parameter "
                            "names and write outputs in place.") from exc
        return {name: kwargs[name].detach().cpu().numpy().astype(np.float64 if is_float(snapshot.dtypes[name])
                                                                  else np.int64).ravel()
                for name in snapshot.outputs}

    # ----- benchmark --------------------------------------------------------------------
    def run_benchmark(self, variant: Variant, benchmark: Any, clock: Any, nodeid: str) -> None:
        self.prepare(variant)
        if variant.failed_correctness:
            reason = f"not benchmarked: {variant.label} failed its correctness test"
            variant.record.skipped = reason
            pytest.skip(reason)
        if not variant.default_verified:
            self._checked_call(variant, variant.case.dims, 0, nodeid)
            variant.default_verified = True
        assert variant.worker is not None and variant.reference is not None
        dims = variant.case.dims
        spec = BindSpec(dict(dims), 0, self._shapes(variant, dims), variant.reference.inputs)
        policy = self.options.policy
        budget = self.options.timeout_s + policy.max_time_s + 10 * policy.warmup_s
        started = time.perf_counter()
        result = variant.worker.request("time", timeout_s=budget, spec=spec, policy=policy)
        samples = result["samples"]
        clock.load(samples.seconds)
        benchmark.pedantic(clock.advance, rounds=len(samples.seconds), iterations=1, warmup_rounds=0)
        summary = summarize(samples.seconds)
        variant.record.timing = {**summary.to_json(), "mode": samples.mode, "timer": samples.timer,
                                 "stop_reason": samples.stop_reason, "warmup_calls": samples.warmup_calls,
                                 "dims": dict(dims), "concurrent_workers": _concurrent_workers(), **samples.extra}
        variant.record.throughput = {k: round(v, 3) for k, v in variant.reference.throughput(dims, summary.median_ms).items()}
        variant.record.device = result.get("device", {})
        benchmark.extra_info.update({"dcuopt_" + k: v for k, v in variant.record.timing.items() if k != "dims"})
        benchmark.extra_info.update(variant.record.throughput)
        # What the harness itself cost around the measurement (IPC, bookkeeping, pytest-benchmark replay).
        overhead = time.perf_counter() - started - result.get("measure_wall_s", 0.0)
        variant.record.timing["harness_overhead_s"] = round(overhead, 4)
        variant.record.timing["measure_wall_s"] = round(result.get("measure_wall_s", 0.0), 4)
        if self.options.interleave_rounds:
            self._interleave_with_baseline(variant, spec, benchmark)

    def _interleave_with_baseline(self, variant: Variant, spec: BindSpec, benchmark: Any) -> None:
        """A/B against the baseline in alternating short rounds, so drift between the two measurements cancels."""
        baseline = self._variants.get((variant.case.name, variant.toolchain.name, "baseline"))
        if variant.branch.is_baseline or baseline is None or baseline.worker is None or not baseline.default_verified:
            return  # under xdist the baseline may live in another process: the separate medians are all we have
        rounds = self.options.interleave_rounds
        policy = self.options.policy
        short = replace(policy, max_time_s=policy.max_time_s / rounds, min_samples=3, min_time_s=0.0,
                        warmup_s=policy.warmup_s / rounds)
        base_spec = BindSpec(dict(baseline.case.dims), 0, self._shapes(baseline, baseline.case.dims),
                             baseline.reference.inputs if baseline.reference else {})
        budget = self.options.timeout_s + short.max_time_s + 10 * short.warmup_s
        theirs: list[float] = []
        mine: list[float] = []
        for _ in range(rounds):
            theirs += baseline.worker.request("time", timeout_s=budget, spec=base_spec, policy=short)["samples"].seconds
            mine += variant.worker.request("time", timeout_s=budget, spec=spec, policy=short)["samples"].seconds
        a, b = summarize(theirs), summarize(mine)
        interleaved = {"rounds": rounds, "baseline_median_ms": a.median_ms, "baseline_ci95_ms": list(a.ci95_ms),
                       "median_ms": b.median_ms, "ci95_ms": list(b.ci95_ms), "speedup": a.median_ms / b.median_ms,
                       "samples": [len(theirs), len(mine)]}
        assert variant.record.timing is not None
        variant.record.timing["interleaved"] = {k: (round(v, 6) if isinstance(v, float) else v)
                                                for k, v in interleaved.items()}
        benchmark.extra_info["speedup_vs_baseline"] = round(interleaved["speedup"], 4)

    # ----- ISA --------------------------------------------------------------------------
    def run_isa(self, variant: Variant, specs: list[Any], nodeid: str) -> None:
        """Build the branch (no device needed: no can_run skip) and judge its ISA against its isa marks."""
        from .isa.runner import run_isa_test

        run_isa_test(self, variant, specs, nodeid)

    # ----- end of session ---------------------------------------------------------------
    def close_workers(self) -> None:
        for variant in self._variants.values():
            if variant.worker is not None:
                variant.worker.close()

    def merge_records(self, payload: str) -> None:
        for data in json.loads(payload):
            record = BranchRecord.from_json(data)
            if record.key in self.records:
                self.records[record.key].merge(record)
            else:
                self.records[record.key] = record

    def export_records(self) -> str:
        return json.dumps([r.to_json() for r in self.records.values()])

    def finish(self, exit_status: int | None) -> dict[str, Any]:
        header = {
            "tool": {"name": "pytest_dcuopt", "version": __version__},
            "created_at": self.created_at, "finished_at": _now(), "run_dir": str(self.options.run_dir),
            "exit_status": exit_status, "machine": machine_info(), "options": self.options.to_json(),
            "toolchains": {name: a.to_json() for name, a in sorted(self._availability.items())},
        }
        state = build_state(self.records.values(), header)
        validate_state(state)
        run_dir = self.options.run_dir
        write_atomic(run_dir / "state.json", json.dumps(state, indent=2, default=str) + "\n")
        write_atomic(run_dir / "summary.md", render_summary(state))
        if self.isa_checks:
            from .isa.runner import REPORT_NAME, write_report

            write_report(run_dir / REPORT_NAME, self.isa_checks, {k: header[k] for k in ("tool", "created_at", "run_dir")})
        _point_latest(run_dir)
        self.state = state
        return state

    def terminal_lines(self) -> list[str]:
        return terminal_lines(self.state) if self.state else []


def _concurrent_workers() -> int:
    """How many xdist workers shared the machine while this was timed (1 = alone)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))


def _with_notes(exc: BaseException) -> str:
    """The error text plus the notes Hypothesis attaches (the falsifying example)."""
    notes = [n for n in getattr(exc, "__notes__", []) if n.strip()]
    return "\n".join([str(exc), *notes])


def machine_info() -> dict[str, Any]:
    from .toolchains.host import _cpu_model

    return {"host": socket.gethostname(), "cpu": _cpu_model(), "cores": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform()}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _point_latest(run_dir: Path) -> None:
    """Keep `<parent>/latest` pointing at the newest run (best effort; a symlink)."""
    latest = run_dir.parent / "latest"
    try:
        if latest.is_symlink() or latest.exists():
            latest.unlink()
        latest.symlink_to(run_dir.name)
    except OSError:
        pass
