"""Profilers and their registry: a profiler is chosen by the toolchain and ISA family it `serves` (never an
if/elif chain), from the built-in ones below and those installed under the `pytest_dcuopt.profilers` entry point
group, like toolchains (`toolchains/__init__.py`): a plugin package adds `name = "module:Class"` to its
`[project.entry-points."pytest_dcuopt.profilers"]`. An installed profiler serving a (toolchain, family) that a
built-in one serves takes it; one with a built-in's name replaces it.

A profiler knows its tool: what is missing on this machine (`missing`), what the profile target needs for its
profiled range (`range_request`), the commands that wrap the target (`collect`, through `external_tools.run_tool` with a
timeout), and how its raw rows become normalized metrics (`normalize`). Its failures are outcomes, never
exceptions: `Collected.failure` (the tool ran and failed: inconclusive, with its stderr) or
`Collected.degraded` (something essential is unavailable: said so, never a pass); `Collected.notes` carry
optional parts that were lost (e.g. hipprof's default `--pmc` group aborting with signal 6 on gfx936).
"""
from __future__ import annotations

import functools
import importlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from ..external_tools import ToolResult, run_tool, which
from . import hipprof, ncu, perf, rocprof, sqtt
from .hipprof import PmcFormatError
from .kernels import KernelRow
from .metrics import Metric

RANGE_PERF_FIFO = "perf-fifo"  # perf stat --control: counters enabled around the profiled call only
RANGE_PROFILER_API = "profiler-api"  # cudaProfilerStart/Stop (hipProfilerStart/Stop) around the profiled call
RANGE_NONE = "none"  # the tool records the whole process: rows are filtered by name and call


@dataclass(frozen=True)
class ProfileJob:
    target: tuple[str, ...]  # argv of `python -m pytest_dcuopt.run.profile_target <request>`
    workdir: Path
    metrics: tuple[str, ...] = ()  # extra tool-specific metrics/events/counters
    sections: tuple[str, ...] = ()  # ncu sections on request
    sqtt: bool = False
    timeout_s: float = 300.0


@dataclass
class Collected:
    rows: list[KernelRow] = field(default_factory=list)
    runs: list[ToolResult] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    failure: str | None = None  # the tool failed: inconclusive
    degraded: str | None = None  # essential counters unavailable: degraded
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # profiler-specific raw results (e.g. perf's PerfStat)


class Profiler(Protocol):
    name: str
    tool: str
    range_kind: str  # RANGE_*: how the profile target brackets the profiled call
    serves: tuple[tuple[str, str], ...]  # the (toolchain, ISA family of the built artifact) pairs it profiles

    def missing(self) -> str | None:
        """What is missing for this profiler here (None: ready)."""

    def range_request(self, workdir: Path) -> dict[str, Any]:
        """Fields the profile target's request needs for the profiled range (FIFO paths, ...)."""

    def collect(self, job: ProfileJob) -> Collected:
        """Run the target under the tool and parse its rows."""

    def normalize(self, rows: Sequence[KernelRow], collected: Collected, target: dict[str, Any]) -> list[Metric]:
        """Normalized metrics of the counted rows; `target` is the profile target's own result."""


def _failed(result: ToolResult, what: str) -> str:
    why = "timed out" if result.timed_out else f"exited with {result.returncode}"
    return f"{what} {why}: {result.command_line}\nstderr (tail):\n{result.stderr[-2000:]}"


def _read(path: Path) -> str | None:
    return path.read_text(errors="replace") if path.is_file() and path.stat().st_size > 0 else None


@dataclass(frozen=True)
class OnPath:
    """What a profiler needs installed: one of `commands` on PATH; `otherwise` says what is missing and where to
    look."""

    commands: tuple[str, ...]
    otherwise: str

    def missing(self) -> str | None:
        return None if any(which(command) for command in self.commands) else self.otherwise


class _RequestFreeProfiler:
    """A profiler whose tool only has to be on PATH (`requires`) and whose profiled range needs nothing in the target's
    request: the profiler API brackets the call, or the tool records the whole process."""

    requires: OnPath

    def missing(self) -> str | None:
        return self.requires.missing()

    def range_request(self, workdir: Path) -> dict[str, Any]:
        return {}


