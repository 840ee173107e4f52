"""`dcuopt env`: what this machine can do, to env.json (toolchains, arch, wave size, tools present or degraded).

Toolchains are probed through the registry (`availability()` of every registered toolchain); tools are looked up
through `toolchains.tool_finders.TOOL_FINDERS` (PATH, then the ROCm/DTK install roots for the DTK tools), each with its
version line. Two tools are probed beyond being present: hipprof's hardware counters (`hipprof --list-basic` exits
0: `pmc_available`, the seed's probe) and perf's (`perf stat -e instructions true` counts: a VM without a PMU has
perf installed and no counters, so perf is not listed as available there).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..external_tools import run_tool
from ..files import write_atomic
from ..profile.profilers import PerfProfiler
from ..report.machine import now
from ..toolchains import make_toolchain, registered_names
from ..toolchains.tool_finders import TOOL_FINDERS

# name -> what the loop loses without it (how each is found: toolchains/tool_finders.py)
TOOL_LOSSES: dict[str, str] = {
    "hipcc": "no HIP builds (DCU/ROCm kernels)",
    "hipprof": "no DCU profile: roofline budget and counters are degraded",
    "dccobjdump": "no DCU ISA dump: ISA checks fall back to llvm-objdump/-save-temps or are inconclusive",
    "rocminfo": "no AMD/DCU device listing: arch comes from torch or --dcuopt-arch",
    "rocm-smi": "no DCU clocks/temperature in the records",
    "nvcc": "no CUDA builds",
    "ncu": "no NVIDIA profile: roofline budget and counters are degraded",
    "cuobjdump": "no SASS dump: NVIDIA ISA checks are inconclusive",
    "g++": "no CPU builds",
    "perf": "no CPU counters",
}
TOOLS: dict[str, tuple[Callable[[], str | None], str]] = {name: (TOOL_FINDERS[name], loss)
                                                         for name, loss in TOOL_LOSSES.items()}
# The command that prints each tool's version (the first non-empty line is kept); hipprof has no --version.
VERSION_ARGS: dict[str, tuple[str, ...]] = {"hipcc": ("--version",), "hipprof": ("-h",), "dccobjdump": ("--version",),
                                            "rocm-smi": ("--version",), "nvcc": ("--version",), "ncu": ("--version",),
                                            "cuobjdump": ("--version",), "g++": ("--version",), "perf": ("--version",)}
PROBE_TIMEOUT_S = 20.0
_VERSION_RE = re.compile(r"\d+\.\d+")  # the line with a version number ("release 13.0, V13.0.88"), else the first
CK_TILE_ENV = ("CK_TILE_PATH", "CK_TILE_INCLUDE_DIR", "CK_PATH", "COMPOSABLE_KERNEL_PATH")
CK_TILE_GLOBS = ("/opt/dtk*/include", "/opt/dtk*/*/include", "/opt/rocm*/include", "/opt/rocm*/*/include",
                 "/usr/local/include", "/usr/include")
# Lanes that execute in lock-step, by arch prefix: CDNA/GCN and Hygon DCUs run wave64, RDNA (gfx10+) defaults to
# wave32, NVIDIA warps are 32 wide. Longest prefix wins.
WAVE_SIZE_BY_ARCH_PREFIX = {"gfx9": 64, "gfx8": 64, "gfx10": 32, "gfx11": 32, "gfx12": 32, "sm_": 32}
_ARCH_RE = re.compile(r"^(gfx[0-9a-f]+|sm_\d+a?)", re.I)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("env", help="probe toolchains and tools to env.json")
    parser.add_argument("--json", type=Path, default=Path("env.json"), help="where to write (default ./env.json)")
    parser.add_argument("--arch", default=None, help="target arch passed to the toolchains (as --dcuopt-arch)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    env = probe(args.arch)
    write_atomic(args.json, json.dumps(env, indent=2, default=str) + "\n")
    for line in describe(env):
        print(line)
    print(f"env: {args.json}")
    return 0


def probe(arch: str | None = None) -> dict[str, Any]:
    toolchains = {name: make_toolchain(name, arch).availability().to_json() for name in registered_names()}
    tools = {name: tool_entry(find, loss, VERSION_ARGS.get(name)) for name, (find, loss) in TOOLS.items()}
    tools["ck_tile_headers"] = ck_tile_entry()
    probe_counters(tools)
    runnable = [name for name, entry in toolchains.items() if entry["capability"] == "run"]
    archs = {name: entry.get("gcn_arch") or entry.get("arch") for name, entry in toolchains.items()}
    return {
        "created_at": now(), "platform": platform.platform(), "python": sys.version.split()[0],
        "toolchains": toolchains, "runnable_toolchains": runnable,
        "devices": {name: {"arch": archs[name], "wave_size": wave_size(archs[name]), "device": entry.get("device")}
                    for name, entry in toolchains.items() if archs[name]},
        "tools": tools, "pmc_available": tools["hipprof"].get("pmc_available", False),
        "degraded": {name: (f"{entry['missing_means']} ({entry['unusable']})" if entry.get("unusable") else
                            entry["missing_means"]) for name, entry in tools.items() if not entry["available"]},
    }


def tool_entry(find: Callable[[], str | None], loss: str, version_args: tuple[str, ...] | None = None
               ) -> dict[str, Any]:
    path = find()
    entry: dict[str, Any] = {"available": path is not None, "path": path, "missing_means": loss}
    if path is not None and version_args is not None:
        result = run_tool([path, *version_args], timeout=PROBE_TIMEOUT_S)
        lines = [ln.strip() for ln in (result.stdout + result.stderr).splitlines() if ln.strip()]
        line = next((ln for ln in lines if _VERSION_RE.search(ln)), lines[0] if lines else "")
        entry["version"] = line[:200] if line else f"unknown (`{result.command_line}` exited {result.returncode})"
    return entry


def probe_counters(tools: dict[str, dict[str, Any]]) -> None:
    """hipprof's `pmc_available` (`hipprof --list-basic` exits 0); perf without hardware counters is unusable."""
    hipprof = tools["hipprof"]
    if hipprof["available"]:
        listed = run_tool([hipprof["path"], "--list-basic"], timeout=PROBE_TIMEOUT_S)
        hipprof["pmc_available"] = listed.ok
        hipprof["pmc_probe"] = {"command": listed.command_line, "returncode": listed.returncode,
                                "output": (listed.stdout + listed.stderr).strip()[-400:]}
    else:
        hipprof["pmc_available"] = False
    perf = tools["perf"]
    if perf["available"]:
        lacking = PerfProfiler().hardware_verdict()
        if lacking is not None:
            perf.update(available=False, unusable=f"installed at {perf['path']}, but {lacking}")


