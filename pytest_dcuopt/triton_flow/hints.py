"""`dcuopt triton inspect`: a Triton kernel's signature, pointer arguments and the hints the compiler gets.

From Python source (a hand-written kernel or Inductor's generated file, read with `ast`, never imported):
the `@triton.jit` functions and their parameters; for Inductor kernels the `triton_meta` of the decorator
(`signature`, and `configs` with the argument indices marked `tt.divisibility` / `tt.pointer_range`) and the
`inductor_meta` (kernel_name, mutated_arg_names); counts of `tl.load`, `tl.store`, `tl.atomic_*`, `tl.assume`,
`tl.multiple_of`, `tl.max_contiguous`, `tl.make_block_ptr`, `tl.dot`.

From Triton IR (`.ttir` / `.ttgir`): each `tt.func`'s arguments with their types and attributes, which is what
the compiler really specialised on (the JIT adds hints the source never states), and counts of loads, stores,
atomics, dots and assumes.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .flow_files import FlowError

TL_CALLS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas", "atomic_xchg", "atomic_and",
            "atomic_or", "atomic_xor", "assume", "multiple_of", "max_contiguous", "make_block_ptr", "dot")
HINTS = ("tt.divisibility", "tt.pointer_range")
IR_OPS = {"load": r"\btt\.load\b", "store": r"\btt\.store\b", "atomic": r"\btt\.atomic_\w+\b", "dot": r"\btt\.dot\b",
          "assume": r"\bllvm\.intr\.assume\b", "buffer_load": r"\bamdgpu\.buffer_load\b"}
_FUNC_RE = re.compile(r"tt\.func\s+(?:public\s+|private\s+)?@(?P<name>[\w.$]+)\(")
_ARG_RE = re.compile(r"^%(?P<name>[\w.$]+)\s*:\s*(?P<type>.+?)\s*(?:\{(?P<attrs>[^{}]*)\})?\s*(?:loc\(.*\))?$", re.S)
_ATTR_RE = re.compile(r"(?P<key>[\w.]+)\s*=\s*(?P<value>[^,:]+?)\s*(?::\s*\w+)?(?:,|$)")


def inspect_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FlowError(f"inspect: {path} does not exist; give a Triton .py file (a captured kernel, Inductor's "
                        "generated source) or a .ttir/.ttgir from `dcuopt triton collect`")
    text = path.read_text(errors="replace")
    if path.suffix in (".ttir", ".ttgir"):
        return {"file": str(path), "kind": path.suffix[1:], "kernels": ir_functions(text), "counts": ir_counts(text)}
    return {"file": str(path), "kind": "python", **python_kernels(text, str(path))}


# ----- Triton IR ------------------------------------------------------------------------------------------------
def _balanced(text: str, start: int) -> str:
    """The text from `start` (just after an opening parenthesis) to its matching closing one."""
    depth, index = 1, start
    while index < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        index += 1
    return text[start:index - 1]


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += 1 if char in "(<{[" else -1 if char in ")>}]" else 0
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    tail = "".join(current).strip()
    return [*parts, tail] if tail else parts


def ir_attributes(text: str) -> dict[str, str]:
    return {m.group("key"): m.group("value").strip() for m in _ATTR_RE.finditer(text or "")}


def ir_functions(text: str) -> list[dict[str, Any]]:
    functions = []
    for found in _FUNC_RE.finditer(text):
        args = []
        for index, raw in enumerate(_split_top(_balanced(text, found.end()))):
            arg = _ARG_RE.match(raw)
            if arg is None:
                continue
            attrs = ir_attributes(arg.group("attrs") or "")
            pointer = arg.group("type").startswith("!tt.ptr")
            args.append({"index": index, "name": arg.group("name"), "type": arg.group("type"), "pointer": pointer,
                         "divisibility": _int(attrs.get("tt.divisibility")),
                         "pointer_range": _int(attrs.get("tt.pointer_range"))})
        functions.append({"name": found.group("name"), "args": args, "hint_status": hint_status(args)})
    return functions


def ir_counts(text: str) -> dict[str, int]:
    return {name: len(re.findall(pattern, text)) for name, pattern in IR_OPS.items()}


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().isdigit() else None


def hint_status(args: list[dict[str, Any]]) -> dict[str, Any]:
    pointers = [a for a in args if a["pointer"]]
    return {"pointers": len(pointers),
            "with_divisibility": sum(1 for a in pointers if a["divisibility"]),
            "with_pointer_range": sum(1 for a in pointers if a["pointer_range"]),
            "missing_divisibility": [a["name"] for a in pointers if not a["divisibility"]],
            "missing_pointer_range": [a["name"] for a in pointers if not a["pointer_range"]]}


# ----- Python source --------------------------------------------------------------------------------------------
def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr in ("jit", "autotune", "heuristics")) or (
        isinstance(target, ast.Name) and target.id == "jit")


def _keyword_dict(decorators: list[ast.expr], name: str) -> ast.Dict | None:
    for decorator in decorators:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == name and isinstance(keyword.value, ast.Dict):
                    return keyword.value
    return None


def _literal_items(node: ast.Dict | None) -> dict[str, Any]:
    """The entries of a dict display whose key and value are literals (others, like DeviceProperties(...), skipped)."""
    found: dict[str, Any] = {}
    for key, value in zip(node.keys if node else [], node.values if node else [], strict=True):
        if key is None:  # a `**mapping` entry
            continue
        try:
            found[str(ast.literal_eval(key))] = ast.literal_eval(value)
        except ValueError:
            continue
    return found


def hinted_indices(configs: Any) -> dict[str, list[int]]:
    """Argument indices per hint from Inductor's `configs` ([{(0,): [['tt.divisibility', 16]], ...}])."""
    found: dict[str, set[int]] = {hint: set() for hint in HINTS}
    for config in configs if isinstance(configs, list) else []:
        for path, hints in config.items() if isinstance(config, dict) else []:
            for hint in hints:
                if isinstance(hint, (list, tuple)) and hint and hint[0] in found:
                    found[hint[0]].add(int(path[0]))
    return {hint: sorted(indices) for hint, indices in found.items()}


