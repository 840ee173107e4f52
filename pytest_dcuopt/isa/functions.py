"""Split disassembler output into functions: objdump listings and compiler assembly (.s) files.

Shared by the x86 and AMDGCN families: GNU and LLVM objdump print the same `<addr> <symbol>:`
headers, and the AMDGPU backend's .s files declare functions with `.type X,@function`.
"""
from __future__ import annotations

import re

_OBJDUMP_HEADER_RE = re.compile(r"^[0-9a-fA-F]+ <(?P<name>[^>\n]+)>:[ \t]*$", re.M)
_ASM_FUNCTION_TYPE_RE = re.compile(r"^\s*\.type\s+(?P<name>[^\s,]+)\s*,\s*[@%]function\b", re.M)
_ASM_LABEL_RE = re.compile(r"^(?P<name>[^\s:;#]+):")
_ASM_END_RE = re.compile(r"^(?:\.Lfunc_end\d+:|\s*\.size\s+(?P<name>[^\s,]+)\s*,|\s*\.end_amdhsa_kernel\b)")


def split_objdump(text: str) -> dict[str, str]:
    """`objdump -d` text -> {symbol: body}; a symbol printed twice (two sections) keeps both bodies."""
    functions: dict[str, str] = {}
    headers = list(_OBJDUMP_HEADER_RE.finditer(text))
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        body = text[header.end():end].strip("\n")
        name = header.group("name")
        functions[name] = f"{functions[name]}\n{body}" if name in functions else body
    return functions


def split_asm(text: str) -> dict[str, str]:
    """A compiler .s file -> {function: the lines from its label to its end marker}.

    Functions are the symbols declared with `.type X,@function`; the body runs from the line
    `X:` to `.Lfunc_endN:` / `.size X, ...` (whichever comes first) or to the next function.
    """
    declared = {m.group("name") for m in _ASM_FUNCTION_TYPE_RE.finditer(text)}
    functions: dict[str, str] = {}
    current: str | None = None
    body: list[str] = []
    for line in text.splitlines():
        label = _ASM_LABEL_RE.match(line)
        if label and label.group("name") in declared:
            _close(functions, current, body)
            current, body = label.group("name"), []
            continue
        if current is not None and _ASM_END_RE.match(line):
            _close(functions, current, body)
            current, body = None, []
            continue
        if current is not None:
            body.append(line)
    _close(functions, current, body)
    return functions


def _close(functions: dict[str, str], name: str | None, body: list[str]) -> None:
    if name is None:
        return
    text = "\n".join(body).strip("\n")
    functions[name] = f"{functions[name]}\n{text}" if name in functions else text
