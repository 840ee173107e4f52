"""The Triton branch contract: which launcher parameters are buffers, outputs, inputs and dims.

A Triton branch (`kernel.triton.py`) has no C signature, so its parameters come from two places read
without importing the branch (no triton import in the pytest process):

- the launcher `def solve(...)` of the branch (parsed with `ast`): the parameter names and their order; a
  parameter with a default that is neither a buffer nor a dim is a *tunable* (BLOCK, num_warps, a hint
  switch), left at its default unless a declared variant (toolchains/triton_variants.py) sets it;
- the case's ref.py: `shapes` (a name there is a buffer, passed as a torch tensor of that shape),
  `outputs` (the buffers the kernel writes; without it: every buffer not in `inputs`), `inputs`
  (value domains; an output listed there is in/out), `dtypes` (buffer dtypes, default float32),
  and dims.json (+ dims.triton.json): every other launcher parameter must be a dim (a scalar).

A launcher whose names are not the case's (`solve(x, y, out, n)` for a reference's `A, B, C, N`) is bound by
position, as a C ABI `solve` is (case/parameter_binding.py): the contract then speaks the reference's names and
keeps the launcher's own in `launcher_names`, which the call uses.

The contract is derived once at build time and stored beside the build as JSON; the worker binds
buffers from it (`params` gives the same `Param`s the C ABI parser gives, so `cabi_binding.CAbiBinding`
places the poison, guards and integrity checks exactly as for a C ABI kernel).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..case.buffers import resolve_shapes
from ..case.cabi import Param
from ..case.model import load_dims, load_toolchain_dims
from ..case.parameter_binding import ParameterBinding, bind_launcher
from ..case.ref_loader import import_ref_module, load_reference
from ..errors import CaseError, SignatureError

LAUNCHER = "solve"
TRITON_SUFFIX = ".triton.py"
#: dtype names a buffer may declare in ref.py `dtypes` (numpy spelling; torch has the same names).
BUFFER_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
DEFAULT_DTYPE = "float32"


@dataclass(frozen=True)
class TritonContract:
    """Everything the worker needs to call `solve(**params)` on guarded buffers (JSON-serialisable)."""

    source: str
    ref_path: str
    launcher: tuple[str, ...]  # solve's parameters, in order, by the case's names (the reference's)
    buffers: dict[str, str]  # buffer name -> dtype
    outputs: tuple[str, ...]
    outputs_source: str  # "ref.py outputs" or how they were derived
    default_dims: dict[str, Any]  # dims.json with dims.triton.json laid over it (the AOT trace uses these)
    tunables: tuple[str, ...] = ()  # solve's keyword parameters with defaults that are neither buffers nor dims
    variant: str | None = None  # the declared variant this build runs (None: the bare branch, solve's defaults)
    options: dict[str, Any] = field(default_factory=dict)  # keyword arguments the variant passes to solve
    env: dict[str, str] = field(default_factory=dict)  # environment the variant sets before anything compiles
    # Bound by position: the case's name -> the launcher's own name of that parameter (empty: bound by name).
    launcher_names: dict[str, str] = field(default_factory=dict)

    def call_name(self, name: str) -> str:
        """The launcher's keyword for the case's parameter `name`."""
        return self.launcher_names.get(name, name)

    @property
    def binding(self) -> ParameterBinding | None:
        """How the launcher was bound when it was by position (what the record says), else None."""
        if not self.launcher_names:
            return None
        mapping = {self.call_name(name): name for name in self.launcher}
        return ParameterBinding(self.params(self.default_dims), "position", mapping)

    def params(self, dims: Mapping[str, Any]) -> tuple[Param, ...]:
        """The launcher's parameters as `Param`s: buffers are pointers (const unless an output), the rest dims."""
        found = []
        for name in self.launcher:
            if name in self.buffers:
                role = "output" if name in self.outputs else "input"
                found.append(Param(name, self.buffers[name], True, name not in self.outputs,
                                   f"{name}: torch.Tensor[{self.buffers[name]}] ({role})"))
            else:
                value = dims.get(name, self.default_dims.get(name))
                dtype = "float64" if isinstance(value, float) else "int64"
                found.append(Param(name, dtype, False, False, f"{name}: {'float' if dtype == 'float64' else 'int'}"))
        return tuple(found)

    def shapes_at(self, dims: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        """Element shape of every buffer at `dims`, resolved by the case layer from ref.py `shapes` (ints, dim
        names, expressions or a function of the dims), exactly as for a C ABI kernel."""
        declared = _declared_shapes(self.ref_path, tuple(sorted(self.default_dims.items())))
        return resolve_shapes(self.params(dims), declared, dims, self.source)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TritonContract:
        values = dict(data)
        values["launcher"] = tuple(values["launcher"])
        values["outputs"] = tuple(values["outputs"])
        values["tunables"] = tuple(values.get("tunables", ()))
        values["launcher_names"] = dict(values.get("launcher_names", {}))
        return cls(**values)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2) + "\n")

    @classmethod
    def read(cls, path: Path) -> TritonContract:
        return cls.from_json(json.loads(path.read_text()))


