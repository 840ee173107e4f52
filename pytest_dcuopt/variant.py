"""A branch of a case on one toolchain, and the build stage that turns it into a loaded, isolated kernel.

`resolve` is the only place that builds: it imports the reference, parses the C ABI, builds
through the toolchain (and its cache), and starts the branch's isolated worker. Errors are kept
on the variant (a compile error fails every test of that branch alike, without rebuilding).

`BackgroundBuilds` compiles the selected branches in a thread pool while the tests run (the session starts it
when collection has finished, --dcuopt-build-jobs at a time, in test order): each compiler is a process of its own
and the build cache serialises builds of one key, so the threads only wait. A test waits only for its own branch's
build (`resolve` takes it; a build not started yet is taken off the queue and run in the test), and a measurement
waits for all of them (`BackgroundBuilds.wait`), so no compiler shares the machine with a timing.
"""
from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .case.buffers import is_float, resolve_shapes
from .case.cabi import Param, parse_solve_signature
from .case.model import Branch, KernelCase
from .case.parameter_binding import bind_parameters
from .case.ref_loader import load_reference
from .case.reference import Reference
from .errors import CaseError, CompileError, DcuOptError, SignatureError
from .report.records import BranchRecord
from .run.isolation import IsolatedKernel, WorkerSpec
from .run.spare_workers import SpareWorkers
from .timing.calibration import CalibrationStore
from .toolchains import make_toolchain
from .toolchains.base import Artifact, BranchUnavailable, Toolchain
from .toolchains.binding import BindSpec
from .toolchains.cache import BuildCache, BuildCacheError


class PositionalBindingWarning(UserWarning):
    """solve's parameter names differ from the reference's and were bound by position (said once per branch)."""


