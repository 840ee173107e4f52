"""HIP's own NVIDIA-platform headers, made to compile with the installed nvcc.

A `.hip` kernel builds for NVIDIA GPUs by compiling it as CUDA with `-D__HIP_PLATFORM_NVIDIA__`
against HIP's headers: `hip/hip_runtime.h` then includes `hip/nvidia_detail/*`, which maps every
`hip*` call onto the CUDA runtime with inline wrappers. Debian ships these headers in
`libamdhip64-dev` (HIP 5.2.3, /usr/include/hip). They were written for CUDA 11: a few dozen inline
wrappers name CUDA APIs that CUDA 12/13 removed (texture references, `cudaDeviceProp::clockRate`,
the old graph-edge signatures...), so `#include <hip/hip_runtime.h>` fails under nvcc 13.

`compat_include_dir` makes a copy of the header tree in the build cache and repairs exactly the
statements that this nvcc rejects, found by compiling an include-only probe:

* a statement that reads a `cudaDeviceProp` member CUDA removed is dropped (the HIP field is left as is);
* any other rejected statement becomes `return hipErrorNotSupported;` (the wrapper now reports it);
* a template wrapper whose signature names CUDA's removed `texture<>` type is removed.

Every change is recorded in `compat.json` beside the copy and in each build's log; kernels that call
none of those wrappers (launches, memory, streams, events, device attributes) are unaffected.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ToolchainUnavailable
from ..external_tools import run_tool
from .build import cached_entry
from .cache import BuildCache

HIP_INCLUDE_ENV = "DCUOPT_HIP_INCLUDE"
NVIDIA_MACRO = "__HIP_PLATFORM_NVIDIA__"
_CANDIDATE_ROOTS = ("/opt/rocm/include", "/usr/include", "/usr/local/include")
_ERROR_LINE = re.compile(r"^(?P<file>[^\s(][^(\n]*)\((?P<line>\d+)\): error: (?P<message>.*)$", re.M)
_MAX_ROUNDS = 8
_PROBE = "#include <hip/hip_runtime.h>\n__global__ void dcuopt_probe_kernel(float* x) { x[threadIdx.x] = 0.f; }\n"


@dataclass(frozen=True)
class HipHeaders:
    """A usable include directory (holding `hip/`) and what was done to make it compile."""

    include_dir: Path
    origin: Path
    hip_version: str
    changes: tuple[dict[str, Any], ...]

    def describe(self) -> str:
        base = f"HIP {self.hip_version} NVIDIA-platform headers from {self.origin}"
        if not self.changes:
            return base + " (unchanged)"
        names = sorted({c["function"] for c in self.changes})
        return (f"{base}, {len(self.changes)} statement(s) in {len(names)} wrapper(s) adapted to this nvcc "
                f"(see {self.include_dir.parent / 'compat.json'}): {', '.join(names)}")


def find_hip_headers() -> Path | None:
    """The directory that holds `hip/hip_runtime.h` and HIP's NVIDIA-platform headers, or None."""
    candidates = []
    if os.environ.get(HIP_INCLUDE_ENV):
        candidates.append(Path(os.environ[HIP_INCLUDE_ENV]))
    for variable in ("HIP_PATH", "ROCM_PATH"):
        if os.environ.get(variable):
            candidates.append(Path(os.environ[variable]) / "include")
    candidates += [Path(p) for p in _CANDIDATE_ROOTS]
    for root in candidates:
        if (root / "hip/hip_runtime.h").is_file() and (root / "hip/nvidia_detail/nvidia_hip_runtime.h").is_file():
            return root
    return None


def missing_reason() -> str:
    return ("HIP's NVIDIA-platform headers (hip/hip_runtime.h + hip/nvidia_detail/) were not found in "
            f"${HIP_INCLUDE_ENV}, $HIP_PATH/include, $ROCM_PATH/include or {', '.join(_CANDIDATE_ROOTS)}. "
            f"Install them with `apt-get install libamdhip64-dev`, or copy a `hip/` header tree somewhere and "
            f"point {HIP_INCLUDE_ENV} at its parent directory.")


