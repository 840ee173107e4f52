"""Instruction lines per family: strip addresses, encodings and comments; keep mnemonic + operands.

Each `parse_<family>(text)` accepts any text (tool output, assembly, garbage) and returns the
instructions it recognises; it never raises. Lines that are not instructions (labels,
directives, headers, blank lines) are skipped.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from .model import Instruction

# ---- AMDGCN / DCU ------------------------------------------------------------------------------
# Instruction prefixes of GCN/CDNA/RDNA and Hygon DCU (matrix_/tensor_/multimem_ are DCU-only).
_AMD_MNEMONIC_RE = re.compile(
    r"^(?P<m>(?:s|v|ds|buffer|tbuffer|flat|global|scratch|image|matrix|tensor|multimem|smem|exp)_[a-z0-9_.]+|exp)"
    r"(?=\s|$)(?P<ops>.*)$", re.I)
_BLOCK_COMMENT_RE = re.compile(r"/\*.*?\*/")
_LINE_COMMENT_RE = re.compile(r"(?://|;|#).*$")
# A leading address ("0x1884:", "1884:", "/*1884*/" was removed above) and raw encoding words
# (8 or 16 hex digits), as printed by objdump-like tools with --show-instruction-encoding.
_AMD_ADDRESS_RE = re.compile(r"^(?:0x)?[0-9a-f]+:\s*", re.I)
_AMD_ENCODING_RE = re.compile(r"^(?:(?:0x)?[0-9a-f]{8}(?:[0-9a-f]{8})?\s+)+", re.I)


def parse_amdgcn(text: str) -> list[Instruction]:
    """AMDGCN from llvm-objdump -d, a compiler .s file, or (permissively) dccobjdump's listing."""
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _LINE_COMMENT_RE.sub("", _BLOCK_COMMENT_RE.sub(" ", raw)).strip()
        if not line or line.endswith(":") or line.startswith("."):
            continue
        line = _AMD_ENCODING_RE.sub("", _AMD_ADDRESS_RE.sub("", line, count=1), count=1)
        match = _AMD_MNEMONIC_RE.match(line)
        if match:
            mnemonic = match.group("m").lower()
            operands = " ".join(match.group("ops").split())
            found.append(Instruction(mnemonic, f"{mnemonic} {operands}".strip(), number))
    return found


# ---- x86 (GNU / LLVM objdump -d, Intel or AT&T syntax) -----------------------------------------
_X86_LINE_RE = re.compile(r"^\s*[0-9a-f]+:\t(?:(?:[0-9a-f]{2} )+\s*\t?)?(?P<ins>[a-z].*)$", re.I)
_X86_PREFIXES = frozenset({"lock", "rep", "repe", "repz", "repne", "repnz", "bnd", "notrack", "data16", "addr32",
                           "cs", "ds", "es", "fs", "gs", "ss", "xacquire", "xrelease"})
_X86_COMMENT_RE = re.compile(r"\s+#.*$")
_X86_MNEMONIC_RE = re.compile(r"^[a-z][a-z0-9.]*$", re.I)


def parse_x86(text: str) -> list[Instruction]:
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        match = _X86_LINE_RE.match(raw)
        if not match:
            continue
        ins = " ".join(_X86_COMMENT_RE.sub("", match.group("ins")).split())
        words = ins.split(" ")
        index = 0
        while index < len(words) - 1 and words[index].lower() in _X86_PREFIXES:
            index += 1
        mnemonic = words[index].lower()
        if ins.startswith("(bad)") or not _X86_MNEMONIC_RE.match(mnemonic):
            continue
        found.append(Instruction(mnemonic, ins, number))
    return found


# ---- SASS (cuobjdump -sass / nvdisasm) ---------------------------------------------------------
_SASS_PREDICATE_RE = re.compile(r"^@!?U?P(?:[0-7]|T)\s+")
# Modifiers may hold lower case: sm_90's HGMMA.64x64x16.F32 names its tile shape with `x`.
_SASS_MNEMONIC_RE = re.compile(r"^(?P<m>[A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?=\s|$)(?P<ops>.*)$")


def parse_sass(text: str) -> list[Instruction]:
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _BLOCK_COMMENT_RE.sub(" ", raw).replace("{", " ").replace("}", " ").strip().rstrip(";").strip()
        if not line or line.endswith(":") or line.startswith((".", "Function", "--", "code for", "Fatbin", "arch")):
            continue
        predicate = _SASS_PREDICATE_RE.match(line)
        body = line[predicate.end():] if predicate else line
        match = _SASS_MNEMONIC_RE.match(body)
        if match:
            operands = " ".join(match.group("ops").split())
            prefix = predicate.group(0).strip() + " " if predicate else ""
            found.append(Instruction(match.group("m"), f"{prefix}{match.group('m')} {operands}".strip(), number))
    return found


PARSERS: dict[str, Callable[[str], list[Instruction]]] = {
    "x86": parse_x86, "amdgcn": parse_amdgcn, "dcu": parse_amdgcn, "sass": parse_sass,
}


def instructions(text: str, family: str) -> list[Instruction]:
    """The instructions in `text`, read with the parser of `family`."""
    try:
        parser = PARSERS[family]
    except KeyError:
        raise ValueError(f"unknown ISA family {family!r}; known families: {', '.join(PARSERS)}") from None
    return parser(text)
