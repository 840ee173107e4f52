"""`dcuopt probe`: does one exact builtin or inline-asm call shape compile for an arch?

An HCU/AMDGCN builtin is used only when its exact call shape compiles for the target (`__has_builtin` is not proof:
a builtin can exist and still need a target feature the arch lacks). The probe puts the call into the body of a
device kernel, compiles it for the arch with hipcc (device code only, nothing runs), and records the verdict with
the compiler's own words:

    available     the call compiled
    unavailable   the call failed while the same kernel without it compiled: the compiler's error is the reason
    inconclusive  nothing could be learnt: no hipcc, the compiler does not know the arch (the Hygon archs need
                  DTK's hipcc), the kernel frame itself did not compile, or the compiler timed out

The probe source (`<arch>-<hash>.hip`), its compiler log (`.log`) and `probes.json` (every probe, the latest per
call shape and arch) stay in the run's `probes/` folder, the seed's scratch area. methods.json validation reads
`probes.json`: a method that declares `builtins` needs an `available` probe of each call shape for the iteration's
arch (cli/methods.py).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..external_tools import ToolResult, run_tool
from ..files import write_atomic
from ..report.machine import now
from ..toolchains.hip import INSTALL_HINT, HipToolchain, is_hygon
from ..toolchains.hip_install import HIP_ENV

PROBES_DIR = "probes"
PROBES_NAME = "probes.json"
AVAILABLE, UNAVAILABLE, INCONCLUSIVE = "available", "unavailable", "inconclusive"
COMPILE_TIMEOUT_S = 120.0
# Device code only: the probe asks what the device compiler accepts, not whether a host program links.
COMPILE_FLAGS = ("-O3", "-std=c++17", "--cuda-device-only", "-c")
# Pointers of the common element types, so a call shape can read operands the compiler cannot fold away.
KERNEL_TEMPLATE = """#include <hip/hip_runtime.h>
{prelude}
extern "C" __global__ void dcuopt_probe(int* i32, unsigned* u32, long long* i64, float* f32, double* f64,
                                        _Float16* f16) {{
{body}
}}
"""
DTK_HINT = ("it is a Hygon DCU arch: probe it with DTK's hipcc (/opt/dtk/bin/hipcc, $DTK_PATH/bin/hipcc, or "
            "$DCUOPT_HIPCC); upstream clang/ROCm do not know it")
_ARCH_REJECTED_RE = re.compile(r"invalid target ID|unsupported (?:HIP )?gpu architecture|unknown target CPU|"
                               r"invalid offload arch|is not a recognized processor", re.I)
_ERROR_LINE_RE = re.compile(r"\berror\b", re.I)
MAX_MESSAGE_LINES = 6
MISSING_EXECUTABLE = 127  # run_tool's status for a command that could not be started


@dataclass(frozen=True)
class Probe:
    """One call shape for one arch: `call` is the kernel body (statements using the kernel's pointers `i32`, `u32`,
    `i64`, `f32`, `f64`, `f16`), `prelude` declarations before the kernel (vector typedefs, asm helpers)."""

    call: str
    arch: str
    prelude: str = ""

    @property
    def key(self) -> str:
        digest = hashlib.sha256(json.dumps([self.arch, self.prelude, self.call]).encode()).hexdigest()[:12]
        return f"{self.arch.split(':', 1)[0]}-{digest}"

    def source(self, with_call: bool = True) -> str:
        body = self.call.strip() if with_call else ""
        if body and not body.endswith((";", "}")):
            body += ";"
        return KERNEL_TEMPLATE.format(prelude=self.prelude, body=f"  {body}" if body else "")


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "probe", help="compile-probe a builtin or inline-asm call shape for an arch",
        description="Compile an exact builtin or inline-asm call shape for an arch (device code only) and record "
                    "available/unavailable with the compiler's words in DIR/probes/. Exit 0 when every call is "
                    "available, 1 otherwise.")
    parser.add_argument("run_dir", type=Path, metavar="DIR", help="the run directory (or any folder) to keep the "
                                                                  "probes in (DIR/probes/)")
    parser.add_argument("--arch", required=True, help="the target, e.g. gfx90a, gfx942 (Debian's hipcc), gfx936 "
                                                      "or gfx938 (DTK's hipcc)")
    parser.add_argument("--call", action="append", required=True,
                        help="the call shape as written in a kernel body, e.g. "
                             "'i32[0] = __builtin_amdgcn_readfirstlane(i32[1])'; operands: the kernel's pointers "
                             "i32, u32, i64, f32, f64, f16. Repeat for several")
    parser.add_argument("--prelude", default="", help="declarations placed before the kernel (typedefs, helpers)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    folder = args.run_dir / PROBES_DIR
    records = [probe_call(Probe(call, args.arch, args.prelude), folder) for call in args.call]
    for record in records:
        print(describe(record))
    print(f"probes: {folder / PROBES_NAME}")
    return 0 if all(r["status"] == AVAILABLE for r in records) else 1


def probe_call(probe: Probe, folder: Path, hipcc: str | None = None) -> dict[str, Any]:
    """Compile `probe` into `folder`, add its record to `folder/probes.json` and return the record."""
    folder.mkdir(parents=True, exist_ok=True)
    compiler = hipcc or HipToolchain(probe.arch).compiler()
    record: dict[str, Any] = {"call": probe.call, "arch": probe.arch, "prelude": probe.prelude, "compiler": compiler,
                              "source": f"{probe.key}.hip", "log": f"{probe.key}.log", "probed_at": now()}
    write_atomic(folder / record["source"], probe.source())
    if compiler is None:
        write_atomic(folder / record["log"], "no HIP compiler\n")
        record.update(status=INCONCLUSIVE, reason=f"no HIP compiler: hipcc is not on PATH; {INSTALL_HINT}",
                      compiler_message="")
    else:
        record.update(judge(probe, folder, compiler))
    save(folder, record)
    return record


def judge(probe: Probe, folder: Path, compiler: str) -> dict[str, Any]:
    """The verdict of one call shape: compile it; when that fails, compile the same kernel without the call so a
    broken frame or an unknown arch is never reported as an unavailable builtin."""
    result = compile_probe(compiler, folder / f"{probe.key}.hip", probe.arch, folder / f"{probe.key}.o")
    log = [log_text(result)]
    verdict: dict[str, Any] = {"command": result.command_line, "returncode": result.returncode,
                               "compiler_message": compiler_words(result)}
    if result.ok:
        verdict.update(status=AVAILABLE, reason=f"the call compiled for {probe.arch}")
    elif result.timed_out:
        verdict.update(status=INCONCLUSIVE, reason=f"the compiler ran past {COMPILE_TIMEOUT_S:.0f} s")
    elif result.returncode == MISSING_EXECUTABLE:
        verdict.update(status=INCONCLUSIVE, reason=f"{compiler} could not be run: {result.stderr.strip()[:200]}; "
                                                   f"{INSTALL_HINT}")
    elif rejected := arch_rejection(result, probe.arch):
        hint = DTK_HINT if is_hygon(probe.arch) else "pick an arch this compiler lists"
        verdict.update(status=INCONCLUSIVE, reason=f"the compiler does not know {probe.arch} ({rejected}); {hint}")
    else:
        frame = folder / f"{probe.key}.frame.hip"
        write_atomic(frame, probe.source(with_call=False))
        control = compile_probe(compiler, frame, probe.arch, folder / f"{probe.key}.frame.o")
        log.append("--- the same kernel without the call ---\n" + log_text(control))
        if control.ok:
            verdict.update(status=UNAVAILABLE, reason=f"the call does not compile for {probe.arch}; the same kernel "
                                                      "without it does")
        else:
            verdict.update(status=INCONCLUSIVE, reason=f"the probe kernel does not compile for {probe.arch} even "
                                                      f"without the call (check --prelude): {compiler_words(control)}")
    write_atomic(folder / f"{probe.key}.log", "\n".join(log))
    return verdict


def compile_probe(compiler: str, source: Path, arch: str, output: Path) -> ToolResult:
    result = run_tool([compiler, *COMPILE_FLAGS, f"--offload-arch={arch}", "-o", output, source],
                      timeout=COMPILE_TIMEOUT_S, env=HIP_ENV)
    output.unlink(missing_ok=True)  # the verdict is whether it compiled; the object itself is not evidence
    return result


def log_text(result: ToolResult) -> str:
    return f"$ {result.command_line}\nexit {result.returncode}\n{result.stdout}{result.stderr}"


def compiler_words(result: ToolResult) -> str:
    """The compiler's error lines (file paths shortened to the file name), or '' when it reported none."""
    lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if _ERROR_LINE_RE.search(line)]
    lines = [line for line in lines if not line.startswith(("1 error", "2 errors"))] or lines
    return "\n".join(re.sub(r"^\S*/([^/\s:]+:)", r"\1", line) for line in lines[:MAX_MESSAGE_LINES])


