"""Config and hint variants of one Triton branch, declared in the branch and run as branches of their own.

A `kernel.triton.py` may declare, at module level and as literals (read with `ast`: the branch is not imported
in the pytest process), the variants its launcher can run:

- `variants = {"b256_w4": {"BLOCK": 256, "num_warps": 4}, "no_buffer_ops": {"env": {"AMDGCN_USE_BUFFER_OPS": "0"}}}`:
  named variants; `dict(BLOCK=256)` is accepted for `{"BLOCK": 256}`;
- `configs = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4, num_stages=2), ...]`: autotune-style
  configs, named from their values (`m64_n64_w4_s2`);
- `variant_grid = {"BLOCK": [256, 1024], "num_warps": [4, 8]}`: every combination, named the same way.

Every key other than `env` is a keyword argument of `solve` (which must declare it with a default: the bare
branch runs with the defaults); `env` holds environment variables set in the worker and the compile before
anything is compiled (`AMDGCN_USE_BUFFER_OPS`). Variant `v` of branch `b` is the branch `b@v`; its source is
named `<branch folder>/@v/kernel.triton.py` (a path that does not exist: `split_variant_source` gives back the
file and the variant name).
"""
from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CaseError

VARIANT_MARK = "@"
DECLARATIONS = ("variants", "configs", "variant_grid")
ENV_KEY = "env"
#: Short names in generated variant names: num_warps=4 -> w4, BLOCK_M=64 -> m64.
_SHORT = {"num_warps": "w", "num_stages": "s", "num_ctas": "ctas", "waves_per_eu": "waves"}
_NAME_RE = re.compile(r"^[A-Za-z0-9_.+-]{1,60}$")


