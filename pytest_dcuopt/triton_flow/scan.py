"""`dcuopt triton scan`: which memory instructions a kernel's machine code uses, and how wide they are.

Input: AMDGCN assembly (`.amdgcn`, `.s`, `.isa`: Triton's own `amdgcn` stage), NVIDIA SASS (`.sass`, a
`cuobjdump --dump-sass` listing) or a `.cubin` (dumped here with Triton's bundled cuobjdump or one on PATH). A
folder is scanned file by file. Lines are read with the ISA package's parsers (isa.instruction_lines) and split per
function with its splitters, so the scan sees exactly what an `isa` mark would see; the registry's method
signatures (isa/data/isa_signatures.json) are evaluated on each function too, through isa.checks.

What is counted, per function:
* memory operations by space (buffer / global / flat / scratch / LDS on AMD; global / generic / shared /
  local on NVIDIA), direction (load / store / atomic) and width in bits;
* atomics, matrix instructions (MFMA/WMMA/MMAC, HMMA/HGMMA), waits and barriers by mnemonic.
The verdict names the path that carries most global-memory traffic (buffer vs global vs flat) and the widest
access seen. PTX is virtual ISA: it is not scanned (the SASS built from it is).
"""
from __future__ import annotations

import fnmatch
import re
import shlex
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..external_tools import run_tool
from ..isa.checks import PASS, evaluate
from ..isa.functions import split_asm
from ..isa.instruction_lines import instructions
from ..isa.model import Instruction, IsaDump
from ..isa.sass import split_sass
from ..isa.signature_registry import Registry, SignatureFileError, load
from ..isa.spec import IsaSpec
from ..toolchains.cuda import beside_on_path, cuobjdump_missing, find_cuobjdump
from ..toolchains.hip import is_hygon
from .flow_files import FlowError

AMD_SUFFIXES = (".amdgcn", ".s", ".isa")
SASS_SUFFIXES = (".sass",)
CUBIN_SUFFIXES = (".cubin",)
SCANNED_SUFFIXES = (*AMD_SUFFIXES, *SASS_SUFFIXES, *CUBIN_SUFFIXES)

# AMDGCN: <space>_<op><rest>, e.g. buffer_load_dwordx4, global_store_b128, ds_read_b64, global_atomic_add_f32.
_AMD_MEMORY_RE = re.compile(r"^(?P<space>buffer|global|flat|scratch|ds)_(?P<op>load|store|read|write|atomic)"
                            r"(?P<rest>\w*)$")
_AMD_OPS = {"load": "load", "read": "load", "store": "store", "write": "store", "atomic": "atomic"}
_AMD_SPACES = {"ds": "lds"}
_AMD_MATRIX_RE = re.compile(r"^v_(?:mfma|smfmac|wmma|swmmac|mmac)_")
_AMD_WAIT_RE = re.compile(r"^s_waitcnt")
_AMD_BARRIER_RE = re.compile(r"^s_barrier")
_AMD_WIDTHS = ((re.compile(r"dwordx(\d)"), 32), (re.compile(r"(?<![a-z])dword(?!x)"), 32), (re.compile(r"_b(\d+)"), 1),
               (re.compile(r"(?:byte|_[ui]8)"), 8), (re.compile(r"(?:short|_[ui]16|_d16)"), 16))

# SASS: the mnemonic's first word names the operation; a .64/.128 (or .U8/.S16...) modifier gives the width.
_SASS_MEMORY = {"LDG": ("global", "load"), "STG": ("global", "store"), "LD": ("generic", "load"),
                "ST": ("generic", "store"), "LDS": ("shared", "load"), "STS": ("shared", "store"),
                "LDSM": ("shared", "load"), "LDL": ("local", "load"), "STL": ("local", "store"),
                "LDGSTS": ("global", "load"), "ATOMG": ("global", "atomic"), "ATOM": ("generic", "atomic"),
                "RED": ("global", "atomic"), "REDG": ("global", "atomic"), "ATOMS": ("shared", "atomic")}
_SASS_MATRIX = ("HMMA", "HGMMA", "IMMA", "IGMMA", "DMMA", "BMMA", "QGMMA", "OMMA", "UTCHMMA", "UTCQMMA")
_SASS_WAITS = ("DEPBAR", "LDGDEPBAR")
_SASS_BARRIERS = ("BAR", "BSYNC", "WARPSYNC", "MEMBAR")
_SASS_WIDTH_RE = re.compile(r"\.(?:(?P<bits>64|128)|(?P<small>[US](?:8|16)))(?:\.|$)")

# Global-memory spaces whose balance the verdict reports, per family.
GLOBAL_PATHS = {"amdgcn": ("buffer", "global", "flat"), "sass": ("global", "generic")}
# `.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"` (LLVM) or "amdgpu9.42-amd-amdhsa-unknown-gfx942" (Triton 3.9).
_AMDGCN_TARGET_RE = re.compile(r'\.amdgcn_target\s+"[^"]*?-(?P<arch>gfx[0-9a-f]+)[:"]')
_SASS_ARCH_RE = re.compile(r"^\s*(?:arch\s*=|code for|\.target)\s+(?P<arch>sm_\w+)", re.M)


