"""Hygon DCU: run `dccobjdump` and split what it prints into functions.

No verbatim dccobjdump listing is public (see docs/isa.md, "recorded vs real"), so the splitter
accepts every layout a DTK tool is known or likely to print, in this order:

1. objdump-style headers `0000000000001800 <symbol>:` (DTK's LLVM objdump prints these),
2. cuobjdump-style headers `Function : symbol` (dccobjdump copies cuobjdump's flag names),
3. assembly with `.type symbol,@function` declarations (a .ISA file holding a .s listing),
4. mangled C++ labels at column 0 (`_Z...:`).

When none is found the instructions are kept under one `<unsplit>` entry and the dump says
so: a check that names a function is then inconclusive, never silently whole-dump.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

from ..external_tools import ToolResult, run_tool
from .functions import split_asm, split_objdump, split_on_headers
from .instruction_lines import parse_amdgcn
from .model import UNSPLIT

_FUNCTION_HEADER_RE = re.compile(r"^\s*Function\s*:\s*(?P<name>\S+)\s*$", re.M)
_MANGLED_LABEL_RE = re.compile(r"^(?P<name>_Z[\w.$]+):", re.M)
# Side-effect files DTK writes next to (or into --output=) its working directory.
ISA_FILE_SUFFIXES = (".isa", ".sass", ".s")


def dccobjdump_command(tool: str, binary: Path, arch: str | None) -> list[str]:
    command = [tool, f"--inputs={binary}"]
    if arch:
        command.append(f"--architecture={arch.split(':', 1)[0]}")
    return [*command, "--show-sass", "--show-instruction-encoding", "--separate-functions"]


def run_dccobjdump(tool: str, binary: Path, arch: str | None, timeout: float = 120) -> tuple[ToolResult, str]:
    """Run dccobjdump in a scratch directory; return its result and stdout + every ISA file it wrote."""
    with tempfile.TemporaryDirectory(prefix="dcuopt_dccobjdump_") as scratch:
        result = run_tool(dccobjdump_command(tool, binary.resolve(), arch), timeout=timeout, cwd=scratch)
        parts = [result.stdout]
        for path in sorted(Path(scratch).rglob("*")):
            if path.is_file() and path.suffix.lower() in ISA_FILE_SUFFIXES and path.stat().st_size < 64 << 20:
                parts.append(f"\n# ---- {path.name} ----\n" + path.read_text(errors="replace"))
    return result, "\n".join(parts)


def split_listing(text: str) -> dict[str, str]:
    """Split a dccobjdump (or any AMDGCN) listing into {function: text}; see the module docstring."""
    for splitter in (split_objdump, _split_function_headers, split_asm, _split_mangled_labels):
        functions = {name: body for name, body in splitter(text).items() if parse_amdgcn(body)}
        if functions:
            return functions
    return {UNSPLIT: text} if parse_amdgcn(text) else {}


def _split_function_headers(text: str) -> dict[str, str]:
    return split_on_headers(_FUNCTION_HEADER_RE, text)


def _split_mangled_labels(text: str) -> dict[str, str]:
    return split_on_headers(_MANGLED_LABEL_RE, text)
