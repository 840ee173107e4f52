"""Parse the C ABI entry point `extern "C" void solve(...)` of a kernel source.

Rules: `const T*` is an input buffer, `T*` an output (or in/out) buffer, a scalar is a
dim or a scalar input. Handles `T *p`, `__restrict__`, `volatile`, names containing
`const`, fixed-width ints, half/bf16 pointers, comments and line breaks, and names the
exact parameter it cannot parse.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SignatureError

# C spelling (whitespace-normalised) -> numpy-style dtype name.
C_TYPES: dict[str, str] = {
    "float": "float32", "double": "float64",
    "half": "float16", "__half": "float16", "_Float16": "float16", "__fp16": "float16", "hip_half": "float16",
    "__hip_bfloat16": "bfloat16", "hip_bfloat16": "bfloat16", "__nv_bfloat16": "bfloat16", "__bf16": "bfloat16",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "nv_bfloat16": "bfloat16",
    "bool": "bool",
    "char": "int8", "signed char": "int8", "int8_t": "int8",
    "unsigned char": "uint8", "uint8_t": "uint8",
    "short": "int16", "short int": "int16", "signed short": "int16", "int16_t": "int16",
    "unsigned short": "uint16", "unsigned short int": "uint16", "uint16_t": "uint16",
    "int": "int32", "signed": "int32", "signed int": "int32", "int32_t": "int32",
    "unsigned": "uint32", "unsigned int": "uint32", "uint32_t": "uint32",
    "long": "int64", "long int": "int64", "long long": "int64", "long long int": "int64",
    "int64_t": "int64", "ptrdiff_t": "int64", "ssize_t": "int64", "intptr_t": "int64",
    "unsigned long": "uint64", "unsigned long int": "uint64", "unsigned long long": "uint64",
    "size_t": "uint64", "uint64_t": "uint64", "uintptr_t": "uint64",
}
# Words that qualify a declaration without changing its data type.
_QUALIFIERS = {"__restrict__", "__restrict", "restrict", "volatile", "register", "struct", "std::"}
_ENTRY_RE = re.compile(r"\bsolve\s*\(")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_:]*")


@dataclass(frozen=True)
class Param:
    """One parameter of `solve`."""

    name: str
    dtype: str
    pointer: bool
    const: bool
    declaration: str

    @property
    def is_integer(self) -> bool:
        return self.dtype.startswith(("int", "uint"))

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "dtype": self.dtype, "pointer": self.pointer, "const": self.const,
                "declaration": self.declaration}


def strip_comments(source: str) -> str:
    """Remove // and /* */ comments (multi-line too), keeping string literals intact."""
    pattern = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)
    return pattern.sub(lambda m: m.group(0) if m.group(0).startswith('"') else " ", source)


def parse_solve_signature(source: str, filename: str = "<source>") -> tuple[Param, ...]:
    """Return the parameters of `extern "C" void solve(...)` found in `source` (in a `.c` file, of `void solve(...)`).

    A source may name `solve` more than once: a C++ overload in a namespace, a prototype before the definition
    (whose parameters may be unnamed), a call. The entry point is the first `solve` with C linkage that is a
    definition, else the first one with C linkage."""
    text = strip_comments(source)
    matches = list(_ENTRY_RE.finditer(text))
    if not matches:
        raise SignatureError(
            f"{filename}: no `solve(` entry point found. The harness calls a C ABI function; "
            'add `extern "C" void solve(const float* x, float* y, int N)` (inputs const, outputs non-const, dims int).'
        )
    # A C source (`.c`, compiled as C, as compilers decide by the suffix) mangles no name: every `solve` is C's.
    linked = matches if filename.endswith(".c") else [m for m in matches if _has_c_linkage(text, m.start())]
    if not linked and 'extern "C"' in text[: matches[0].start()]:
        linked = matches[:1]  # e.g. a macro spelling `extern "C"` before the entry point
    if not linked:
        raise SignatureError(
            f'{filename}: `solve` is not declared extern "C", so its symbol is C++-mangled and cannot be loaded. '
            'Write `extern "C" void solve(...)`.'
        )
    pieces = _entry_pieces(text, linked, matches, filename)
    params = tuple(_parse_param(piece, index, filename) for index, piece in enumerate(pieces))
    _check_unique([p.name for p in params], filename)
    return params


def _entry_pieces(text: str, linked: list[re.Match[str]], matches: list[re.Match[str]], filename: str) -> list[str]:
    """The parameter declarations of the entry point: the first C-linkage `solve` that is a definition; else the
    definition at file scope, after a C-linkage prototype, with as many parameters (C++ gives it the prototype's
    linkage); else the first C-linkage declaration."""
    def pieces(match: re.Match[str]) -> tuple[list[str], bool]:
        body = _balanced_parenthesis(text, match.end() - 1, filename)
        found = [p.strip() for p in _split_top_level(body) if p.strip()]
        return ([] if found == ["void"] else found), _is_definition(text, match.end() + len(body) + 1)

    first = pieces(linked[0])[0]
    for match in linked:
        found, defined = pieces(match)
        if defined:
            return found
    for match in matches:
        if match.start() > linked[0].start() and _at_file_scope(text, match.start()):
            found, defined = pieces(match)
            if defined and len(found) == len(first):
                return found
    return first


