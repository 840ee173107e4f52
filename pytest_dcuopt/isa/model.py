"""The ISA model shared by every family: instructions, per-function dumps, and where they came from.

A dump is always scoped per function: `IsaDump.functions` maps a symbol to the text of that
function only (the `Toolchain.disassemble` contract). Checks never read the tool's whole
output, so symbol tables, resource listings or error text cannot satisfy a pattern.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ResourceUsage:
    """Per-function resources, as far as the toolchain can tell (None = unknown)."""

    function: str
    registers: int | None = None  # VGPRs on AMD, registers/thread on NVIDIA
    sgprs: int | None = None
    agprs: int | None = None
    shared_bytes: int | None = None  # LDS / shared memory per block
    scratch_bytes: int | None = None  # private/stack/local per thread
    spills: int | None = None
    occupancy: int | None = None
    source: str = ""

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


#: Every ISA family the project can produce. "dcu" is Hygon's gfx9-derived AMDGCN (gfx92x/93x/94x):
#: the same syntax, plus MMAC / matrix-read instructions upstream AMD parts do not have.
FAMILIES: tuple[str, ...] = ("x86", "amdgcn", "dcu", "sass")

#: A mark written for a family also applies to these families (a Hygon DCU runs AMDGCN code).
FAMILY_COVERS: Mapping[str, tuple[str, ...]] = {"x86": ("x86",), "amdgcn": ("amdgcn", "dcu"), "dcu": ("dcu",),
                                                "sass": ("sass",)}

#: A function that the dump could not separate from the rest of the code object.
UNSPLIT = "<unsplit>"


@dataclass(frozen=True)
class Instruction:
    """One machine instruction as the disassembler printed it, without address, encoding or comment."""

    mnemonic: str  # lower case for x86/AMDGCN; as printed (upper case, with modifiers) for SASS
    text: str  # normalised "mnemonic operands" (a SASS predicate is kept in front)
    line: int  # 1-based line number inside the function's text

    def __str__(self) -> str:
        return self.text


@dataclass
class IsaDump:
    """Per-function ISA of one artifact, plus everything needed to judge how far to trust it."""

    family: str
    arch: str | None
    tool: str  # the exact command line(s) that produced the text, "; "-separated
    functions: dict[str, str] = field(default_factory=dict)
    resources: dict[str, ResourceUsage] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # tool failures: a dump with errors is never trusted blindly
    notes: list[str] = field(default_factory=list)  # degradations said aloud (fallbacks, unsplit dumps)
    demangled: dict[str, str] = field(default_factory=dict)  # symbol -> demangled name
    recorded: bool = False  # True when the text is a recorded sample, not this machine's tool output

    @property
    def split(self) -> bool:
        """Whether the dump has real function boundaries."""
        return bool(self.functions) and UNSPLIT not in self.functions

    def display_name(self, symbol: str) -> str:
        return self.demangled.get(symbol, symbol)

    def to_json(self, include_text: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "family": self.family, "arch": self.arch, "tool": self.tool, "recorded": self.recorded,
            "errors": list(self.errors), "notes": list(self.notes),
            "functions": sorted(self.functions), "demangled": dict(self.demangled),
            "resources": {name: usage.to_json() for name, usage in sorted(self.resources.items())},
        }
        if include_text:
            data["text"] = {name: _clip(text) for name, text in sorted(self.functions.items())}
        return data


def _clip(text: str, limit: int = 400_000) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [{len(text) - limit} more characters not stored]"