def compat_include_dir(nvcc: str, nvcc_identity: str, cache: BuildCache, arch: str) -> HipHeaders:
    """A copy of HIP's headers that this nvcc compiles, built once per (headers, nvcc) in `cache`."""
    origin = find_hip_headers()
    if origin is None:
        raise ToolchainUnavailable(missing_reason())
    digest = hashlib.sha256(nvcc_identity.encode())
    for path in sorted((origin / "hip").rglob("*.h")):
        digest.update(str(path.relative_to(origin)).encode())
        digest.update(path.read_bytes())
    key = "hip-nvidia-" + digest.hexdigest()[:20]

    def adapt_into(staging: Path) -> None:
        shutil.copytree(origin / "hip", staging / "include/hip", symlinks=True)
        changes = _repair(nvcc, staging, arch)
        report = {"origin": str(origin), "hip_version": _hip_version(origin), "nvcc": nvcc_identity, "changes": changes}
        (staging / "compat.json").write_text(json.dumps(report, indent=2) + "\n")

    found, _ = cached_entry(cache, key, "compat.json", adapt_into)
    return _load(found, origin)


def _load(report_path: Path, origin: Path) -> HipHeaders:
    report = json.loads(report_path.read_text())
    return HipHeaders(report_path.parent / "include", origin, report.get("hip_version", "?"),
                      tuple(report.get("changes", ())))