def ck_tile_entry() -> dict[str, Any]:
    """CK Tile include directory (a folder holding ck_tile/), looked up as the hip toolchain does."""
    candidates = [c for v in CK_TILE_ENV if os.environ.get(v) for c in (os.environ[v], os.path.join(os.environ[v],
                                                                                                     "include"))]
    candidates += [c for pattern in CK_TILE_GLOBS for c in sorted(glob.glob(pattern))]
    found = next((c for c in candidates if os.path.isdir(os.path.join(c, "ck_tile"))), None)
    return {"available": found is not None, "path": found,
            "missing_means": "CK Tile kernels do not build: set CK_TILE_PATH to a composable_kernel checkout"}


def wave_size(arch: str | None) -> int | None:
    match = _ARCH_RE.match(arch or "")
    if not match:
        return None
    name = match.group(1).lower()
    prefixes = sorted((p for p in WAVE_SIZE_BY_ARCH_PREFIX if name.startswith(p)), key=len, reverse=True)
    return WAVE_SIZE_BY_ARCH_PREFIX[prefixes[0]] if prefixes else None


def describe(env: dict[str, Any]) -> list[str]:
    lines = [f"toolchain {name}: {entry['capability']} - {entry['reason']}"
             for name, entry in env["toolchains"].items()]
    lines += [f"device ({name}): {d['device'] or 'none'}, arch {d['arch']}, wave size {d['wave_size'] or 'unknown'}"
              for name, d in env["devices"].items()]
    present = [name for name, entry in env["tools"].items() if entry["available"]]
    lines.append(f"tools present: {', '.join(present) or 'none'}")
    lines += [f"degraded: {name} unusable - {why}" if env["tools"].get(name, {}).get("unusable") else
              f"degraded: {name} missing - {why}" for name, why in env["degraded"].items()]
    if env["tools"]["hipprof"]["available"]:
        lines.append(f"hipprof counters (hipprof --list-basic): {'available' if env['pmc_available'] else 'no'}")
    return lines