def arch_rejection(result: ToolResult, arch: str) -> str | None:
    base = arch.split(":", 1)[0]
    return next((line.strip() for line in result.stderr.splitlines()
                 if _ARCH_REJECTED_RE.search(line) and base in line), None)


def save(folder: Path, record: Mapping[str, Any]) -> None:
    """Keep the latest record per call shape, prelude and arch."""
    kept = [r for r in load_probes(folder)
            if (r.get("call"), r.get("prelude", ""), r.get("arch")) != (record["call"], record["prelude"],
                                                                         record["arch"])]
    write_atomic(folder / PROBES_NAME, json.dumps({"probes": [*kept, dict(record)]}, indent=2) + "\n")


def load_probes(folder: Path) -> list[dict[str, Any]]:
    path = folder / PROBES_NAME
    if not path.is_file():
        return []
    try:
        return list(json.loads(path.read_text()).get("probes", []))
    except (json.JSONDecodeError, AttributeError):
        return []


def passing_probe(probes: Iterable[Mapping[str, Any]], call: str, arch: str | None) -> Mapping[str, Any] | None:
    """The `available` probe of `call` for `arch` (any arch when `arch` is not a gfx target), or None."""
    wanted = _normalized(call)
    base = (arch or "").split(":", 1)[0]
    for probe in probes:
        if _normalized(str(probe.get("call", ""))) != wanted or probe.get("status") != AVAILABLE:
            continue
        if not base.startswith("gfx") or str(probe.get("arch", "")).split(":", 1)[0] == base:
            return probe
    return None


def latest_probe(probes: Sequence[Mapping[str, Any]], call: str) -> Mapping[str, Any] | None:
    found = [p for p in probes if _normalized(str(p.get("call", ""))) == _normalized(call)]
    return found[-1] if found else None


def _normalized(call: str) -> str:
    return re.sub(r"\s+", "", call).rstrip(";")


def describe(record: Mapping[str, Any]) -> str:
    message = record.get("compiler_message") if record["status"] != AVAILABLE else ""
    words = "".join(f"\n    {line}" for line in (message or "").splitlines())
    return f"{record['arch']}: {record['status']}: {record['call']} - {record['reason']}{words}"