@dataclass(frozen=True)
class MemoryOp:
    space: str
    op: str
    width_bits: int | None


@dataclass
class FunctionScan:
    """The instruction families of one function."""

    function: str
    family: str
    arch: str | None
    instructions: int
    memory: Counter[MemoryOp] = field(default_factory=Counter)
    atomics: Counter[str] = field(default_factory=Counter)
    matrix: Counter[str] = field(default_factory=Counter)
    waits: Counter[str] = field(default_factory=Counter)
    barriers: Counter[str] = field(default_factory=Counter)
    signatures: list[str] = field(default_factory=list)  # registry methods whose signature is present

    def by_space(self, op: str | None = None) -> Counter[str]:
        return Counter({space: sum(n for m, n in self.memory.items() if m.space == space and op in (None, m.op))
                        for space in sorted({m.space for m in self.memory})})

    def verdict(self) -> dict[str, Any]:
        paths = GLOBAL_PATHS["sass" if self.family == "sass" else "amdgcn"]
        counts = {space: n for space, n in self.by_space().items() if space in paths}
        total = sum(counts.values())
        dominant = max(counts, key=lambda s: counts[s]) if total else None
        widths = [m.width_bits for m in self.memory if m.space in paths and m.width_bits is not None]
        return {"global_memory_ops": total, "by_path": counts, "dominant_path": dominant,
                "dominant_share": round(counts[dominant] / total, 3) if dominant else None,
                "widest_bits": max(widths, default=None), "wide_128bit": any(w >= 128 for w in widths),
                "atomics": sum(self.atomics.values()), "matrix_ops": sum(self.matrix.values())}

    def to_json(self) -> dict[str, Any]:
        memory = [{"space": m.space, "op": m.op, "width_bits": m.width_bits, "count": n}
                  for m, n in sorted(self.memory.items(), key=lambda item: (item[0].space, item[0].op,
                                                                             item[0].width_bits or 0))]
        return {"function": self.function, "family": self.family, "arch": self.arch,
                "instructions": self.instructions, "memory": memory, "atomics": dict(self.atomics),
                "matrix": dict(self.matrix), "waits": dict(self.waits), "barriers": dict(self.barriers),
                "signatures": self.signatures, "verdict": self.verdict()}


def amd_width(rest: str) -> int | None:
    """Bits per lane from an AMDGCN memory mnemonic's tail (`_dwordx4` -> 128, `_b64` -> 64, `_ubyte` -> 8)."""
    for pattern, scale in _AMD_WIDTHS:
        found = pattern.search(rest)
        if found:
            return int(found.group(1)) * scale if found.groups() else scale
    return None


def classify_amdgcn(found: Iterable[Instruction], scan: FunctionScan) -> None:
    for ins in found:
        name = ins.mnemonic
        memory = _AMD_MEMORY_RE.match(name)
        if memory:
            space = _AMD_SPACES.get(memory.group("space"), memory.group("space"))
            op = _AMD_OPS[memory.group("op")]
            scan.memory[MemoryOp(space, op, None if op == "atomic" else amd_width(memory.group("rest")))] += 1
            if op == "atomic":
                scan.atomics[name] += 1
        elif _AMD_MATRIX_RE.match(name):
            scan.matrix[name] += 1
        elif _AMD_WAIT_RE.match(name):
            scan.waits[name] += 1
        elif _AMD_BARRIER_RE.match(name):
            scan.barriers[name] += 1


def sass_width(mnemonic: str) -> int:
    found = _SASS_WIDTH_RE.search(mnemonic)
    if found is None:
        return 32
    return int(found.group("bits")) if found.group("bits") else int(found.group("small")[1:])


def classify_sass(found: Iterable[Instruction], scan: FunctionScan) -> None:
    for ins in found:
        name = ins.mnemonic
        head = name.split(".")[0]
        if head in _SASS_MEMORY:
            space, op = _SASS_MEMORY[head]
            scan.memory[MemoryOp(space, op, None if op == "atomic" else sass_width(name))] += 1
            if op == "atomic":
                scan.atomics[name] += 1
        elif head in _SASS_MATRIX:
            scan.matrix[name] += 1
        elif head in _SASS_WAITS or name.startswith("WARPGROUP.DEPBAR"):
            scan.waits[name] += 1
        elif head in _SASS_BARRIERS:
            scan.barriers[name] += 1


def scan_function(name: str, text: str, family: str, arch: str | None) -> FunctionScan:
    found = instructions(text, family)
    scan = FunctionScan(name, family, arch, len(found))
    (classify_sass if family == "sass" else classify_amdgcn)(found, scan)
    return scan


def registry_or_reason() -> tuple[Registry | None, str]:
    """The ISA signature registry, or why it cannot be read here (it needs jsonschema to validate)."""
    try:
        return load(), ""
    except (SignatureFileError, ImportError) as exc:
        return None, f"the ISA signature registry was not read ({type(exc).__name__}: {exc})"