@dataclass(frozen=True)
class Verdicts:
    """What this process's checks found about a branch. Only `check/verdicts.py` replaces a Variant's `verdicts`
    (tests/unit/test_architecture.py holds every other module to reading them); frozen, so none is changed in place."""

    default_verified: bool = False  # a checked call at the default dims (the timing size), seed 0, passed here
    boundary_checked: bool = False  # the boundary dims were checked before timing (once for every benchmark size)
    failed_correctness: bool = False  # a check found it wrong: neither timed nor ranked


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
    verdicts: Verdicts = field(default_factory=Verdicts)  # replaced by check/verdicts.py only
    examples: int = 0
    last_failure: dict[str, Any] | None = field(default=None, repr=False)
    prebuilt: Future[Artifact] | None = field(default=None, repr=False)  # its background build, taken by resolve
    bound: set[tuple[Any, ...]] = field(default_factory=set, repr=False)  # draw keys its worker was asked to bind

    @property
    def label(self) -> str:
        return f"{self.case.name}/{self.toolchain.name}/{self.branch.name}"

    @property
    def resolved(self) -> bool:
        return self.worker is not None or self.setup_error is not None

    def shapes(self, dims: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        """Element shape of every pointer parameter at `dims` ({} for contracts without a C signature)."""
        if not self.params:
            return {}
        assert self.reference is not None
        return resolve_shapes(self.params, self.reference.shapes, dims, str(self.branch.source))

    def bind_spec(self, dims: Mapping[str, Any], seed: int, input_set: str | None = None) -> BindSpec:
        """The buffers of one call at `dims`: shapes and starting values (inputs, declared initial states)
        evaluated at these dims; `input_set`: the inputs drawn from that ref.py `input_sets` entry."""
        assert self.reference is not None
        return BindSpec(dict(dims), seed, self.shapes(dims), self.reference.starting_domains(dims, input_set))


@dataclass(frozen=True)
class BuildSettings:
    """What the build stage needs from the run's options; the one route of the build flags and the arch. A branch's
    toolchain is made here (`toolchain`), `resolve` hands the same flags to its worker, which makes its own from
    them, and the profile target gets the worker's; an ablated build adds its flags here (`adding_flags`)."""

    cache: BuildCache
    arch: str | None
    extra_flags: tuple[str, ...]
    log_dir: Path
    timeout_s: float
    devices: tuple[str, ...] = ()  # --dcuopt-devices: GPUs the kernel workers are pinned to (per xdist worker)
    host_lock: bool = True  # CPU timing holds the host lock (--dcuopt-no-host-lock turns it off)
    calibrations: CalibrationStore | None = None  # device calibrations shared by the session's workers
    spares: SpareWorkers | None = None  # the session's spare workers (None: every start is cold)
    builds: BackgroundBuilds | None = None  # the session's background builds (None: each branch builds in its test)

    def toolchain(self, name: str) -> Toolchain:
        """The toolchain `name` building with these settings' arch and flags."""
        return make_toolchain(name, self.arch, self.extra_flags)

    def adding_flags(self, flags: Iterable[str]) -> BuildSettings:
        """These settings with `flags` after the run's own (an ablated build: the run's flags, then its switch)."""
        return replace(self, extra_flags=(*self.extra_flags, *flags))


class BuildFlagsDiffer(DcuOptError):
    """A variant's toolchain was not made by the settings it is resolved with: its build and its worker would take
    different flags."""


def resolve(variant: Variant, settings: BuildSettings) -> None:
    """Build and load the branch once; on failure keep the error on the variant and its record."""
    if variant.resolved:
        return
    made = (variant.toolchain.arch, variant.toolchain.extra_flags)
    if made != (settings.arch, settings.extra_flags):
        raise BuildFlagsDiffer(
            f"{variant.label}: its toolchain builds for arch {made[0]!r} with flags {list(made[1])}, but it is "
            f"resolved with arch {settings.arch!r} and flags {list(settings.extra_flags)}, which its worker would "
            "load with: make the toolchain with the same settings (`BuildSettings.toolchain`, `adding_flags`)")
    try:
        variant.reference = load_reference(variant.case.ref_path, variant.case.dims)
        if variant.toolchain.c_abi:
            text = variant.branch.source.read_text(errors="replace")
            bind_by_position_if_needed(variant, parse_solve_signature(text, str(variant.branch.source)))
            check_scalars(variant)
            check_initial_states(variant)
        prebuilt = settings.builds.take(variant) if settings.builds is not None else None
        variant.artifact = prebuilt or variant.toolchain.build(variant.branch.source, settings.cache)
        variant.record.build = variant.artifact.to_json()
        note_launcher_binding(variant)
        log = settings.log_dir / f"{variant.label.replace('/', '__')}.log"
        spec = WorkerSpec(variant.label, variant.toolchain.name, settings.arch, settings.extra_flags,
                          variant.artifact, variant.params, log, devices=settings.devices,
                          platform=variant.toolchain.device_platform(), host_lock=settings.host_lock,
                          preload=variant.toolchain.worker_modules())
        quiet = settings.builds.wait if settings.builds is not None else None  # no compiler beside a timing
        variant.worker = IsolatedKernel(spec, settings.timeout_s, settings.calibrations, settings.spares, quiet)
    except CompileError as exc:
        variant.setup_error = exc
        variant.record.build = {"toolchain": variant.toolchain.name, **exc.result.to_json()}
        variant.record.error = {"kind": "compile error", "message": str(exc)}
    except (CaseError, SignatureError) as exc:
        variant.setup_error = exc
        variant.record.error = {"kind": "case error", "message": str(exc)}
    except BranchUnavailable as exc:  # a variant the stack rejects when probed: reported unavailable, not failed
        variant.setup_error = exc
        variant.record.build = {"toolchain": variant.toolchain.name, "command": exc.command, "details": exc.details}
        variant.record.skipped = f"unavailable: {exc}"
    except BuildCacheError as exc:  # the cache folder cannot be made or written: every branch fails alike, clearly
        variant.setup_error = exc
        variant.record.error = {"kind": "build cache error", "message": str(exc)}


@dataclass(frozen=True)
class BuildsReport:
    """What the background builds did: for the terminal and docs/performance.md."""

    built: int  # artifacts made or reused in the background
    failed: int  # compile errors (kept for their branches' tests)
    in_test: int  # builds a test needed before their turn came: taken off the queue and run in that test
    errors: tuple[str, ...]  # other errors: `resolve` builds that branch again inside its test and reports it there
    jobs: int
    seconds: float  # from the start until the last background build ended
    waited_s: float  # how long tests and measurements waited for running builds

    def describe(self) -> str:
        parts = [f"{self.built} built or reused", *([f"{self.failed} compile errors"] if self.failed else []),
                 *([f"{self.in_test} built in their own test"] if self.in_test else []),
                 *([f"{len(self.errors)} errors left to their tests"] if self.errors else [])]
        return (f"background builds: {', '.join(parts)}; done {self.seconds:.1f} s after collection with "
                f"{self.jobs} job(s); tests waited {self.waited_s:.1f} s for them")


class BackgroundBuilds:
    """Build the variants not resolved yet, `jobs` at a time, in the order given (the tests' order), while the
    tests run. Each variant keeps its build's Future (`Variant.prebuilt`); `take` hands the artifact to `resolve`.

    Any error other than a compile error (a compiler that vanished, a full disk) is not kept: `resolve` builds that
    branch again inside its test, where the error is reported as it would have been without the background build.
    """

    def __init__(self, variants: Iterable[Variant], cache: BuildCache, jobs: int) -> None:
        self.jobs = max(1, jobs)
        self._started = time.perf_counter()
        self._lock = threading.Lock()
        self._last_end = self._started
        self._built = self._failed = self._in_test = 0
        self._waited_s = 0.0
        self._errors: list[str] = []
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="dcuopt-build")
        self._futures: list[Future[Artifact]] = []
        for variant in variants:
            if not variant.resolved and variant.prebuilt is None:
                variant.prebuilt = self._pool.submit(self._build, variant, cache)
                self._futures.append(variant.prebuilt)

    @property
    def count(self) -> int:
        return len(self._futures)

    def _build(self, variant: Variant, cache: BuildCache) -> Artifact:
        outcome = "built"
        try:
            return variant.toolchain.build(variant.branch.source, cache)
        except CompileError:
            outcome = "failed"
            raise
        except Exception as exc:
            outcome = f"{variant.label}: {type(exc).__name__}: {exc}"
            raise
        finally:
            with self._lock:
                self._last_end = time.perf_counter()
                if outcome == "built":
                    self._built += 1
                elif outcome == "failed":
                    self._failed += 1
                else:
                    self._errors.append(outcome)

    def take(self, variant: Variant) -> Artifact | None:
        """The variant's artifact from its background build, waiting for it while it runs (None: build it now, in
        the caller: it was not queued, had not started, or ended with an error other than a compile error). A
        compile error is raised here, as the build would have raised it."""
        future, variant.prebuilt = variant.prebuilt, None
        if future is None:
            return None
        if future.cancel():  # still queued: its test needs it now, so it is built there instead of waiting its turn
            with self._lock:
                self._in_test += 1
            return None
        waiting = time.perf_counter()
        try:
            return future.result()
        except CompileError:
            raise
        except Exception:
            return None
        finally:
            self._add_wait(time.perf_counter() - waiting)

    def wait(self) -> None:
        """Return when no background build is running or queued: before a measurement, so that no compiler shares
        the machine with it."""
        pending = [future for future in self._futures if not future.done()]
        if pending:
            waiting = time.perf_counter()
            wait_for(pending)
            self._add_wait(time.perf_counter() - waiting)

    def _add_wait(self, seconds: float) -> None:
        with self._lock:
            self._waited_s += seconds

    def close(self) -> None:
        """Drop the queued builds and wait for the running compilers (at the session's end, or on an interrupt)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def report(self) -> BuildsReport:
        with self._lock:
            return BuildsReport(self._built, self._failed, self._in_test, tuple(self._errors), self.jobs,
                                self._last_end - self._started, self._waited_s)


def check_scalars(variant: Variant) -> None:
    """Every scalar parameter of `solve` needs a value: from dims.json or a declared input."""
    assert variant.reference is not None
    dims, declared = variant.case.dims, variant.reference.inputs
    for param in variant.params:
        if not param.pointer and param.name not in dims and param.name not in declared:
            raise CaseError(f"{variant.branch.source}: scalar parameter {param.name!r} has no value: add it to "
                            f"dims.json (dims: {sorted(dims)}).")


def bind_by_position_if_needed(variant: Variant, parsed: tuple[Param, ...]) -> None:
    """Give the kernel's parameters the reference's names (by position when solve's names differ), and say so in
    the record (`observations.binding`) and once in the test output (a PositionalBindingWarning)."""
    assert variant.reference is not None
    source = str(variant.branch.source)
    binding = bind_parameters(parsed, variant.reference.function, variant.case.dims, list(variant.reference.initial),
                              source)
    variant.params = binding.params
    if binding.by == "position":
        variant.record.observations["binding"] = binding.to_json()
        # Located at the kernel's file (its `solve` line), where the names differ, not at this harness code.
        warnings.warn_explicit(PositionalBindingWarning(binding.describe(source)), PositionalBindingWarning, source,
                               _entry_line(variant.branch.source))


def _entry_line(source: Path) -> int:
    """The line of the source's first `solve(` (1 when it cannot be read or has none)."""
    try:
        lines = source.read_text(errors="replace").splitlines()
    except OSError:
        return 1
    return next((number for number, line in enumerate(lines, 1) if re.search(r"\bsolve\s*\(", line)), 1)


def note_launcher_binding(variant: Variant) -> None:
    """A launcher without a C signature (Triton) is bound when its build derives the contract: a positional binding
    is said as for a C ABI kernel, in the record and once in the test output."""
    assert variant.artifact is not None
    binding = variant.artifact.details.get("binding")
    if not binding or binding.get("by") != "position":
        return
    variant.record.observations["binding"] = dict(binding)
    renamed = ", ".join(f"{k} -> {v}" for k, v in binding["map"].items() if k != v)
    warnings.warn(PositionalBindingWarning(
        f"{variant.branch.source}: solve's parameter names differ from reference's, so they are bound by position "
        f"(as a C ABI kernel's are): {renamed}. dims, shapes and inputs use the reference's names."), stacklevel=2)


def check_initial_states(variant: Variant) -> None:
    """`initial` names non-const buffers of solve, with a value their dtype holds exactly."""
    assert variant.reference is not None
    by_name = {p.name: p for p in variant.params}
    for name, value in variant.reference.initial.items():
        param = by_name.get(name)
        if param is None or not param.pointer or param.const:
            what = "is not a parameter" if param is None else "is a scalar" if not param.pointer else "is const"
            raise CaseError(f"{variant.reference.path}: initial[{name!r}] is declared, but {name!r} {what} of "
                            f"{variant.branch.source}'s solve ({', '.join(p.declaration for p in variant.params)}). "
                            "`initial` sets the starting value of a non-const (output) buffer.")
        if not is_float(param.dtype) and (not float(value).is_integer() or
                                          (value < 0 and param.dtype.startswith(("uint", "bool")))):
            raise CaseError(f"{variant.reference.path}: initial[{name!r}] = {value:g}, but {name!r} is "
                            f"{param.dtype}, which cannot hold it exactly; give a value of that type.")