# ----- CPU: perf stat ---------------------------------------------------------------------------------------
class PerfProfiler:
    name = "perf"
    tool = "perf stat"
    range_kind = RANGE_PERF_FIFO
    serves = (("cpu", "x86"),)

    def missing(self) -> str | None:
        if which("perf") is None:
            return "perf is not on PATH (Debian: `apt-get install linux-perf`)"
        return None

    def hardware_verdict(self) -> str | None:
        """None when `perf stat -e instructions true` counts; else why the machine cannot count hardware events."""
        probe = run_tool(["perf", "stat", "-x,", "-e", "instructions", "true"], timeout=30)
        stat = perf.parse_perf_stat(probe.stderr)
        if not probe.ok:
            return f"`perf stat -e instructions true` failed: {probe.stderr.strip()[-400:]}"
        if "instructions" in stat.counters:
            return None
        paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
        level = paranoid.read_text().strip() if paranoid.is_file() else "?"
        pmu = Path("/sys/bus/event_source/devices/cpu").exists()
        where = ("a cpu PMU is listed" if pmu else
                 "no cpu PMU in /sys/bus/event_source/devices: a virtual machine without hardware counters")
        return (f"`perf stat -e instructions true` reports {stat.unsupported.get('instructions', 'no count')} "
                f"(perf_event_paranoid={level}; {where})")

    def range_request(self, workdir: Path) -> dict[str, Any]:
        ctl, ack = workdir / "perf.ctl", workdir / "perf.ack"
        for fifo in (ctl, ack):
            if fifo.exists():
                fifo.unlink()
            os.mkfifo(fifo)
        return {"perf_ctl": str(ctl), "perf_ack": str(ack)}

    def collect(self, job: ProfileJob) -> Collected:
        out = job.workdir / "perf.csv"
        events = list(dict.fromkeys((*perf.DEFAULT_EVENTS, *job.metrics)))
        command = ["perf", "stat", "-x,", "-o", str(out), "-D", "-1",
                   "--control", f"fifo:{job.workdir / 'perf.ctl'},{job.workdir / 'perf.ack'}",
                   "-e", ",".join(events), "--", *job.target]
        result = run_tool(command, timeout=job.timeout_s)
        collected = Collected(runs=[result], files=[str(out)])
        text = _read(out)
        if not result.ok or text is None:
            collected.failure = _failed(result, "perf stat")
            return collected
        stat = perf.parse_perf_stat(text)
        collected.rows = [perf.as_row(stat)]
        collected.extra["unsupported"] = dict(stat.unsupported)
        lost = perf.missing_hardware(stat)
        if lost:
            verdict = self.hardware_verdict()
            collected.degraded = (f"perf unavailable: hardware events {', '.join(lost)}"
                                  f"{'; ' + verdict if verdict else ''}; only software events (task-clock) counted")
        return collected

    def normalize(self, rows: Sequence[KernelRow], collected: Collected, target: dict[str, Any]) -> list[Metric]:
        stat = perf.PerfStat({k: v for r in rows for k, v in r.counters.items()},
                             {k.removeprefix("unit:"): v for r in rows for k, v in r.fields.items()})
        return perf.normalize(stat, target.get("range_wall_s"))


# ----- NVIDIA: Nsight Compute -------------------------------------------------------------------------------
class NcuProfiler(_RequestFreeProfiler):
    name = "ncu"
    tool = "ncu"
    range_kind = RANGE_PROFILER_API
    serves = (("cuda", "sass"), ("hip", "sass"))  # hip on sass: a .hip kernel built for NVIDIA through HIP's headers
    requires = OnPath(("ncu",), "ncu (Nsight Compute) is not on PATH")

    def collect(self, job: ProfileJob) -> Collected:
        report = job.workdir / "ncu"
        metrics = ",".join(dict.fromkeys((*ncu.DEFAULT_METRICS, *job.metrics)))
        sections = [part for name in job.sections for part in ("--section", name)]
        command = ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--target-processes", "all",
                   "-f", "-o", str(report), "--metrics", metrics, *sections, *job.target]
        run = run_tool(command, timeout=job.timeout_s)
        collected = Collected(runs=[run], files=[f"{report}.ncu-rep"])
        if not run.ok or not Path(f"{report}.ncu-rep").is_file():
            collected.failure = _failed(run, "ncu")
            return collected
        exported = run_tool(["ncu", "--import", f"{report}.ncu-rep", "--csv", "--print-units", "base"], timeout=120)
        collected.runs.append(exported)
        csv_path = job.workdir / "ncu.csv"
        csv_path.write_text(exported.stdout)
        collected.files.append(str(csv_path))
        if not exported.ok:
            collected.failure = _failed(exported, "ncu --import")
            return collected
        try:
            collected.rows = ncu.parse_ncu_csv(exported.stdout, str(csv_path))
        except PmcFormatError as exc:
            collected.failure = f"{exc}\nncu stderr (tail):\n{run.stderr[-2000:]}"
        return collected

    def normalize(self, rows: Sequence[KernelRow], collected: Collected, target: dict[str, Any]) -> list[Metric]:
        return ncu.normalize(rows)