def signatures_present(dump: IsaDump, function: str, registry: Registry) -> list[str]:
    """Registry methods whose instruction signature this function shows (isa.checks decides, as for a mark)."""
    methods = tuple(m for m, method in registry.methods.items()
                    if dump.family in method.families and method.families[dump.family].groups)
    verdict = evaluate(IsaSpec(methods=methods, functions=(function,)), dump, function, registry)
    return [check.subject for check in verdict.checks if check.kind == "method" and check.outcome == PASS]


@dataclass
class FileScan:
    path: Path
    family: str
    arch: str | None
    functions: dict[str, str]
    tool: str = ""
    error: str = ""


def read_listing(path: Path) -> FileScan:
    """The per-function text of one file (cubins are dumped first)."""
    suffix = path.suffix.lower()
    if suffix in CUBIN_SUFFIXES:
        tool = find_cuobjdump()
        if tool is None:
            return FileScan(path, "sass", None, {}, error=f"{cuobjdump_missing()}; or scan the .sass listing instead")
        result = run_tool([tool, "--dump-sass", str(path)], timeout=120, env=beside_on_path(tool))
        command = shlex.join(result.command)  # the tool and its arguments, not the PATH it ran with
        if not result.ok:
            return FileScan(path, "sass", None, {}, command,
                            f"cuobjdump failed (exit {result.returncode}): {result.stderr.strip()[-300:]}")
        return FileScan(path, "sass", sass_arch(result.stdout), split_sass(result.stdout), command)
    text = path.read_text(errors="replace")
    if suffix in SASS_SUFFIXES:
        return FileScan(path, "sass", sass_arch(text), split_sass(text))
    found = _AMDGCN_TARGET_RE.search(text)
    arch = found.group("arch") if found else None
    # A Hygon listing is the "dcu" family: its MMAC and matrix-read instructions are signatures only there.
    return FileScan(path, "dcu" if is_hygon(arch) else "amdgcn", arch, split_asm(text))


def sass_arch(text: str) -> str | None:
    found = _SASS_ARCH_RE.search(text)
    return found.group("arch") if found else None


def scan_files(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SCANNED_SUFFIXES)
        elif path.is_file():
            files.append(path)
        else:
            raise FlowError(f"scan: {path} does not exist; give an .amdgcn/.s/.sass/.cubin file or a folder of them "
                            "(e.g. the output of `dcuopt triton collect`)")
    return files


def scan(paths: Iterable[Path], kernel: str | None = None) -> dict[str, Any]:
    """The scan of every function in `paths` (only those matching `kernel`, a name or glob, when given)."""
    registry, registry_gap = registry_or_reason()
    functions: list[dict[str, Any]] = []
    files: list[dict[str, Any]] = []
    gaps = [registry_gap] if registry_gap else []
    for path in scan_files(paths):
        listing = read_listing(path)
        entry: dict[str, Any] = {"file": str(path), "family": listing.family, "arch": listing.arch,
                                 "functions": sorted(listing.functions)}
        if listing.tool:
            entry["tool"] = listing.tool
        if listing.error:
            entry["error"] = listing.error
            gaps.append(f"{path}: {listing.error}")
        files.append(entry)
        dump = IsaDump(listing.family, listing.arch, listing.tool or str(path), dict(listing.functions))
        for name, text in listing.functions.items():
            if kernel and not (name == kernel or fnmatch.fnmatchcase(name, kernel)):
                continue
            result = scan_function(name, text, listing.family, listing.arch)
            if registry is not None and result.instructions:
                result.signatures = signatures_present(dump, name, registry)
            functions.append({"file": str(path), **result.to_json()})
    if kernel and not functions:
        seen = sorted({f for entry in files for f in entry["functions"]})
        gaps.append(f"no function matches --kernel {kernel!r}; functions seen: {', '.join(seen) or 'none'}")
    return {"kernel_filter": kernel, "files": files, "functions": functions, "not_gathered": gaps,
            "note": "PTX is not scanned (virtual ISA); scan the SASS (.sass or .cubin) built from it"}


def describe(result: dict[str, Any]) -> list[str]:
    """The scan as a few lines a person reads in a terminal."""
    lines = []
    for entry in result["functions"]:
        verdict = entry["verdict"]
        memory = ", ".join(f"{m['space']}_{m['op']}" + (f"/{m['width_bits']}b" if m["width_bits"] else "")
                           + f" x{m['count']}" for m in entry["memory"]) or "no memory instructions"
        share = f" ({verdict['dominant_share']:.0%})" if verdict["dominant_path"] else ""
        lines.append(f"{entry['function']} [{entry['family']} {entry['arch'] or 'arch unknown'}]: "
                     f"{entry['instructions']} instructions; global memory via {verdict['dominant_path'] or 'none'}"
                     f"{share}, widest {verdict['widest_bits'] or '-'} bits; {memory}")
        extras = [f"{what}: " + ", ".join(f"{k} x{v}" for k, v in entry[what].items())
                  for what in ("atomics", "matrix", "waits") if entry[what]]
        if entry["signatures"]:
            extras.append("signatures: " + ", ".join(entry["signatures"]))
        lines += [f"  {extra}" for extra in extras]
    lines += [f"not gathered: {gap}" for gap in result["not_gathered"]]
    return lines