def _hip_version(root: Path) -> str:
    text = (root / "hip/hip_version.h").read_text(errors="replace") if (root / "hip/hip_version.h").is_file() else ""
    parts = [re.search(rf"#define HIP_VERSION_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) for m in parts if m) or "unknown"


def _repair(nvcc: str, staging: Path, arch: str) -> list[dict[str, Any]]:
    include = staging / "include"
    probe = staging / "probe.cu"
    probe.write_text(_PROBE)
    changes: list[dict[str, Any]] = []
    for _ in range(_MAX_ROUNDS):
        result = run_tool([nvcc, "-x", "cu", f"-D{NVIDIA_MACRO}", "-I", include, f"-arch={arch}", "-c", probe,
                           "-o", staging / "probe.o"], timeout=300)
        if result.ok:
            for leftover in (probe, staging / "probe.o"):
                leftover.unlink(missing_ok=True)
            return changes
        errors = _errors_by_file(result.stdout + result.stderr, include)
        if not errors:
            raise ToolchainUnavailable(
                f"HIP's NVIDIA headers do not compile with {nvcc}, and the errors are not in the headers "
                f"themselves, so they cannot be adapted.\ncommand: {result.command_line}\n{result.stderr[-3000:]}")
        for path, found in errors.items():
            text, made = repair_text(path.read_text(), found)
            if not made:
                raise ToolchainUnavailable(f"cannot adapt {path} to {nvcc}: errors {found[:5]}")
            path.write_text(text)
            changes += [{**c, "file": str(path.relative_to(include))} for c in made]
    raise ToolchainUnavailable(f"HIP's NVIDIA headers still fail with {nvcc} after {_MAX_ROUNDS} rounds of repairs; "
                               f"changes so far: {changes[:10]}")


def _errors_by_file(output: str, include: Path) -> dict[Path, list[tuple[int, str]]]:
    found: dict[Path, list[tuple[int, str]]] = {}
    root = include.resolve()
    for match in _ERROR_LINE.finditer(output):
        path = Path(match.group("file")).resolve()
        if root in path.parents:
            found.setdefault(path, []).append((int(match.group("line")), match.group("message").strip()))
    return found


def repair_text(text: str, errors: list[tuple[int, str]]) -> tuple[str, list[dict[str, Any]]]:
    """Apply the three repairs (see the module docstring) for `errors` = [(line, message)] to `text`."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    edits: dict[int, tuple[int, str, dict[str, Any]]] = {}  # start -> (end, replacement, change)
    for line, message in sorted(set(errors)):
        offset = line_starts[min(line, len(line_starts)) - 1]
        if "is not a template" in message:
            span = _definition_span(text, offset)
            if span:
                start, end = span
                name = _function_name(text[start:end])
                edits[start] = (end, f"/* dcuopt: removed {name}: it uses CUDA's texture<> references, "
                                     "which this CUDA no longer has */",
                                {"line": line, "function": name, "action": "removed wrapper", "error": message})
            continue
        start, end = _statement_span(text, offset)
        statement = " ".join(text[start:end].split())
        drop = "has no member" in message
        replacement = ("/* dcuopt: dropped, removed from cudaDeviceProp: " if drop else
                       "return hipErrorNotSupported; /* dcuopt: was: ") + statement.replace("*/", "* /") + " */"
        action = "dropped statement" if drop else "returns hipErrorNotSupported"
        edits.setdefault(start, (end, replacement, {"line": line, "function": _enclosing_function(text, start),
                                                    "action": action, "error": message}))
    kept = _non_overlapping(edits)
    for start in sorted(kept, reverse=True):
        end, replacement, _ = kept[start]
        text = text[:start] + replacement + text[end:]
    return text, [kept[s][2] for s in sorted(kept)]


def _non_overlapping(edits: dict[int, tuple[int, str, dict[str, Any]]]) -> dict[int, tuple[int, str, dict[str, Any]]]:
    kept: dict[int, tuple[int, str, dict[str, Any]]] = {}
    # Larger spans (whole removed wrappers) win over statements inside them.
    for start, value in sorted(edits.items(), key=lambda item: item[0] - item[1][0]):
        end = value[0]
        if all(end <= s or start >= e for s, (e, _, _) in kept.items()):
            kept[start] = value
    return kept


def _statement_span(text: str, offset: int) -> tuple[int, int]:
    """The statement that covers the line starting at `offset`: after the previous ; { } or case-label
    colon, up to and including the next ; at parenthesis depth 0."""
    position = offset + len(text[offset:]) - len(text[offset:].lstrip())
    start = position
    while start > 0:
        char = text[start - 1]
        if char in ";{}":
            break
        if char == ":" and text[start - 2:start] != "::" and text[start:start + 1] != ":":
            break
        start -= 1
    while start < len(text) and text[start].isspace():
        start += 1
    depth, end = 0, start
    while end < len(text):
        char = text[end]
        depth += char in "([{"
        depth -= char in ")]}"
        if char == ";" and depth <= 0:
            return start, end + 1
        end += 1
    return start, len(text)


def _definition_span(text: str, offset: int) -> tuple[int, int] | None:
    """A (template) function definition whose signature covers `offset`: its first line to its closing brace."""
    head = text.rfind("template", 0, offset + 1)
    if head < 0 or text.count("\n", head, offset) > 4:
        return None
    head = text.rfind("\n", 0, head) + 1
    brace = text.find("{", offset)
    if brace < 0:
        return None
    depth = 0
    for index in range(brace, len(text)):
        depth += text[index] == "{"
        depth -= text[index] == "}"
        if depth == 0:
            return head, index + 1
    return None


_NAME = re.compile(r"\b(hip\w+|cuda\w+)\s*\(")


def _function_name(signature: str) -> str:
    found = _NAME.search(signature)
    return found.group(1) if found else "?"


def _enclosing_function(text: str, offset: int) -> str:
    """Name of the innermost `... hipXxx(...) {` definition before `offset` (best effort, for the report)."""
    for match in reversed(list(re.finditer(r"^[^\n;]*\b(hip\w+)\s*\([^;{]*\)\s*\{", text[:offset], re.M))):
        return match.group(1)
    return "?"
