"""DcuOptSession: the run's orchestrator. It owns the caches (toolchains, cases, variants, records)
and calls the stages in order: build (variant.resolve) -> check (check.verify) -> time (bench.run)
-> observe (observers) -> state and report (report.*). Every stage is a public function; the
session only wires them to pytest and to the plugin's hooks (hookspec.py)."""
from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from . import __version__
from .bench.clock import SampleClock
from .bench.run import (
    BenchPoint,
    benchmarks_disabled,
    bind_spec,
    check_every_call,
    default_point,
    interleave_with_baseline,
    measure,
    run_benchmark,
    run_disabled,
    size_point,
    timing_at,
)
from .case.model import Branch, KernelCase, load_case
from .case.sizes import ALL, BenchSize
from .check import reference_device
from .check.compare import reproduce_command
from .check.default_dims import verify_default
from .check.verify import CheckSettings, check_before_timing, checked_call, run_correctness
from .context import require_built
from .errors import CaseError, DcuOptError, ReportError, TimedCallsWrong
from .files import point_latest, write_atomic
from .gate import REPORT_NAME as GATE_REPORT
from .gate import build_gate
from .gate import entry as gate_entry
from .gate.ci import append_step_summary
from .observe import Observer
from .options import DEFAULT_RUN_ROOT, DIMS_OPTION, SIZES_OPTION, Options, default_home
from .report.machine import machine_info, now
from .report.plausibility import flag_records
from .report.plots import write_run_plots
from .report.records import BranchRecord
from .report.state import build_state, validate_state
from .report.summary import render_summary, terminal_lines
from .run.containment import protect_harness
from .run.devices import cpu_share, lock_dir, xdist_worker_id
from .run.integrity import DIGESTS
from .run.isolation import close_all
from .run.spares import SpareWorkers
from .timing.calibration import XDIST_RUN_ENV, CalibrationStore, shared_dir_for_run
from .toolchains import Availability, Toolchain, make_toolchain, toolchain_class
from .toolchains.cache import BuildCache
from .toolchains.exchange import set_run_seed
from .variant import BackgroundBuilds, BuildSettings, Variant, resolve


