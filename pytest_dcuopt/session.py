"""DcuOptSession: the run's caches (toolchains, cases, variants, records, observer reports), the lifecycle of its
background builds and isolated workers, and the xdist hand-over of records (export in a worker, merge in the
controller). The generated tests' bodies are in `stages.py`, what the run selected in `selection.py`, the results
written at session end in `results.py`; observers see the session as a `context.RunContext`."""
from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from .bench.run import check_every_call
from .case.model import Branch, KernelCase, load_case
from .check import reference_device
from .collect import branch_ids
from .errors import DcuOptError
from .gate import build_gate
from .observe import Observer
from .option_declarations import DEFAULT_RUN_ROOT
from .options import Options, default_home
from .report.machine import now
from .report.records import BranchRecord
from .run.containment import protect_harness
from .run.devices import cpu_share, lock_dir
from .run.integrity import DIGESTS
from .run.isolation import close_all
from .run.spare_workers import SpareWorkers
from .selection import branch_of, built_by, case_group, run_selection
from .timing.calibration import XDIST_RUN_ENV, CalibrationStore, shared_dir_for_run
from .toolchains import Availability, Toolchain, toolchain_class
from .toolchains.cache import BuildCache
from .toolchains.exchange import set_run_seed
from .variant import BackgroundBuilds, BuildSettings, Variant, resolve


class DcuOptSession:
    """The run in this pytest process: its caches (toolchains, cases, variants, records, reports), the lifecycle of
    its builds and workers, and the xdist hand-over; it is the `context.RunContext` its stages and observers see."""

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
        self.variants: dict[tuple[str, str, str], Variant] = {}
        self.selected: set[tuple[Path, str, str]] = set()  # (case folder, toolchain, branch) of the selected tests
        self.baselines_tried: set[tuple[str, str, str]] = set()  # baselines checked here for another worker's A/B
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

    # ----- caches: toolchains, cases, variants ------------------------------------------
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
            self._toolchains[name] = self.build_settings().toolchain(name)
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
        if key not in self.variants:
            record = self.records.setdefault(key, BranchRecord(case.name, toolchain_name, branch_id,
                                                               _relative(source, self.config.rootpath)))
            self.variants[key] = Variant(case.for_toolchain(toolchain_name), self.toolchain(toolchain_name),
                                         Branch(branch_id, source), record)
        return self.variants[key]

    def branch_variant(self, root: Path, toolchain: str, branch: str) -> Variant | None:
        """The variant of a branch named by its test id (None when the case has no such branch for the toolchain)."""
        sources = dict(branch_ids(self.case(root), toolchain_class(toolchain).extensions))
        return self.variant(root, toolchain, branch, sources[branch]) if branch in sources else None

    # ----- lifecycle: builds and workers ---------------------------------------------------
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
        variants = built_by(self, items)
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

    def resolve(self, variant: Variant) -> None:
        """Build and load the branch (once); observers call this for a build without a device."""
        if variant.resolved:
            return
        resolve(variant, self.build_settings())
        self.config.hook.pytest_dcuopt_branch_built(variant=variant, config=self.config)

    def add_report(self, observer: str, entry: dict[str, Any]) -> None:
        self.reports.setdefault(observer, []).append(entry)

    def note_selected(self, items: Sequence[pytest.Item]) -> None:
        """Remember which branches this run's tests cover (an xdist worker collects every test of the run)."""
        self.selected.update(found for found in map(branch_of, items) if found is not None)

    def release_workers(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """End the workers of `item`'s case and toolchain when the next test belongs elsewhere: their device and host
        memory (buffers at the benchmark sizes, a GPU context each) is not held while other cases run. A later test
        of the same case starts them again (taking the spare worker where it fits)."""
        group = case_group(self, item)
        if group is None or (nextitem is not None and case_group(self, nextitem) == group):
            return
        close_all([variant.worker for key, variant in self.variants.items()
                   if key[:2] == group and variant.worker is not None])

    def forget_shared_calibrations(self) -> None:
        """The controller, at the end of an xdist run: remove the calibrations its local workers shared."""
        if self.xdist_run is not None:
            folder = shared_dir_for_run(lock_dir(), {XDIST_RUN_ENV: self.xdist_run})
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def close_workers(self) -> None:
        if self.builds is not None:  # queued builds are dropped, running compilers waited for
            self.builds.close()
        close_all([variant.worker for variant in self.variants.values() if variant.worker is not None])
        self.spares.close()

    # ----- xdist: a worker's export, the controller's merge -------------------------------
    def toolchains_json(self) -> dict[str, dict[str, Any]]:
        """Every toolchain probed in this run: here, or (under xdist) in a worker."""
        probed_here = {name: {**a.to_json(), **_identity(self.toolchain(name), a)}
                       for name, a in self._availability.items()}
        return dict(sorted({**self._worker_toolchains, **probed_here}.items()))

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


def _identity(toolchain: Toolchain, availability: Availability) -> dict[str, str]:
    """The compiler identity (what the gate compares with a baseline's), where the toolchain can build."""
    if not availability.can_build:
        return {}
    try:
        return {"identity": toolchain.identity()}
    except (DcuOptError, OSError) as exc:
        return {"identity_error": f"{type(exc).__name__}: {exc}"}


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