@functools.lru_cache(maxsize=8)
def _declared_shapes(ref_path: str, default_dims: tuple[tuple[str, Any], ...]) -> Any:
    """ref.py's validated `shapes` (loaded once per process: the worker binds many dims)."""
    return load_reference(Path(ref_path), dict(default_dims)).shapes


def find_ref(source: Path) -> Path:
    """The ref.py of the case a branch belongs to: beside it (`kernel.triton.py` at the case root) or
    two levels up (`branches/<name>/kernel.triton.py`)."""
    for folder in (source.parent, *source.parents[1:3]):
        if (folder / "ref.py").is_file():
            return folder / "ref.py"
    raise CaseError(f"{source}: no ref.py beside it or two folders up; a Triton branch lives at "
                    "<case>/kernel.triton.py or <case>/branches/<name>/kernel.triton.py, beside the case's ref.py.")


def fingerprint(ref_path: Path) -> str:
    """What the contract depends on besides the branch source: ref.py and the dims files (for the build key)."""
    digest = hashlib.sha256()
    for path in [ref_path, *sorted(ref_path.parent.glob("dims*.json"))]:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def launcher_parameters(source: Path) -> tuple[str, ...]:
    """The parameter names of the module-level `def solve(...)`, read with `ast` (the branch is not imported)."""
    try:
        tree = ast.parse(source.read_text(errors="replace"), filename=str(source))
    except SyntaxError as exc:
        raise CaseError(f"{source}:{exc.lineno}: the Triton branch is not valid Python ({exc.msg}).") from None
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == LAUNCHER]
    if not found:
        raise CaseError(f"{source}: no module-level `def {LAUNCHER}(...)`. A Triton branch defines its @triton.jit "
                        f"kernels and a launcher `def {LAUNCHER}(a, b, c, N): kernel[grid](a, b, c, N, BLOCK=1024)` "
                        "taking the case's buffers (ref.py `shapes`) and dims by name.")
    arguments = found[-1].args
    if arguments.vararg or arguments.kwarg:
        raise CaseError(f"{source}: `{LAUNCHER}` takes *args/**kwargs; name every parameter (the buffers of ref.py "
                        "`shapes` and the dims), so the harness knows what to pass.")
    return tuple(a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs])


def launcher_defaults(source: Path) -> tuple[str, ...]:
    """The names of `solve`'s parameters that have a default value (candidates for tunables)."""
    tree = ast.parse(source.read_text(errors="replace"), filename=str(source))
    arguments = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == LAUNCHER][-1].args
    positional = [*arguments.posonlyargs, *arguments.args]
    with_default = positional[len(positional) - len(arguments.defaults):] if arguments.defaults else []
    keyword = [a for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None]
    return tuple(a.arg for a in [*with_default, *keyword])


def derive_contract(source: Path, toolchain: str = "triton") -> TritonContract:
    """Read the branch's launcher and its case's ref.py and dims; CaseError naming the fix when they disagree."""
    ref_path = find_ref(source)
    module = import_ref_module(ref_path)
    dims = load_dims(ref_path.parent / "dims.json")
    dims = {**dims, **load_toolchain_dims(ref_path.parent, dims).get(toolchain, {})}
    shapes = getattr(module, "shapes", None)
    if not isinstance(shapes, dict) or not shapes:
        raise CaseError(f"{ref_path}: a Triton branch needs `shapes` in ref.py (buffer name -> dims), e.g. "
                        "shapes = {'a': ('N',), 'b': ('N',), 'c': ('N',)}: there is no C signature to size buffers by.")
    names, defaults = launcher_parameters(source), launcher_defaults(source)
    tunables = tuple(n for n in names if n in defaults and n not in shapes and n not in dims)
    launcher = tuple(n for n in names if n not in tunables)
    launcher_names: dict[str, str] = {}
    unknown = [name for name in launcher if name not in shapes and name not in dims]
    if unknown:
        launcher_names = _bound_by_position(launcher, unknown, module, shapes, dims, ref_path, source)
        launcher = tuple(launcher_names)
        launcher_names = {name: own for name, own in launcher_names.items() if name != own}
    buffers = {name: _dtype(module, name, ref_path) for name in launcher if name in shapes}
    declared_inputs = getattr(module, "inputs", None) or {}
    outputs, outputs_source = _outputs(module, buffers, declared_inputs, ref_path, source)
    return TritonContract(str(source), str(ref_path), launcher, buffers, outputs, outputs_source, dict(dims),
                          tunables, launcher_names=launcher_names)