class DcuOptSession:
    def __init__(self, config: pytest.Config, options: Options, observers: list[Observer]) -> None:
        self.config = config
        self.options = options
        set_run_seed(options.run_seed)  # every input of every checked and timed call of the run is drawn from it
        check_every_call(options.check_every_call)
        self.observers = {observer.name: observer for observer in observers}
        self.created_at = now()
        self._cache: BuildCache | None = None  # created on first use: a run without kernel cases writes nothing
        self._toolchains: dict[str, Toolchain] = {}
        self._availability: dict[str, Availability] = {}
        self._worker_toolchains: dict[str, dict[str, Any]] = {}  # xdist: what the workers' probes found
        self._variants: dict[tuple[str, str, str], Variant] = {}
        self._selected: set[tuple[Path, str, str]] = set()  # (case folder, toolchain, branch) of the selected tests
        self._baselines_tried: set[tuple[str, str, str]] = set()  # baselines checked here for another worker's A/B
        self._cases: dict[Path, KernelCase] = {}
        self.records: dict[tuple[str, str, str], BranchRecord] = {}
        self.reports: dict[str, list[dict[str, Any]]] = {}  # observer name -> its report entries
        self.collected_cases = 0
        self.deselected = 0  # tests deselected in this process (-k, -m, --deselect, --lf, another plugin)
        self.latest_note: str | None = None  # why this run did not move `latest`
        self.state: dict[str, Any] | None = None
        self.finish_error: str | None = None  # what finish() could not write
        # None without --dcuopt-compare; a bad baseline (or a partial one) is a usage error here
        self.gate = build_gate(options, run_selection(config))
        # Device calibrations: measured by the first worker on a device (xdist: of the whole run, on this host).
        self.calibrations = CalibrationStore(shared_dir_for_run(lock_dir()))
        self.xdist_run: str | None = None  # the controller: xdist's run id, for removing the shared calibrations
        self.spares = SpareWorkers(options.log_dir, options.spare_workers)  # the next branches' workers, warm
        self.builds: BackgroundBuilds | None = None  # the selected branches' builds, run beside the tests
        reference_device.set_mode(options.reference_device)  # the reference functions are module-level
        self.harness_containment = protect_harness()  # no worker may ptrace this process or open its memory
        DIGESTS.reset()
        # Earlier runs in the project's runs folder only: another folder may hold runs that other sessions rewrite.
        DIGESTS.watch_states(default_home(config) / DEFAULT_RUN_ROOT, options.run_dir)

    # ----- toolchains and variants ------------------------------------------------------
    @property
    def run_dir(self) -> Path:
        return self.options.run_dir

    @property
    def cache(self) -> BuildCache:
        if self._cache is None:
            self._cache = BuildCache(self.options.cache_dir)
        return self._cache

    def toolchain(self, name: str) -> Toolchain:
        if name not in self._toolchains:
            self._toolchains[name] = make_toolchain(name, self.options.arch, self.options.extra_flags)
        return self._toolchains[name]

    def availability(self, name: str) -> Availability:
        if name not in self._availability:
            self._availability[name] = self.toolchain(name).availability()
        return self._availability[name]

    def case(self, root: Path) -> KernelCase:
        if root not in self._cases:
            DIGESTS.watch_case(root)  # before any of its kernels runs (run/integrity.py)
            self._cases[root] = load_case(root, self.config.rootpath)
        return self._cases[root]

    def variant(self, root: Path, toolchain_name: str, branch_id: str, source: Path) -> Variant:
        case = self.case(root)
        key = (case.name, toolchain_name, branch_id)
        if key not in self._variants:
            record = self.records.setdefault(key, BranchRecord(case.name, toolchain_name, branch_id,
                                                               _relative(source, self.config.rootpath)))
            self._variants[key] = Variant(case.for_toolchain(toolchain_name), self.toolchain(toolchain_name),
                                          Branch(branch_id, source), record)
        return self._variants[key]

    def build_settings(self) -> BuildSettings:
        options = self.options
        return BuildSettings(self.cache, options.arch, options.extra_flags, options.log_dir, options.timeout_s,
                             devices=options.devices, host_lock=options.host_lock, calibrations=self.calibrations,
                             spares=self.spares, builds=self.builds)

    def start_builds(self, items: Sequence[pytest.Item]) -> BackgroundBuilds | None:
        """Start building every branch the selected tests will build, `--dcuopt-build-jobs` at a time in the
        tests' order, beside the tests (None when there is nothing to build or the option is 0). A test waits for
        its own branch only; errors stay with the branches (resolve)."""
        if self.options.build_jobs <= 0:
            return None
        variants = list({id(v): v for v in (self._variant_or_none(item) for item in items) if v is not None}.values())
        if not variants:
            return None
        share = cpu_share()
        if share is not None:  # an xdist worker: its part of the host's build jobs, starting at its own slice
            self.builds = BackgroundBuilds(share.rotated(variants), self.cache,
                                           share.build_jobs(self.options.build_jobs))
        else:
            self.builds = BackgroundBuilds(variants, self.cache, self.options.build_jobs)
        return self.builds

    def quiet(self) -> None:
        """Before a measurement (a timing, a profile, an ablation): wait until no background build of this process
        runs, so that no compiler shares the cores or the memory bandwidth with what is measured."""
        if self.builds is not None:
            self.builds.wait()

    def _variant_or_none(self, item: pytest.Item) -> Variant | None:
        try:
            return self._variant_for(item)
        except (DcuOptError, OSError):  # a case that cannot load: its own tests report it, nothing is pre-built
            return None

    def _variant_for(self, item: pytest.Item) -> Variant | None:
        """The variant a selected generated test builds, when its toolchain can do what that test needs here."""
        from .collect import branch_ids

        found = _branch_of(item)
        if found is None:
            return None
        root, toolchain, branch = found
        name = str(getattr(item, "originalname", item.name))
        timed = name.startswith("test_benchmark_")
        if timed and self.config.getoption("benchmark_skip", False):
            return None  # pytest-benchmark skips it
        if name.startswith("test_correctness_") and self.config.getoption("benchmark_only", False):
            return None
        availability = self.availability(toolchain)
        runs = timed or name.startswith("test_correctness_")
        if not (availability.can_run if runs else availability.can_build):
            return None  # the test skips without building (or cannot build at all)
        sources = dict(branch_ids(self.case(root), toolchain_class(toolchain).extensions))
        return self.variant(root, toolchain, branch, sources[branch]) if branch in sources else None

    def check_size_selection(self) -> None:
        """--dcuopt-sizes may only name sizes that a collected case declares for a selected toolchain: anything else
        is a usage error naming the sizes there are (checked once collection has finished)."""
        from .collect import declared_sizes

        picked = self.options.bench_sizes
        if ALL in picked or not self.collected_cases:
            return
        known = declared_sizes(self.config)
        unknown = [name for name in picked if name not in known]
        if not unknown:
            return
        if not known:
            raise pytest.UsageError(f"{SIZES_OPTION}={','.join(picked)}: no collected case declares benchmark sizes "
                                    "(ref.py `bench_sizes`), so there is nothing to pick; leave the option out to time "
                                    "every case at its default dims.")
        listed = "; ".join(f"{name} ({', '.join(groups)})" for name, groups in known.items())
        raise pytest.UsageError(f"{SIZES_OPTION}: unknown benchmark size(s) {', '.join(unknown)}; the collected cases "
                                f"declare: {listed}. Give some of these, or `all`.")

    def check_replay_dims(self) -> None:
        """--dcuopt-dims may only name dims every collected case has: a name a case lacks would be replayed as if
        it meant something there (checked once collection has finished)."""
        from .collect import declared_dims

        wanted = self.options.replay_dims
        if not wanted:
            return
        for root, names in declared_dims(self.config).items():
            unknown = sorted(set(wanted) - names)
            if unknown:
                raise pytest.UsageError(
                    f"{DIMS_OPTION}={json.dumps(wanted)}: the case {root} has no dim(s) {', '.join(unknown)} "
                    f"(its dims: {', '.join(sorted(names)) or 'none'}), so the replay would not be the example you "
                    "mean. Name only dims of dims.json, or select only the case these dims belong to (the failure's "
                    "`reproduce:` command names its test).")

    def resolve(self, variant: Variant) -> None:
        """Build and load the branch (once); observers call this for a build without a device."""
        if variant.resolved:
            return
        resolve(variant, self.build_settings())
        self.config.hook.pytest_dcuopt_branch_built(variant=variant, config=self.config)

    def prepare(self, variant: Variant) -> None:
        """Skip when the toolchain cannot run here (saying so in the record); otherwise build and load the branch."""
        require_built(self, variant, runs_kernel=True, record_skip=True)

    # ----- stages -----------------------------------------------------------------------
    def check_settings(self) -> CheckSettings:
        options = self.options
        return CheckSettings(options.examples, options.hypothesis_profile, options.replay_dims, options.replay_seed,
                             options.replay_input_set)

    def run_correctness(self, variant: Variant, nodeid: str) -> None:
        self.prepare(variant)
        failure = run_correctness(variant, self.check_settings(), nodeid)
        self.config.hook.pytest_dcuopt_branch_checked(variant=variant, config=self.config, failure=failure)
        if failure is not None:
            pytest.fail(self._with_regression(variant, "correctness", failure), pytrace=False)

    def check_once(self, variant: Variant, dims: dict[str, Any], seed: int, nodeid: str) -> None:
        """One checked call (the `dcuopt_case` fixture); raises AssertionError with the mismatch."""
        self.prepare(variant)
        checked_call(variant, dims, seed, nodeid, reproduce=reproduce_command(nodeid))

    def run_benchmark(self, variant: Variant, benchmark: Any, clock: SampleClock, nodeid: str,
                      size: BenchSize | None = None) -> None:
        """`test_benchmark_<toolchain>[<branch>]`, or `[<branch>-<size>]` for one of the case's benchmark sizes."""
        if size is not None:  # listed at its size whatever happens below (a skip, a failure before timing)
            order = next((i for i, declared in enumerate(variant.case.bench_sizes) if declared.name == size.name), 0)
            variant.record.size_entry(size.name, variant.case.dims_at(size), order)
        self.prepare(variant)
        if variant.failed_correctness:
            reason = f"not benchmarked: {variant.label} failed its correctness test"
            variant.record.skipped = reason
            pytest.skip(reason)
        point = self._point(variant, size)
        if benchmarks_disabled(self.config):  # pytest-benchmark's semantics: run once, no statistics
            # Through the fixture, which calls it once when disabled: an unused fixture warns at teardown.
            wrong = benchmark(run_disabled, variant, nodeid, point)
            if wrong is not None:
                pytest.fail(self._with_regression(variant, "correctness", wrong), pytrace=False)
            return
        checking, pre_check_s = time.perf_counter(), None
        if not variant.boundary_checked:  # no verdict here yet (deselected, or another xdist worker)
            wrong = check_before_timing(variant, nodeid)
            variant.boundary_checked = True
            pre_check_s = time.perf_counter() - checking
            if wrong is not None:
                variant.record.skipped = (f"not benchmarked: {variant.label} failed the boundary dims checked before "
                                          "timing")
                pytest.fail(self._with_regression(variant, "correctness", wrong), pytrace=False)
        options = self.options
        samples = run_benchmark(variant, benchmark, clock, options.policy, options.timeout_s, nodeid, point)
        timing = timing_at(variant, point)
        if pre_check_s is not None and timing is not None:  # outside harness_overhead_s: a correctness test's work
            timing["pre_timing_check_s"] = round(pre_check_s, 4)
        baseline = self._baseline_for(variant, nodeid)
        interleaved = interleave_with_baseline(variant, baseline, options.interleave_rounds, options.policy,
                                               options.timeout_s, point)
        if interleaved is not None:
            benchmark.extra_info["speedup_vs_baseline"] = round(interleaved["speedup"], 4)
        self.config.hook.pytest_dcuopt_branch_timed(variant=variant, config=self.config, samples=samples)
        if self.gate is not None:
            self.gate_timing(variant, point)

    def _baseline_for(self, variant: Variant, nodeid: str) -> Variant | None:
        """The case's baseline for the interleaved A/B: the one this process ran, or (an xdist worker, where the
        baseline's tests ran on another worker) one built here from the build cache and checked once at the
        default dims, so the pair is measured under the lock as in a serial run. Only for a baseline this run
        selected; None when there is none, or it does not build, run or pass here (its own tests say why)."""
        key = (variant.case.name, variant.toolchain.name, "baseline")
        baseline = self._variants.get(key)
        verified_here = baseline is not None and baseline.default_verified
        if verified_here or variant.branch.is_baseline or xdist_worker_id() is None:
            return baseline
        root, toolchain = variant.case.root, variant.toolchain.name
        if (self.options.interleave_rounds <= 0 or (root, toolchain, "baseline") not in self._selected
                or key in self._baselines_tried):
            return None
        self._baselines_tried.add(key)  # checked once per process: a baseline wrong here is not tried again
        if baseline is None:  # not pre-built here (--dcuopt-build-jobs 0)
            from .collect import branch_ids

            sources = dict(branch_ids(self.case(root), toolchain_class(toolchain).extensions))
            baseline = self.variant(root, toolchain, "baseline", sources["baseline"])
        self.resolve(baseline)
        if baseline.setup_error is not None or baseline.worker is None:
            return None
        try:
            verify_default(baseline, nodeid)
        except (AssertionError, DcuOptError):
            return None
        return baseline

    def note_selected(self, items: Sequence[pytest.Item]) -> None:
        """Remember which branches this run's tests cover (an xdist worker collects every test of the run)."""
        self._selected.update(found for found in map(_branch_of, items) if found is not None)

    def _point(self, variant: Variant, size: BenchSize | None) -> BenchPoint:
        """Where the benchmark times: the default dims, or the size's dims (a size whose dims cannot be timed fails
        its test, and its entry in the record says why)."""
        if size is None:
            return default_point(variant)
        try:
            return size_point(variant, size)
        except CaseError as exc:
            message = str(exc)
        variant.record.sizes[size.name]["error"] = {"kind": "case error", "message": message}
        pytest.fail(message, pytrace=False)

    def gate_timing(self, variant: Variant, point: BenchPoint | None = None) -> None:
        """--dcuopt-compare: the branch's timing verdict against the baseline (at a benchmark size: against the
        baseline run's figures at that size); SLOW fails the benchmark test."""
        assert self.gate is not None
        point = point or default_point(variant)
        record = variant.record if point.size is None else variant.record.at_size(point.size)
        verdict = self.gate.judge_timing(record, variant.toolchain.identity(), lambda: self._remeasure(variant, point))
        self.add_report(GATE_REPORT, gate_entry(record, verdict))
        if verdict.fails:
            label = variant.label if point.size is None else f"{variant.label}[{point.size}]"
            pytest.fail(self.gate.slow_message(label, verdict), pytrace=False)

    def _remeasure(self, variant: Variant, point: BenchPoint) -> list[float]:
        try:
            spec = bind_spec(variant, point)
            samples = measure(variant, self.options.policy, self.options.timeout_s, spec)["samples"]
            return [s * 1e3 for s in samples.seconds]
        except TimedCallsWrong as exc:
            wrong = str(exc)
        pytest.fail(wrong, pytrace=False)

    def _with_regression(self, variant: Variant, kind: str, failure: str) -> str:
        """The failure message, headed by the regression it is when the baseline (--dcuopt-compare) passed."""
        note = self.gate.regression_note(variant.record, kind) if self.gate is not None else None
        return f"{note}\n\n{failure}" if note else failure

    def run_observer(self, name: str, variant: Variant, item: pytest.Item) -> None:
        if getattr(self.observers[name], "measures", True):  # a profile or an ablation: nothing compiles beside it
            self.quiet()
        try:
            self.observers[name].observe(self, variant, item)
            return
        except pytest.fail.Exception as exc:
            if name != "isa" or self.gate is None or not self.gate.regression_note(variant.record, "isa"):
                raise
            failure = str(exc.msg)
        pytest.fail(self._with_regression(variant, "isa", failure), pytrace=False)  # outside `except`: no chained trace

    def add_report(self, observer: str, entry: dict[str, Any]) -> None:
        self.reports.setdefault(observer, []).append(entry)

    def release_workers(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """End the workers of `item`'s case and toolchain when the next test belongs elsewhere: their device and host
        memory (buffers at the benchmark sizes, a GPU context each) is not held while other cases run. A later test
        of the same case starts them again (taking the spare worker where it fits)."""
        group = self._group_of(item)
        if group is None or (nextitem is not None and self._group_of(nextitem) == group):
            return
        close_all([variant.worker for key, variant in self._variants.items()
                   if key[:2] == group and variant.worker is not None])

    def _group_of(self, item: pytest.Item) -> tuple[str, str] | None:
        """(case name, toolchain) of a kernel case's generated test; None for any other test."""
        marker = item.get_closest_marker("dcuopt")
        if marker is None or "toolchain" not in marker.kwargs:
            return None
        try:
            return self.case(item.path.parent).name, str(marker.kwargs["toolchain"])
        except (DcuOptError, OSError):
            return None

    # ----- end of session ---------------------------------------------------------------
    def forget_shared_calibrations(self) -> None:
        """The controller, at the end of an xdist run: remove the calibrations its local workers shared."""
        if self.xdist_run is not None:
            folder = shared_dir_for_run(lock_dir(), {XDIST_RUN_ENV: self.xdist_run})
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def close_workers(self) -> None:
        if self.builds is not None:  # queued builds are dropped, running compilers waited for
            self.builds.close()
        close_all([variant.worker for variant in self._variants.values() if variant.worker is not None])
        self.spares.close()

    def toolchains_json(self) -> dict[str, dict[str, Any]]:
        """Every toolchain probed in this run: here, or (under xdist) in a worker."""
        probed_here = {name: {**a.to_json(), **self._identity(name, a)} for name, a in self._availability.items()}
        return dict(sorted({**self._worker_toolchains, **probed_here}.items()))

    def _identity(self, name: str, availability: Availability) -> dict[str, str]:
        """The compiler identity (what the gate compares with a baseline's), where the toolchain can build."""
        if not availability.can_build:
            return {}
        try:
            return {"identity": self.toolchain(name).identity()}
        except (DcuOptError, OSError) as exc:
            return {"identity_error": f"{type(exc).__name__}: {exc}"}

    def export(self) -> str:
        """What an xdist worker hands to the controller: records, observer reports, toolchain probes."""
        return json.dumps({"records": [r.to_json() for r in self.records.values()], "reports": self.reports,
                           "toolchains": self.toolchains_json()}, default=str)

    def merge(self, payload: str) -> None:
        data = json.loads(payload)
        for entry in data["records"]:
            record = BranchRecord.from_json(entry)
            if record.key in self.records:
                self.records[record.key].merge(record)
            else:
                self.records[record.key] = record
        for name, entries in data["reports"].items():
            self.reports.setdefault(name, []).extend(entries)
        for name, probed in data["toolchains"].items():
            self._worker_toolchains.setdefault(name, probed)

    def finish(self, exit_status: int | None, interrupted: str | None = None,
               partial: Sequence[str] = ()) -> dict[str, Any]:
        """Write state.json, summary.md and the observers' reports. Each file is written on its own: one
        that fails (a hook raising, a schema violation, a full disk) does not cost the others, and the
        errors are raised together at the end as a `ReportError`."""
        errors: list[str] = []
        for record in self.records.values():
            _collect(errors, "pytest_dcuopt_update_branch_record", self.config.hook.pytest_dcuopt_update_branch_record,
                     record=record, config=self.config)
        if any(record.timing or record.sizes for record in self.records.values()):
            _collect(errors, "the plausibility check", flag_records, self.records.values(),
                     self.options.allow_implausible, self.options.max_speedup)
        header = {
            "tool": {"name": "pytest_dcuopt", "version": __version__},
            "created_at": self.created_at, "finished_at": now(), "run_dir": str(self.options.run_dir),
            "exit_status": exit_status, "interrupted": interrupted, "machine": machine_info(),
            "options": self.options.to_json(), "toolchains": self.toolchains_json(),
            "containment": {"harness": self.harness_containment}, "integrity": self._integrity(errors),
            "scope": {"complete": not partial, "partial_because": list(partial),
                      "selection": run_selection(self.config)},
        }
        state = build_state(self.records.values(), header)
        if self.gate is not None:
            _collect(errors, "the regression gate", self.gate.attach, state, self.reports.get(GATE_REPORT, []))
        try:
            validate_state(state)
        except Exception as exc:  # still write it: a schema slip must not lose the run's results
            state["validation_error"] = f"{type(exc).__name__}: {str(exc)[:2000]}"
            errors.append(f"state.json does not match its schema ({str(exc).splitlines()[0]}); written anyway "
                          "with `validation_error` set")
        run_dir = self.options.run_dir
        self.state = state
        _collect(errors, "state.json", write_atomic, run_dir / "state.json",
                 json.dumps(state, indent=2, default=str) + "\n")
        # The plots (PNG, beside summary.md) are drawn first so that summary.md links the files just written.
        _collect(errors, "summary.md", lambda: write_atomic(
            run_dir / "summary.md", render_summary(state) + "\n".join(write_run_plots(state, run_dir))))
        _collect(errors, "$GITHUB_STEP_SUMMARY", append_step_summary, state)
        for name, entries in sorted(self.reports.items()):
            observer = self.observers.get(name)
            if observer is not None and entries:
                _collect(errors, observer.report_name, observer.write_report, run_dir / observer.report_name,
                         entries, {k: header[k] for k in ("tool", "created_at", "run_dir")})
        if partial:  # `latest` names the newest complete run: what --dcuopt-compare=latest gates against
            self.latest_note = (f"latest: left as it was: this run is partial ({'; '.join(partial)}), and `latest` "
                                "names the newest complete run")
        else:
            point_latest(run_dir)
        _collect(errors, "pytest_dcuopt_state_written", self.config.hook.pytest_dcuopt_state_written,
                 state=state, run_dir=run_dir, config=self.config)
        if errors:
            raise ReportError("writing the run's results failed in part:\n  " + "\n  ".join(errors))
        return state

    def _integrity(self, errors: list[str]) -> dict[str, Any]:
        """Whether the files the run relies on are as the pytest process first read them (run/integrity.py); each
        that changed is an error of the run, naming the file."""
        changed = DIGESTS.changed()
        if changed:
            errors.append("files this run relies on changed while its kernels ran (a kernel writes outside its "
                          "outputs; restore them, e.g. with git checkout, and remove the branch that did it):\n    "
                          + "\n    ".join(changed))
        return {"watched": len(DIGESTS.seen), "changed": changed}

    def report_paths(self) -> list[tuple[str, Path]]:
        """(what, path) of every file finish() wrote."""
        run_dir = self.options.run_dir
        found = [("state", run_dir / "state.json"), ("summary", run_dir / "summary.md")]
        found += [(f"{name} checks", run_dir / self.observers[name].report_name)
                  for name, entries in sorted(self.reports.items()) if entries and name in self.observers]
        return found

    def terminal_lines(self) -> list[str]:
        return terminal_lines(self.state) if self.state else []


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def run_selection(config: pytest.Config) -> list[str]:
    """What on the command line picked part of the collected tests ([] when nothing did). Two runs with the same
    selection ran the same tests, so one can be the other's gate baseline."""
    option = config.option
    keyword, markexpr = getattr(option, "keyword", ""), getattr(option, "markexpr", "")
    chosen = [why for given, why in (
        (keyword, f"-k {keyword!r}"),
        (markexpr, f"-m {markexpr!r}"),
        (getattr(option, "deselect", None), "--deselect"),
        (getattr(option, "lf", False), "--lf (the last failures only)"),
        (getattr(option, "stepwise", False), "--sw (stepwise)"),
        (ALL not in config.getoption(SIZES_OPTION), f"{SIZES_OPTION} (some benchmark sizes)"),
    ) if given]
    named = [arg for arg in config.args if "::" in arg]
    if named:
        more = ", ..." if len(named) > 3 else ""
        chosen.append(f"test ids named on the command line ({', '.join(named[:3])}{more})")
    return chosen


def partial_because(config: pytest.Config, deselected: int, stopped_early: str | None,
                    interrupted: str | None) -> list[str]:
    """Why this run did not run every test it collected, at every benchmark size, to the end ([] for a complete
    run): its selection (`run_selection`), and what cut it short or left timings out."""
    option = config.option
    reasons = run_selection(config)
    if deselected and not reasons:  # by another plugin
        reasons.append(f"{deselected} tests deselected")
    reasons += [why for given, why in (
        (getattr(option, "collectonly", False), "--collect-only (nothing ran)"),
        (getattr(option, "benchmark_skip", False), "--benchmark-skip (nothing timed)"),
        (getattr(option, "benchmark_disable", False), "--benchmark-disable (nothing timed)"),
        (interrupted, f"interrupted by {interrupted}"),
        (stopped_early, f"stopped early ({stopped_early})"),
    ) if given]
    return reasons


def _collect(errors: list[str], what: str, action: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Run one step of writing the results; keep its error (with what it was) instead of stopping."""
    try:
        action(*args, **kwargs)
    except Exception as exc:
        errors.append(f"{what}: {type(exc).__name__}: {exc}")


def _branch_of(item: pytest.Item) -> tuple[Path, str, str] | None:
    """(case folder, toolchain, branch) of a kernel case's generated test of one branch; None for any other test."""
    marker = item.get_closest_marker("dcuopt")
    branch = getattr(getattr(item, "callspec", None), "params", {}).get("branch")
    if marker is None or branch is None or "toolchain" not in marker.kwargs:
        return None
    return item.path.parent, str(marker.kwargs["toolchain"]), str(branch)