def python_kernels(text: str, where: str) -> dict[str, Any]:
    try:
        tree = ast.parse(text, where)
    except SyntaxError as exc:
        raise FlowError(f"inspect: {where} is not valid Python ({exc}); give the kernel's .py file") from None
    counts = Counter(node.func.attr for node in ast.walk(tree) if isinstance(node, ast.Call)
                     and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                     and node.func.value.id == "tl" and node.func.attr in TL_CALLS)
    kernels = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list)):
            continue
        triton_meta = _literal_items(_keyword_dict(node.decorator_list, "triton_meta"))
        inductor_meta = _literal_items(_keyword_dict(node.decorator_list, "inductor_meta"))
        signature = triton_meta.get("signature") or {a.arg: None for a in node.args.args}
        indices = hinted_indices(triton_meta.get("configs"))
        args = [{"index": i, "name": name, "type": kind, "pointer": str(kind).startswith("*"),
                 "divisibility": 16 if i in indices["tt.divisibility"] else None,
                 "pointer_range": 32 if i in indices["tt.pointer_range"] else None}
                for i, (name, kind) in enumerate(signature.items())]
        kernels.append({"name": node.name, "args": args, "hint_status": hint_status(args) if triton_meta else None,
                        "mutated_arg_names": inductor_meta.get("mutated_arg_names", []),
                        "inductor_kernel_name": inductor_meta.get("kernel_name")})
    notes = [] if any(k["hint_status"] for k in kernels) else [
        "no triton_meta in the source: the hints are what the JIT adds at launch; inspect the .ttir to see them"]
    return {"kernels": kernels, "counts": {name: counts.get(name, 0) for name in TL_CALLS}, "notes": notes}


def describe(result: dict[str, Any]) -> list[str]:
    lines = []
    for kernel in result["kernels"]:
        pointers = [a for a in kernel["args"] if a["pointer"]]
        shown = ", ".join(f"{a['name']}:{a['type']}" + (f" [div={a['divisibility'] or '-'} range="
                                                         f"{a['pointer_range'] or '-'}]" if a["pointer"] else "")
                          for a in kernel["args"])
        lines.append(f"{kernel['name']} ({result['kind']}): {len(pointers)} pointer(s); {shown}")
    used = {k: v for k, v in result["counts"].items() if v}
    lines.append("uses: " + (", ".join(f"{k} x{v}" for k, v in used.items()) or "none of the counted calls"))
    lines += [f"note: {n}" for n in result.get("notes", [])]
    return lines