_EXTERN_C_RE = re.compile(r'extern\s*"C"')


def _has_c_linkage(text: str, start: int) -> bool:
    """Whether the `solve` at `start` is declared with C linkage: `extern "C"` in its own declaration, or inside an
    `extern "C" { ... }` block (a call inside a function body, or an overload in a namespace, is not)."""
    statement = max(text.rfind(c, 0, start) for c in ";{}") + 1
    if _EXTERN_C_RE.search(text, statement, start):
        return True
    opened = _open_braces(text, start)
    return bool(opened) and all(_EXTERN_C_RE.search(text[:brace].rstrip()[-12:]) is not None for brace in opened)


def _at_file_scope(text: str, start: int) -> bool:
    """Outside every brace but those of `extern "C" { ... }` blocks (not in a namespace, a class or a body)."""
    return all(_EXTERN_C_RE.search(text[:brace].rstrip()[-12:]) is not None for brace in _open_braces(text, start))


def _open_braces(text: str, start: int) -> list[int]:
    """Positions of the braces still open at `start`."""
    opened: list[int] = []
    for match in re.finditer(r"[{}]", text[:start]):
        if match.group() == "{":
            opened.append(match.start())
        elif opened:
            opened.pop()
    return opened


def _is_definition(text: str, after: int) -> bool:
    """Whether the parameter list that closes just before `after` is followed by a body (`{`), not `;`."""
    rest = text[after:after + 400]
    brace, semicolon = rest.find("{"), rest.find(";")
    return brace >= 0 and (semicolon < 0 or brace < semicolon)


def _balanced_parenthesis(text: str, open_index: int, filename: str) -> str:
    depth = 0
    for index in range(open_index, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return text[open_index + 1:index]
    raise SignatureError(f"{filename}: the parameter list of `solve(` is never closed; check for a missing `)`.")


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in body:
        if char in "(<[":
            depth += 1
        elif char in ")>]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _parse_param(piece: str, index: int, filename: str) -> Param:
    declaration = " ".join(piece.split())
    if "=" in declaration:
        raise SignatureError(f"{filename}: parameter {index + 1} `{declaration}` has a default value; extern \"C\" "
                             "entry points cannot have one. Remove the `= ...`.")
    if "&" in declaration:
        raise SignatureError(f"{filename}: parameter {index + 1} `{declaration}` is a C++ reference, which ctypes "
                             "cannot pass. Use a pointer (`T*`) or a value.")
    spaced = declaration.replace("*", " * ").replace("[", " [ ").replace("]", " ] ")
    tokens = spaced.split()
    is_array = "[" in tokens
    tokens = [t for t in tokens if t not in ("[", "]") and not t.isdigit()]
    pointer_depth = tokens.count("*")
    if pointer_depth + is_array > 1:
        raise SignatureError(f"{filename}: parameter {index + 1} `{declaration}` is a pointer to pointer; the harness "
                             "passes flat buffers only. Use `T*` and index it.")
    pointer = pointer_depth == 1 or is_array
    words = [t for t in tokens if t != "*"]
    if _names_a_type(words):
        raise SignatureError(f"{filename}: parameter {index + 1} `{declaration}` has no name. The harness binds "
                             "parameters by name (dims, shapes, inputs): name every parameter of the definition, "
                             "e.g. `const float* x`.")
    if len(words) < 2 or not _IDENT_RE.fullmatch(words[-1]):
        raise SignatureError(f"{filename}: cannot find the type and name of parameter {index + 1} `{declaration}`; "
                             "write it as `const float* x`, `float* y` or `int N`.")
    name = words[-1]
    star = tokens.index("*") if pointer_depth else len(tokens)
    before_star = [t for t in tokens[:star] if t != name]
    const = pointer and "const" in before_star if pointer else False
    type_words = [w for w in words[:-1] if w not in _QUALIFIERS and w != "const"]
    type_words = [w.removeprefix("std::") for w in type_words]
    c_type = " ".join(type_words)
    dtype = C_TYPES.get(c_type)
    if dtype is None:
        raise SignatureError(
            f"{filename}: parameter {index + 1} `{declaration}` has type {c_type!r}, which the harness does not know. "
            f"Known types: {', '.join(sorted(set(C_TYPES)))}."
        )
    return Param(name=name, dtype=dtype, pointer=pointer, const=const, declaration=declaration)


def _names_a_type(words: list[str]) -> bool:
    """`const float*` or `unsigned int`: every word is part of the type, so the parameter has no name."""
    type_words = [w.removeprefix("std::") for w in words if w not in _QUALIFIERS and w != "const"]
    return " ".join(type_words) in C_TYPES


def _check_unique(names: list[str], filename: str) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise SignatureError(f"{filename}: parameter names {sorted(seen)} repeat in `solve`; give each a unique name.")
