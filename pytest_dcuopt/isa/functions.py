"""Split disassembler output into functions: listings with a header per function, and assembly (.s) files.

`split_on_headers` is the one splitter for every listing that prints a header line per function (a
regex with a `name` group): GNU and LLVM objdump's `<addr> <symbol>:` (x86, AMDGCN), cuobjdump's
`Function : symbol` (SASS, and dccobjdump's copy of it), mangled labels. The AMDGPU backend's .s
files declare functions with `.type X,@function` instead (`split_asm`).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

_OBJDUMP_HEADER_RE = re.compile(r"^[0-9a-fA-F]+ <(?P<name>[^>\n]+)>:[ \t]*$", re.M)
_ASM_FUNCTION_TYPE_RE = re.compile(r"^\s*\.type\s+(?P<name>[^\s,]+)\s*,\s*[@%]function\b", re.M)
_ASM_LABEL_RE = re.compile(r"^(?P<name>[^\s:;#]+):")
_ASM_END_RE = re.compile(r"^(?:\.Lfunc_end\d+:|\s*\.size\s+(?P<name>[^\s,]+)\s*,|\s*\.end_amdhsa_kernel\b)")


def headed_sections(header: re.Pattern[str], text: str) -> Iterator[tuple[str, str]]:
    """(name, raw text up to the next header) for each match of `header` (which has a `name` group)."""
    headers = list(header.finditer(text))
    for index, match in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        yield match.group("name"), text[match.end():end]


def split_on_headers(header: re.Pattern[str], text: str) -> dict[str, str]:
    """{name: body} of a listing with one `header` line per function; a name printed twice (two sections)
    keeps both bodies."""
    functions: dict[str, str] = {}
    for name, raw in headed_sections(header, text):
        body = raw.strip("\n")
        functions[name] = f"{functions[name]}\n{body}" if name in functions else body
    return functions


def split_objdump(text: str) -> dict[str, str]:
    """`objdump -d` text -> {symbol: body}; a symbol printed twice (two sections) keeps both bodies."""
    return split_on_headers(_OBJDUMP_HEADER_RE, text)


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