# ----- Hygon DCU: hipprof -----------------------------------------------------------------------------------
class HipprofProfiler(_RequestFreeProfiler):
    name = "hipprof"
    tool = "hipprof"
    range_kind = RANGE_NONE
    serves = (("hip", "dcu"),)
    requires = OnPath(("hipprof",), "hipprof (DTK) is not on PATH (e.g. /opt/dtk/bin)")

    def _group(self, job: ProfileJob, flag: str, label: str) -> tuple[ToolResult, Path]:
        prefix = job.workdir / label
        result = run_tool(["hipprof", flag, "--pmc-type", "3", "-o", str(prefix), *job.target], timeout=job.timeout_s)
        return result, Path(f"{prefix}.csv")

    def collect(self, job: ProfileJob) -> Collected:
        collected = Collected()
        groups: dict[str, list[KernelRow]] = {}
        for flag, label in (("--pmc-read", "pmc_read"), ("--pmc-write", "pmc_write")):
            result, path = self._group(job, flag, label)
            collected.runs.append(result)
            collected.files.append(str(path))
            text = _read(path)
            if not result.ok or text is None:
                collected.failure = _failed(result, f"hipprof {flag}")
                return collected
            groups[label] = hipprof.parse_pmc_csv(text, str(path))
        self._default_group(job, collected, groups)
        if job.sqtt:
            self._sqtt(job, collected)
        try:
            collected.rows = hipprof.join_by_dispatch(groups)
        except PmcFormatError as exc:
            collected.failure = str(exc)
        return collected

    def _default_group(self, job: ProfileJob, collected: Collected, groups: dict[str, list[KernelRow]]) -> None:
        result, path = self._group(job, "--pmc", "pmc_default")
        collected.runs.append(result)
        text = _read(path)
        if hipprof.aborted(result.returncode, result.stderr) and text is None:
            collected.notes.append("degraded: hipprof's default --pmc group aborted with signal 6 (known on some "
                                   "gfx936 DTK builds, at queue creation); L2 hit rate and LDS bank conflicts are "
                                   "missing, the --pmc-read/--pmc-write groups are used alone")
        elif not result.ok or text is None:
            collected.notes.append(_failed(result, "hipprof --pmc (default group, optional)"))
        else:
            collected.files.append(str(path))
            groups["pmc_default"] = hipprof.parse_pmc_csv(text, str(path))

    def _sqtt(self, job: ProfileJob, collected: Collected) -> None:
        folder = job.workdir / "sqtt"
        folder.mkdir(exist_ok=True)
        result = run_tool(sqtt.command("hipprof", folder, job.target), timeout=job.timeout_s)
        collected.runs.append(result)
        produced = sorted(str(p) for p in folder.rglob("*") if p.is_file())
        collected.files += produced
        if not result.ok:
            collected.notes.append(_failed(result, "hipprof --sqtt (its export may need llvm-objdump on PATH)"))
            return
        (folder / "summary.json").write_text(json.dumps(sqtt.summarize(folder), indent=2) + "\n")
        collected.notes.append(f"sqtt: {len(produced)} file(s) kept; counts in {folder / 'summary.json'} "
                               f"({sqtt.UNVERIFIED.split(':')[0]})")

    def normalize(self, rows: Sequence[KernelRow], collected: Collected, target: dict[str, Any]) -> list[Metric]:
        units = target.get("device", {}).get("multiprocessors")
        return hipprof.normalize(rows, int(units) if units else None)