def _bound_by_position(launcher: Sequence[str], unknown: Sequence[str], module: Any, shapes: Mapping[str, Any],
                       dims: Mapping[str, Any], ref_path: Path, source: Path) -> dict[str, str]:
    """The case's name -> the launcher's name of every launcher parameter, bound by position to the reference's
    parameters (as a C ABI solve is); CaseError listing both signatures when count or names disagree."""
    first = unknown[0]
    not_declared = (f"{source}: `{LAUNCHER}` parameter {first!r} is neither a buffer in ref.py `shapes` "
                    f"({sorted(shapes)}) nor a dim in dims.json ({sorted(dims)})")
    reference = getattr(module, "reference", None)
    if not callable(reference):
        raise CaseError(f"{not_declared}, and ref.py has no `reference` to bind it by position to; rename it, declare "
                        f"it, or give it a default (`{first}=...`) to make it a tunable that variants set.")
    initial = getattr(module, "initial", None)
    try:
        binding = bind_launcher(launcher, reference, dims, list(initial) if isinstance(initial, dict) else [],
                                str(source))
    except SignatureError as exc:
        raise CaseError(f"{not_declared}, so the launcher was bound by position, which does not fit either "
                        f"({exc}). Or give it a default (`{first}=...`) to make it a tunable that variants set.") \
            from None
    if binding.by != "position":  # every launcher name is a reference parameter that is neither shape nor dim
        raise CaseError(f"{not_declared}; rename it, declare it, or give it a default (`{first}=...`) to make it a "
                        "tunable that variants set.")
    return {binding.mapping[own]: own for own in launcher}


def _dtype(module: Any, name: str, ref_path: Path) -> str:
    declared = getattr(module, "dtypes", None) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{ref_path}: `dtypes` must map buffer names to dtype names, e.g. {{'x': 'float16'}}.")
    dtype = declared.get(name, DEFAULT_DTYPE)
    if dtype not in BUFFER_DTYPES:
        raise CaseError(f"{ref_path}: dtypes[{name!r}] = {dtype!r} is not a buffer dtype the harness knows; use one of "
                        f"{', '.join(BUFFER_DTYPES)}.")
    return str(dtype)


def _outputs(module: Any, buffers: Mapping[str, str], declared_inputs: Mapping[str, Any], ref_path: Path,
             source: Path) -> tuple[tuple[str, ...], str]:
    declared = getattr(module, "outputs", None)
    if declared is not None:
        if isinstance(declared, str) or not isinstance(declared, Sequence) or not all(isinstance(n, str)
                                                                                      for n in declared):
            raise CaseError(f"{ref_path}: `outputs` must be a list of buffer names, e.g. outputs = ['c']; "
                            f"got {declared!r}.")
        unknown = [n for n in declared if n not in buffers]
        if unknown:
            raise CaseError(f"{ref_path}: `outputs` names {unknown}, which are not buffers `{LAUNCHER}` of "
                            f"{source.name} takes ({sorted(buffers)}).")
        return tuple(declared), "ref.py outputs"
    derived = tuple(name for name in buffers if name not in declared_inputs)
    if not derived:
        raise CaseError(f"{ref_path}: every buffer of {source.name} ({sorted(buffers)}) is in `inputs`, so none is an "
                        "output; declare the written ones: outputs = ['y'] (an output listed in `inputs` is in/out).")
    return derived, "derived: the buffers not in ref.py `inputs` (declare `outputs` to say it)"


def contract_for_build(source: Path, toolchain: str = "triton") -> tuple[TritonContract, str]:
    """(contract, fingerprint of what it was derived from) for the build key."""
    contract = derive_contract(source, toolchain)
    return contract, fingerprint(Path(contract.ref_path))

