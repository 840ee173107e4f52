"""Reading a case's ref.py: imported once per process and content (`import_ref_module`), and everything it
declares validated into a `reference.Reference` (`load_reference`); a declaration that cannot work is a CaseError
that names it and says how to write it."""
from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import inspect
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from ..errors import CaseError
from .buffers import DomainSpec, declared_shape
from .expr import DimExpr, DimValue, dim_function, dim_value, names_of, parse_expr
from .reference import Reference, call_with_declared_dims, check_relations, tolerance_at

# `initial` spellings: "zeros", a number, or "poison" (the default: NaN / an integer sentinel).
POISON = "poison"
# ref.py `precision`: the arithmetic a case accepts beyond its buffers' dtype, by its usual spellings.
PRECISIONS = {"float32": "float32", "fp32": "float32", "tf32": "tf32", "float16": "float16", "fp16": "float16",
              "half": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16"}
# ref.py `rtol_scale`: the spellings accepted (see `Reference.scaled_rtol`).
RTOL_SCALES = ("sqrt_reduction",)


_REF_MODULES: dict[tuple[Path, int], ModuleType] = {}


class _NoBytecodeLoader(importlib.machinery.SourceFileLoader):
    """Imports ref.py without writing `__pycache__` into the case: a case directory may be read-only, and the
    harness writes only to its run, cache and log directories."""

    def set_data(self, path: str, data: Any, *, _mode: int = 0o666) -> None:
        return None


def import_ref_module(path: Path) -> ModuleType:
    """Import a case's ref.py once per process and content (collection and the session share it)."""
    try:
        key = (path.resolve(), path.stat().st_mtime_ns)
    except OSError as exc:
        raise CaseError(f"{path} cannot be read ({type(exc).__name__}: {exc}); every case needs a readable ref.py.") \
            from exc
    if key in _REF_MODULES:
        return _REF_MODULES[key]
    name = "dcuopt_ref_" + hashlib.sha256(str(key[0]).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path, loader=_NoBytecodeLoader(name, str(path)))
    if spec is None or spec.loader is None:
        raise CaseError(f"{path} cannot be imported as a Python module.")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SystemExit as exc:  # sys.exit() at import must not end the pytest session
        raise CaseError(f"importing {path} called sys.exit({exc.code!r}), which would end the whole test session. "
                        "ref.py is imported by the harness: keep module-level code to declarations, and put "
                        "script code under `if __name__ == '__main__':`.") from exc
    except Exception as exc:
        raise CaseError(f"importing {path} raised {type(exc).__name__}: {exc}. Fix the reference module.") from exc
    _REF_MODULES[key] = module
    return module


def load_reference(path: Path, dims: Mapping[str, Any]) -> Reference:
    """Import ref.py and validate everything it declares (expressions are checked against the dims' names)."""
    module = import_ref_module(path)
    function = getattr(module, "reference", None)
    if not callable(function):
        raise CaseError(f"{path} defines no callable `reference(**kwargs)`. It receives the kernel's parameters by "
                        "name and writes the outputs in place, e.g. `def reference(x, y, N): y.copy_(x * 2)`.")
    atol_spec, rtol_spec = _tolerance(module, "atol", dims, path), _tolerance(module, "rtol", dims, path)
    input_specs = _inputs(module, dims, path)
    initial = _initial(module, path)
    both = sorted(set(initial) & set(input_specs))
    if both:
        raise CaseError(f"{path}: {both} appear in both `inputs` and `initial`. `inputs` makes a buffer start with "
                        "drawn data, `initial` with one value: keep one of the two.")
    relations = _relations(module, dims, path)
    reference = Reference(
        path=path, module=module, function=function,
        atol=tolerance_at(atol_spec, "atol", dims, path), rtol=tolerance_at(rtol_spec, "rtol", dims, path),
        shapes=_shapes(module, dims, path), dim_ranges=_dim_ranges(module, dims, path), inputs={},
        flops=_dims_function(module, "flops", dims, path),
        bytes_moved=_dims_function(module, "bytes_moved", dims, path),
        input_specs=input_specs, initial=initial, relations=relations, atol_spec=atol_spec, rtol_spec=rtol_spec,
        reduction=_reduction(module, dims, path), rtol_scale=_rtol_scale(module, path),
        precision=_precision(module, path),
        input_sets=_input_sets(module, dims, path, initial),
    )
    check_relations(reference, dims, f"{path}: the default dims")
    check_declared_names(reference, dims)
    reference.scalar_ranges = _scalar_ranges(module, dims, path, _size_dims(reference))
    for name, function in (("flops", reference.flops), ("bytes_moved", reference.bytes_moved)):
        if function is not None:  # called now at the default dims, not first after the timing was spent
            check_count(name, call_with_declared_dims(function, dims), dims, path)
    if reference.shapes is not None:
        check_default_shapes(reference.shapes, dims, path)
    reference.inputs = reference.starting_domains(dims)
    return reference


def check_count(name: str, value: Any, dims: Mapping[str, Any], path: Path) -> None:
    """`flops` / `bytes_moved` must give a finite number >= 0 (GFLOP/s and GB/s are computed from it)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise CaseError(f"{path}: `{name}` returned {value!r} at the default dims {dict(dims)}; it must return a "
                        f"finite number >= 0 (the {name.replace('_', ' ')} of one call), e.g. "
                        f"`def {name}(N): return 4 * N`.")


def check_declared_names(reference: Reference, dims: Mapping[str, Any]) -> None:
    """`shapes`, `inputs` and `initial` may only name parameters of `reference` (a typo would be ignored silently:
    a buffer without its declared domain or shape). Not checkable for `reference(**kwargs)`."""
    try:
        parameters = inspect.signature(reference.function).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in parameters):
        return
    names = [p.name for p in parameters]
    sets = [(f"input_sets[{name!r}]", domains) for name, domains in reference.input_sets.items()]
    for what, declared in (("shapes", reference.shapes or {}), ("inputs", reference.input_specs),
                           ("initial", reference.initial), *sets):
        unknown = sorted(set(declared) - set(names))
        if unknown:
            raise CaseError(f"{reference.path}: `{what}` names {unknown}, which {'is' if len(unknown) == 1 else 'are'} "
                            f"not a parameter of reference({', '.join(names)}). Buffers are named as in the reference: "
                            "fix the name (or add the parameter).")


def check_default_shapes(shapes: Mapping[str, Any], dims: Mapping[str, Any], path: Path) -> None:
    """Every declared buffer at the default dims (what every branch is timed at) has at least one element."""
    for name, declared in shapes.items():
        shape = declared_shape(name, declared, dims, f"{path}: shapes[{name!r}]")
        if 0 in shape:
            raise CaseError(f"{path}: shapes[{name!r}] is {shape} at the default dims {dict(dims)}: an empty buffer. "
                            "The default dims are what every branch is checked and timed at, so nothing would be "
                            "measured: give dims.json sizes of at least 1 (draw zero sizes with `dim_ranges` "
                            "instead, e.g. (0, 64)).")


def _tolerance(module: ModuleType, name: str, dims: Mapping[str, Any], path: Path) -> float | DimExpr | None:
    """A number (checked now) or a function of the dims (checked where it is evaluated)."""
    value = getattr(module, name, None)
    if callable(value):
        return dim_function(value, dims, f"{path}: `{name}`")
    return _optional_float(module, name, path)


def _initial(module: ModuleType, path: Path) -> dict[str, float]:
    """`initial = {"hist": "zeros"}`: outputs that start filled with a value on every call instead of poison."""
    declared = getattr(module, "initial", None) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{path}: `initial` must be a dict output -> 'zeros', a number or 'poison', e.g. "
                        "initial = {'hist': 'zeros'}; got " f"{declared!r}.")
    found: dict[str, float] = {}
    for name, state in declared.items():
        if state == "zeros":
            found[name] = 0.0
        elif state == POISON:
            continue  # the default, spelled out
        elif isinstance(state, (int, float)) and not isinstance(state, bool) and math.isfinite(state):
            found[name] = float(state)
        else:
            raise CaseError(f"{path}: initial[{name!r}] = {state!r}; use 'zeros', a finite number (the value every "
                            "element starts with) or 'poison' (NaN / an integer sentinel: the default, which catches "
                            "elements the kernel never writes).")
    return found


def _relations(module: ModuleType, dims: Mapping[str, Any], path: Path) -> tuple[DimExpr, ...]:
    declared = getattr(module, "relations", None) or ()
    if isinstance(declared, str) or not isinstance(declared, (list, tuple)):
        raise CaseError(f"{path}: `relations` must be a list of comparisons of dims, e.g. "
                        f"relations = ['kernel_size <= input_size']; got {declared!r}.")
    found = []
    for index, relation in enumerate(declared):
        where = f"{path}: relations[{index}]"
        if isinstance(relation, str):
            found.append(parse_expr(relation, dims, where, relation=True))
        elif callable(relation):
            found.append(dim_function(relation, dims, where))
        else:
            raise CaseError(f"{where} = {relation!r}; write a string such as 'kernel_size <= input_size' or a "
                            "function of the dims returning a bool.")
    return tuple(found)


def _reduction(module: ModuleType, dims: Mapping[str, Any], path: Path) -> DimValue | None:
    declared = getattr(module, "reduction", None)
    if declared is None:
        return None
    return dim_value(declared, dims, f"{path}: `reduction` (the length of the reduction, e.g. reduction = 'K')")


def _rtol_scale(module: ModuleType, path: Path) -> str | None:
    declared = getattr(module, "rtol_scale", None)
    if declared is None:
        return None
    if declared not in RTOL_SCALES:
        raise CaseError(f"{path}: rtol_scale = {declared!r}; the one rule is 'sqrt_reduction' (with "
                        "`reduction = '<length dim>'`), or leave it out for the default reduction bound.")
    if getattr(module, "reduction", None) is None:
        raise CaseError(f"{path}: rtol_scale = {declared!r} needs the reduction's length: add e.g. reduction = 'K'.")
    return str(declared)


def _precision(module: ModuleType, path: Path) -> str | None:
    """`precision = "tf32"`: the case accepts that arithmetic for its float outputs (its tolerances and reduction
    bound are those of it); without it, outputs are judged as computed in their own dtype."""
    declared = getattr(module, "precision", None)
    if declared is None:
        return None
    found = PRECISIONS.get(declared) if isinstance(declared, str) else None
    if found is None:
        raise CaseError(f"{path}: precision = {declared!r} is not an arithmetic the harness knows; use one of "
                        f"{', '.join(repr(p) for p in PRECISIONS)} (e.g. precision = 'tf32' to accept tensor-core "
                        "float32 matmuls), or leave it out to judge outputs in their own dtype.")
    return found


def _optional_float(module: ModuleType, name: str, path: Path) -> float | None:
    """A tolerance: a finite number >= 0. NaN fails every comparison, inf passes every one: both are refused."""
    value = getattr(module, name, None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CaseError(f"{path}: `{name} = {value!r}` is a {type(value).__name__}; a tolerance must be a finite, "
                        f"non-negative number, e.g. `{name} = 1e-5`.")
    if not math.isfinite(value):
        effect = "lets every value pass" if value > 0 else "fails every comparison"  # nan > 0 is False
        raise CaseError(f"{path}: `{name} = {value!r}` is not a finite number, so it {effect}. Give a finite, "
                        f"non-negative tolerance, e.g. `{name} = 1e-5`, or remove it for the dtype's default.")
    if value < 0:
        raise CaseError(f"{path}: `{name} = {value!r}` is negative; a tolerance must be a finite, non-negative "
                        f"number, e.g. `{name} = 1e-5`.")
    return float(value)


def _dims_function(module: ModuleType, name: str, dims: Mapping[str, Any], path: Path) -> Callable[..., float] | None:
    """`flops` / `bytes_moved`: a function whose named parameters are all dims (checked now, not after timing)."""
    value = getattr(module, name, None)
    if value is None:
        return None
    if not callable(value):
        raise CaseError(f"{path}: `{name}` must be a function of the dims, e.g. `def {name}(N): return 3 * 4 * N`.")
    try:
        parameters = inspect.signature(value).parameters.values()
    except (TypeError, ValueError) as exc:
        raise CaseError(f"{path}: cannot read the parameters of `{name}` ({exc}); define it with `def`, e.g. "
                        f"`def {name}(N): return 3 * 4 * N`.") from exc
    named = [p.name for p in parameters if p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                                          inspect.Parameter.VAR_KEYWORD)]
    unknown = [n for n in named if n not in dims]
    if unknown:
        raise CaseError(f"{path}: `{name}({', '.join(named)})` takes {', '.join(repr(n) for n in unknown)}, which "
                        f"{'is' if len(unknown) == 1 else 'are'} not in dims.json (dims: {sorted(dims)}). It is called "
                        "with the dims it names: rename the parameter to a dim or add the dim to dims.json.")
    return value


def _shapes(module: ModuleType, dims: Mapping[str, Any], path: Path) -> dict[str, Any] | None:
    """`shapes`: per pointer, a tuple of ints / dim names / expressions, or one function of the dims (checked now)."""
    shapes = getattr(module, "shapes", None)
    if shapes is None:
        return None
    if not isinstance(shapes, dict) or not all(isinstance(v, (tuple, list)) or callable(v) for v in shapes.values()):
        raise CaseError(f"{path}: `shapes` must map pointer parameters to tuples of dim names/ints/expressions (or "
                        f"to a function of the dims returning one), e.g. {{'x': ('N',)}}; got {shapes!r}.")
    found: dict[str, Any] = {}
    for name, shape in shapes.items():
        where = f"{path}: shapes[{name!r}]"
        if callable(shape):
            found[name] = dim_function(shape, dims, where)
        else:
            found[name] = tuple(entry if isinstance(entry, str) and entry in dims else dim_value(entry, dims, where)
                                for entry in shape)
    return found


def _dim_ranges(module: ModuleType, dims: Mapping[str, Any], path: Path) -> dict[str, tuple[DimValue, ...]]:
    """`dim_ranges`: (lo, hi) or (lo, hi, multiple_of); lo and hi may be expressions of other dims."""
    declared = getattr(module, "dim_ranges", None) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{path}: `dim_ranges` must be a dict dim -> (lo, hi) or (lo, hi, multiple_of).")
    unknown = set(declared) - set(dims)
    if unknown:
        raise CaseError(f"{path}: dim_ranges names {sorted(unknown)}, which are not in dims.json ({sorted(dims)}).")
    ranges: dict[str, tuple[DimValue, ...]] = {}
    for dim, default in dims.items():
        if not isinstance(default, int):
            continue  # float scalars: `_scalar_ranges`
        ranges[dim] = _dim_range(dim, declared.get(dim, (1, max(1, int(default)))), dims, path)
    dependency_order(ranges, path)  # refuses cycles now
    return ranges


# A float scalar without a declared range is drawn from [default / SCALAR_SPREAD, default * SCALAR_SPREAD] (its sign
# kept: an `eps` or a `scale` may need it), or from [-1, 1] when the default is 0.
SCALAR_SPREAD = 4.0


def default_scalar_range(default: float) -> tuple[float, float]:
    """Values of a float scalar's own sign, a factor of SCALAR_SPREAD either side of its default: alpha = beta = 1
    become different values, so a kernel that swaps or drops one is seen."""
    if default == 0:
        return (-1.0, 1.0)
    ends = sorted((default / SCALAR_SPREAD, default * SCALAR_SPREAD))
    return (ends[0], ends[1])


def _size_dims(reference: Reference) -> set[str]:
    """Dims that size something (named in `shapes`, `reduction`, `relations` or the bounds of `dim_ranges`): a float
    there (`"N": 100.0`) is a size written as a float, never drawn as a fraction."""
    values: list[Any] = [reference.reduction, *reference.relations]
    values += [bound for spec in reference.dim_ranges.values() for bound in spec[:2]]
    for declared in (reference.shapes or {}).values():
        values += list(declared) if isinstance(declared, tuple) else [declared]
    found = {value for value in values if isinstance(value, str)}
    return found.union(*(names_of(value) for value in values))


def _scalar_ranges(module: ModuleType, dims: Mapping[str, Any], path: Path,
                   sizes: set[str]) -> dict[str, tuple[float, float]]:
    """Float scalars' draw ranges: `dim_ranges = {"alpha": (-2.0, 2.0)}` (numbers; the default must lie inside),
    else `default_scalar_range`. Dims in `sizes` are sizes, not drawn."""
    declared = getattr(module, "dim_ranges", None) or {}
    ranges: dict[str, tuple[float, float]] = {}
    for dim, default in dims.items():
        if isinstance(default, int) or dim in sizes:
            continue
        spec = declared.get(dim) if isinstance(declared, dict) else None
        if spec is None:
            ranges[dim] = default_scalar_range(float(default))
            continue
        bounds = tuple(spec) if isinstance(spec, (tuple, list)) else ()
        numbers = len(bounds) == 2 and all(_finite_number(b) for b in bounds)
        if not numbers or not bounds[0] <= default <= bounds[1]:
            raise CaseError(f"{path}: dim_ranges[{dim!r}] = {spec!r}; {dim} is a float scalar (dims.json: "
                            f"{default!r}), drawn from a range (lo, hi) of finite numbers with lo <= the default "
                            f"<= hi, e.g. {{{dim!r}: (-2.0, 2.0)}}. Leave it out to draw within a factor of "
                            f"{SCALAR_SPREAD:g} of the default, keeping its sign.")
        ranges[dim] = (float(bounds[0]), float(bounds[1]))
    return ranges


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _dim_range(dim: str, declared: Any, dims: Mapping[str, Any], path: Path) -> tuple[DimValue, ...]:
    problem = (f"{path}: dim_ranges[{dim!r}] = {declared!r}; expected (lo, hi) or (lo, hi, multiple_of) with integers "
               "0 <= lo <= hi (lo and hi may be expressions of other dims, e.g. (1, 'input_size')).")
    spec = tuple(declared) if isinstance(declared, (tuple, list)) else ()
    if len(spec) not in (2, 3):
        raise CaseError(problem)
    if len(spec) == 3 and (isinstance(spec[2], bool) or not isinstance(spec[2], int) or spec[2] < 1):
        raise CaseError(f"{path}: dim_ranges[{dim!r}] = {declared!r}: multiple_of = {spec[2]!r}, but it must be an "
                        "integer >= 1 (every drawn value is a multiple of it; 1 means any value). E.g. (1, 4096, 64).")
    bounds = tuple(dim_value(v, set(dims) - {dim}, f"{path}: dim_ranges[{dim!r}]") for v in spec[:2])
    if all(isinstance(b, int) for b in bounds) and not 0 <= bounds[0] <= bounds[1]:  # type: ignore[operator]
        raise CaseError(problem)
    return (*bounds, *spec[2:])


def dependency_order(ranges: Mapping[str, tuple[DimValue, ...]], path: Path | str = "ref.py") -> list[str]:
    """The ranged dims in an order where every dim comes after the dims its bounds name (a cycle is refused)."""
    needs = {dim: set().union(*(names_of(b) for b in spec[:2])) & set(ranges) for dim, spec in ranges.items()}
    order: list[str] = []
    while len(order) < len(needs):
        ready = [d for d in needs if d not in order and needs[d] <= set(order)]
        if not ready:
            cycle = sorted(d for d in needs if d not in order)
            raise CaseError(f"{path}: the bounds in dim_ranges of {cycle} depend on each other in a cycle; let one "
                            "of them have constant bounds.")
        order += ready
    return order


# The name of the distribution `inputs` declares (what every branch is timed with), beside `input_sets`' names.
DEFAULT_INPUT_SET = "default"
INPUT_SET_NAME = re.compile(r"[A-Za-z0-9_.+=-]+")


def _input_sets(module: ModuleType, dims: Mapping[str, Any], path: Path,
                initial: Mapping[str, float]) -> dict[str, dict[str, DomainSpec]]:
    """`input_sets = {"large": {"x": ("normal", 0, 100)}, ...}`: each a distribution of the inputs beside `inputs`
    (which stays the one timed), laid over it: a buffer a set does not name keeps its `inputs` domain."""
    declared = getattr(module, "input_sets", None)
    if declared is None:
        return {}
    example = "input_sets = {'large': {'x': ('normal', 0.0, 100.0)}}"
    if not isinstance(declared, dict):
        raise CaseError(f"{path}: `input_sets` must be a dict name -> {{input: domain}}, e.g. {example}; got "
                        f"{declared!r}.")
    found: dict[str, dict[str, DomainSpec]] = {}
    for name, domains in declared.items():
        if not isinstance(name, str) or not INPUT_SET_NAME.fullmatch(name) or name == DEFAULT_INPUT_SET:
            raise CaseError(f"{path}: input_sets name {name!r}: use letters, digits and _ . + = - (it appears in "
                            f"test output and in reproduce commands); {DEFAULT_INPUT_SET!r} is the name of `inputs`.")
        if not isinstance(domains, dict) or not domains:
            raise CaseError(f"{path}: input_sets[{name!r}] = {domains!r}; give the inputs it draws otherwise and "
                            f"their domains, e.g. {example}.")
        both = sorted(set(domains) & set(initial))
        if both:
            raise CaseError(f"{path}: input_sets[{name!r}] names {both}, which `initial` declares outputs; a set "
                            "draws inputs (an output it named would start with its values).")
        found[name] = {buffer: DomainSpec.parse(buffer, spec, dims, f"ref.py: input_sets[{name!r}][{buffer!r}]")
                       for buffer, spec in domains.items()}
    return found


def _inputs(module: ModuleType, dims: Mapping[str, Any], path: Path) -> dict[str, DomainSpec]:
    declared = getattr(module, "inputs", None) or {}
    if not isinstance(declared, dict):
        raise CaseError(f"{path}: `inputs` must be a dict parameter -> value domain.")
    return {name: DomainSpec.parse(name, spec, dims) for name, spec in declared.items()}