# ----- AMD ROCm: rocprofv3, else rocprof v1 -----------------------------------------------------------------
ROCM_COUNTERS = ("SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_LDS", "SQ_LDS_BANK_CONFLICT", "GRBM_GUI_ACTIVE",
                 "TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA_RDREQ_sum", "TCC_EA_WRREQ_sum")


class RocprofProfiler(_RequestFreeProfiler):
    name = "rocprof"
    tool = "rocprofv3 / rocprof"
    range_kind = RANGE_NONE
    serves = (("hip", "amdgcn"),)
    requires = OnPath(("rocprofv3", "rocprof"), "neither rocprofv3 nor rocprof is on PATH")

    def collect(self, job: ProfileJob) -> Collected:
        counters = list(dict.fromkeys((*ROCM_COUNTERS, *job.metrics)))
        if which("rocprofv3"):
            out = job.workdir / "rocprofv3"
            result = run_tool(["rocprofv3", "--pmc", *counters, "--output-format", "csv", "-d", str(out), "-o", "run",
                               "--", *job.target], timeout=job.timeout_s)
            found = sorted(out.rglob("*counter_collection.csv"))
            parse: Callable[[str, str], list[KernelRow]] = rocprof.parse_counter_collection
        else:
            (job.workdir / "input.txt").write_text("pmc: " + " ".join(c.removesuffix("_sum") for c in counters) + "\n")
            out_csv = job.workdir / "rocprof.csv"
            result = run_tool(["rocprof", "-i", str(job.workdir / "input.txt"), "-o", str(out_csv), *job.target],
                              timeout=job.timeout_s)
            found = [out_csv] if out_csv.is_file() else []
            parse = hipprof.parse_pmc_csv
        collected = Collected(runs=[result], files=[str(p) for p in found])
        if not result.ok or not found:
            collected.failure = _failed(result, result.command[0])
            return collected
        try:
            collected.rows = [row for path in found for row in parse(path.read_text(errors="replace"), str(path))]
        except PmcFormatError as exc:
            collected.failure = str(exc)
        return collected

    def normalize(self, rows: Sequence[KernelRow], collected: Collected, target: dict[str, Any]) -> list[Metric]:
        units = target.get("device", {}).get("multiprocessors")
        return hipprof.normalize(rows, int(units) if units else None)


# ----- the registry -------------------------------------------------------------------------------------------
ENTRY_POINT_GROUP = "pytest_dcuopt.profilers"
BUILTIN: dict[str, str] = {
    "perf": "pytest_dcuopt.profile.profilers:PerfProfiler",
    "ncu": "pytest_dcuopt.profile.profilers:NcuProfiler",
    "hipprof": "pytest_dcuopt.profile.profilers:HipprofProfiler",
    "rocprof": "pytest_dcuopt.profile.profilers:RocprofProfiler",
}


@functools.cache
def _installed() -> tuple[tuple[str, str], ...]:
    """Built-in and installed profilers (name -> "module:Class"), read once per process; installed ones after the
    built-ins, in name order."""
    found = dict(BUILTIN)
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        found[entry.name] = entry.value
    return tuple(found.items())


def profiler_class(name: str) -> type[Profiler]:
    """The registered profiler `name` (a class whose instances are `Profiler`s)."""
    registry = dict(_installed())
    if name not in registry:
        raise KeyError(f"unknown profiler {name!r}; registered: {', '.join(sorted(registry))}")
    module_name, _, attribute = registry[name].partition(":")
    cls = getattr(importlib.import_module(module_name), attribute)
    serves = getattr(cls, "serves", None)
    if not (isinstance(cls, type) and isinstance(serves, tuple) and all(isinstance(p, tuple) and len(p) == 2
                                                                         for p in serves)):
        raise TypeError(f"profiler entry point {name!r} -> {registry[name]} is not a profiler class with "
                        "`serves = ((toolchain, isa_family), ...)`; see profile/profilers.py `Profiler`")
    found: type[Profiler] = cls
    return found


def served() -> dict[tuple[str, str], str]:
    """(toolchain, ISA family) -> the name of the profiler that profiles it (a later registration takes a pair)."""
    return {pair: name for name, _ in _installed() for pair in profiler_class(name).serves}


def profiled_toolchains() -> set[str]:
    return {toolchain for toolchain, _ in served()}


def profiler_for(toolchain: str, family: str) -> Profiler | None:
    name = served().get((toolchain, family))
    return profiler_class(name)() if name is not None else None