@dataclass(frozen=True)
class TritonVariant:
    """One declared variant: the launcher's keyword arguments and the environment it runs under."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    origin: str = "variants"  # which declaration it came from

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options), "env": dict(self.env), "origin": self.origin}


def variant_source(source: Path, name: str) -> Path:
    """The (non-existent) source path that names variant `name` of `source`; it keeps the `.triton.py` suffix."""
    return source.parent / f"{VARIANT_MARK}{name}" / source.name


def split_variant_source(path: Path) -> tuple[Path, str | None]:
    """(the branch's real file, the variant name) for a path from `variant_source`; (path, None) otherwise."""
    if path.parent.name.startswith(VARIANT_MARK):
        return path.parent.parent / path.name, path.parent.name[len(VARIANT_MARK):]
    return path, None


def declared_variants(source: Path) -> tuple[TritonVariant, ...]:
    """The variants `source` declares ((): none); CaseError naming the fix for a declaration that cannot be read."""
    try:
        tree = ast.parse(source.read_text(errors="replace"), filename=str(source))
    except SyntaxError:
        return ()  # the contract reports the syntax error with its line
    found: list[TritonVariant] = []
    for node in tree.body:
        target, value = _assignment(node)
        if target in DECLARATIONS and value is not None:
            found += _read_declaration(target, _literal(value, source, target), source)
    names = [v.name for v in found]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise CaseError(f"{source}: variant names {repeated} are declared twice (across {', '.join(DECLARATIONS)}); "
                        "give every variant its own name.")
    return tuple(found)


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """(name, value) of a module-level `name = value` or `name: type = value`; (None, None) otherwise."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def variant_named(source: Path, name: str) -> TritonVariant:
    for variant in declared_variants(source):
        if variant.name == name:
            return variant
    known = [v.name for v in declared_variants(source)]
    raise CaseError(f"{source}: no variant {name!r} is declared (declared: {known or 'none'}); the branch id "
                    f"`<branch>{VARIANT_MARK}<variant>` names one of the `variants`, `configs` or `variant_grid` "
                    "entries of the file.")


def check_against_launcher(variant: TritonVariant, tunables: Sequence[str], source: Path) -> None:
    """Every option must be a keyword of `solve` with a default (so the bare branch runs too)."""
    unknown = sorted(set(variant.options) - set(tunables))
    if unknown:
        raise CaseError(f"{source}: variant {variant.name!r} sets {unknown}, which `solve` does not take with a "
                        f"default (it does for: {sorted(tunables) or 'nothing'}). Add them to the launcher, e.g. "
                        f"`def solve(a, b, c, N, {unknown[0]}=...)`, and pass them on to the kernel launch.")


def _read_declaration(kind: str, value: Any, source: Path) -> list[TritonVariant]:
    if kind == "variants":
        if not isinstance(value, dict):
            raise CaseError(f"{source}: `variants` must be a dict {{name: {{option: value}}}}, e.g. "
                            "variants = {'b256_w4': {'BLOCK': 256, 'num_warps': 4}}; got " + type(value).__name__)
        return [_variant(str(name), options, source, kind) for name, options in value.items()]
    if kind == "configs":
        if not isinstance(value, list):
            raise CaseError(f"{source}: `configs` must be a list of triton.Config(...) (or dicts); got "
                            f"{type(value).__name__}")
        return [_variant(_generated_name(options), options, source, f"configs[{index}]")
                for index, options in enumerate(value)]
    if not isinstance(value, dict) or not all(isinstance(v, list) and v for v in value.values()):
        raise CaseError(f"{source}: `variant_grid` must map option names to non-empty lists, e.g. "
                        "variant_grid = {'BLOCK': [256, 1024], 'num_warps': [4, 8]}")
    keys = list(value)
    return [_variant(_generated_name(dict(zip(keys, combo, strict=True))), dict(zip(keys, combo, strict=True)),
                     source, "variant_grid") for combo in itertools.product(*value.values())]


def _variant(name: str, options: Any, source: Path, origin: str) -> TritonVariant:
    if not _NAME_RE.match(name):
        raise CaseError(f"{source}: variant name {name!r} ({origin}) is not a test id: use letters, digits and _ . + -")
    if not isinstance(options, dict) or not all(isinstance(k, str) for k in options):
        raise CaseError(f"{source}: variant {name!r} ({origin}) must be a dict of launcher options; got {options!r}")
    options = dict(options)
    env = options.pop(ENV_KEY, {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise CaseError(f"{source}: variant {name!r}: `env` must map variable names to strings, e.g. "
                        "{'AMDGCN_USE_BUFFER_OPS': '1'}; got " + repr(env))
    return TritonVariant(name, options, dict(env), origin)


def _generated_name(options: Mapping[str, Any]) -> str:
    parts = []
    for key, value in options.items():
        if key == ENV_KEY:
            continue
        short = _SHORT.get(key, key.lower().removeprefix("block_"))
        shown = {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value
        parts.append(f"{short}{shown}")
    return "_".join(parts) or "default"


def _literal(node: ast.expr, source: Path, what: str) -> Any:
    """A literal, where `dict(k=v)` and `triton.Config({...}, num_warps=4, num_stages=2)` count as literals."""
    if isinstance(node, ast.Call):
        called = ast.unparse(node.func)
        keywords = {k.arg: _literal(k.value, source, what) for k in node.keywords if k.arg is not None}
        if called == "dict" and not node.args:
            return keywords
        if called in ("triton.Config", "Config") and len(node.args) == 1:
            meta = _literal(node.args[0], source, what)
            if isinstance(meta, dict):
                return {**meta, **keywords}
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_literal(k, source, what): _literal(v, source, what) for k, v in zip(node.keys, node.values,
                                                                                    strict=True) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(item, source, what) for item in node.elts]
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise CaseError(f"{source}:{node.lineno}: `{what}` must be written as literals (numbers, strings, True/False, "
                        f"dicts, lists, dict(...), triton.Config(...)) so it can be read without importing the "
                        f"branch; `{ast.unparse(node)}` is not one.") from None
