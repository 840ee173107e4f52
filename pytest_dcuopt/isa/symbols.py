"""Function symbols: demangle C++ names (c++filt), re-key per-function data by them, and the bare name.

Shared by every family: the cuda toolchain names its SASS functions with `demangle` + `rename`, the
ISA observer fills `IsaDump.demangled`, and checks match and show functions by `base_name`.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeVar

from ..external_tools import run_tool, which

_TEMPLATE_ARGS_RE = re.compile(r"<[^<>]*>")
_ARCH_SUFFIX_RE = re.compile(r"\s+\[[^\]]*\]$")  # `name [sm_80]`: see `rename`
_ANONYMOUS_NAMESPACE = "(anonymous namespace)"

V = TypeVar("V")


def demangle(names: Iterable[str]) -> dict[str, str]:
    """{name: demangled name} for every name, through c++filt (binutils) or llvm-cxxfilt.

    A name that is not mangled, or that the tool cannot demangle, maps to itself; without either tool
    (or when it fails) every name maps to itself: the caller keeps the symbols, nothing is guessed.
    """
    names = list(dict.fromkeys(names))
    result = {name: name for name in names}
    mangled = [name for name in names if name.startswith("_Z")]
    tool = which("c++filt") or which("llvm-cxxfilt")
    if not mangled or tool is None:
        return result
    done = run_tool([tool], input_text="\n".join(mangled) + "\n", timeout=60)
    lines = done.stdout.splitlines()
    if done.ok and len(lines) == len(mangled):
        result.update(zip(mangled, lines, strict=True))
    return result


def rename(functions: Mapping[str, V], names: Mapping[str, str]) -> dict[str, V]:
    """Re-key a per-function mapping by demangled names (keeping the mangled key on a clash).

    A key may carry an architecture suffix (`name [sm_80]`), which the new key keeps.
    """
    renamed: dict[str, V] = {}
    for key, value in functions.items():
        base, _, suffix = key.partition(" [")
        new = names.get(base, base) + (f" [{suffix}" if suffix else "")
        renamed[new if new not in renamed else key] = value
    return renamed


def base_name(demangled: str) -> str:
    """The bare function name a person would type (and ncu's --kernel-name-base shows):
    `void dk::vadd4<256>(float4 const*, int)` -> `vadd4`, `ns::k<float, 4>(float const*)` -> `k`."""
    name = _ARCH_SUFFIX_RE.sub("", demangled).replace(_ANONYMOUS_NAMESPACE, "")
    previous = None
    while previous != name:  # drop template arguments, innermost first
        previous, name = name, _TEMPLATE_ARGS_RE.sub("", name)
    head = name.split("(", 1)[0].strip()  # no parameter list (nor the `const` after it)
    return head.split(" ")[-1].split("::")[-1]
