"""Expressions of the dims that ref.py may write where a number is expected.

Two spellings: a string in a small, safe expression language (`"input_size - kernel_size + 1"`,
`"kernel_size <= input_size"`), parsed with `ast` and evaluated by walking the tree (never `eval`):
names of dims, integer literals, `+ - * // %`, unary minus, `min(...)`, `max(...)`, and for relations
the comparisons `< <= > >= == !=` joined by `and`; or a Python callable whose parameters are dims
(`lambda input_size, kernel_size: (input_size - kernel_size + 1,)`), called with the dims it names.
"""
from __future__ import annotations

import ast
import inspect
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import CaseError

_BINARY: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_COMPARE: dict[type, Callable[[int, int], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_FUNCTIONS: dict[str, Callable[..., int]] = {"min": min, "max": max}
LANGUAGE = "names of dims, integers, + - * // %, min(...), max(...)"


@dataclass(frozen=True)
class DimExpr:
    """A value computed from the dims: a parsed string or a callable. `names`: the dims it reads."""

    text: str
    names: frozenset[str]
    tree: ast.expr | None = None
    function: Callable[..., Any] | None = None

    def evaluate(self, dims: Mapping[str, Any]) -> Any:
        missing = sorted(self.names - set(dims))
        if missing:
            raise CaseError(f"ref.py: `{self.text}` needs dims {missing}, which are not set (dims: {dict(dims)}).")
        if self.function is not None:
            try:
                return self.function(**{name: dims[name] for name in self.names})
            except Exception as exc:  # ref.py's own code: name it, not the harness
                raise CaseError(f"ref.py: `{self.text}` raised {type(exc).__name__}: {exc} at dims {dict(dims)}. It "
                                "must return a value for every dims the harness uses (the defaults and every draw "
                                "from `dim_ranges`).") from exc
        assert self.tree is not None
        try:
            return _evaluate(self.tree, dims)
        except ZeroDivisionError as exc:
            raise CaseError(f"ref.py: `{self.text}` divides by zero at dims {dict(dims)}; constrain the dims with "
                            "`dim_ranges` or `relations` so the divisor stays positive.") from exc

    def __str__(self) -> str:
        return self.text


# What ref.py may write where a dim-dependent integer is expected.
DimValue = int | DimExpr


def parse_expr(text: str, known_dims: Mapping[str, Any] | set[str], where: str, relation: bool = False) -> DimExpr:
    """Parse `text` in the dims expression language; names must be dims. `relation`: a comparison."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        raise CaseError(f"{where}: `{text}` is not an expression ({exc.msg}). Allowed: {LANGUAGE}"
                        f"{', compared with < <= > >= == != and joined by `and`' if relation else ''}.") from exc
    names: set[str] = set()
    _check(tree, text, set(known_dims), names, where, relation, top=True)
    if relation and not isinstance(tree, (ast.Compare, ast.BoolOp)):
        raise CaseError(f"{where}: `{text}` is not a relation; write a comparison of dims such as "
                        "`kernel_size <= input_size`.")
    return DimExpr(text=text.strip(), names=frozenset(names), tree=tree)


def dim_function(function: Callable[..., Any], known_dims: Mapping[str, Any] | set[str], where: str) -> DimExpr:
    """A callable whose parameters are all dims (checked now, not when it is first called)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError) as exc:
        raise CaseError(f"{where}: cannot read the parameters of {function!r} ({exc}); use a lambda or def whose "
                        "parameters are dims.") from exc
    variadic = [p.name for p in parameters if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    unknown = [p.name for p in parameters if p.name not in known_dims and p.name not in variadic]
    if variadic or unknown:
        raise CaseError(f"{where}: the function takes {', '.join(repr(n) for n in variadic + unknown)}, which "
                        f"{'are' if len(variadic + unknown) > 1 else 'is'} not a dim (dims: {sorted(known_dims)}). It "
                        "is called with the dims it names: name each parameter after a dim.")
    names = frozenset(p.name for p in parameters)
    label = getattr(function, "__name__", "function")
    return DimExpr(text=f"{label}({', '.join(sorted(names))})", names=names, function=function)


def dim_value(value: Any, known_dims: Mapping[str, Any] | set[str], where: str) -> DimValue:
    """An int stays an int; a string becomes a parsed expression (a dim name is the simplest one); a callable
    becomes a dim function. Anything else is refused."""
    if isinstance(value, bool):
        raise CaseError(f"{where}: {value!r} is a bool; write an integer, a dim name or an expression of dims.")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        return parse_expr(value, known_dims, where)
    if callable(value):
        return dim_function(value, known_dims, where)
    raise CaseError(f"{where}: {value!r} is a {type(value).__name__}; write an integer, a dim name, an expression "
                    f"string ({LANGUAGE}) or a function of the dims.")


def evaluate(value: DimValue | float, dims: Mapping[str, Any]) -> Any:
    return value.evaluate(dims) if isinstance(value, DimExpr) else value


def integer_at(value: DimValue, dims: Mapping[str, Any], where: str) -> int:
    """`value` at `dims`, which must come out an integer."""
    result = evaluate(value, dims)
    if isinstance(result, bool) or not isinstance(result, int):
        if isinstance(result, float) and result.is_integer():
            return int(result)
        raise CaseError(f"{where}: `{value}` is {result!r} at dims {dict(dims)}, not an integer.")
    return result


def names_of(value: Any) -> frozenset[str]:
    return value.names if isinstance(value, DimExpr) else frozenset()


def _check(node: ast.AST, text: str, known: set[str], names: set[str], where: str, relation: bool,
           top: bool = False) -> None:
    """Refuse every node outside the language, naming it."""
    def refuse(what: str) -> CaseError:
        return CaseError(f"{where}: `{text}` uses {what}, which the dims expression language does not allow. "
                         f"Allowed: {LANGUAGE}{' and comparisons joined by `and`' if relation else ''}; or give a "
                         "function of the dims instead.")

    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            raise refuse(f"the literal {node.value!r} (only integers)")
    elif isinstance(node, ast.Name):
        if node.id not in known:
            raise CaseError(f"{where}: `{text}` names {node.id!r}, which is not a dim (dims: {sorted(known)}).")
        names.add(node.id)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise refuse(f"the operator {type(node.op).__name__}")
        _check(node.left, text, known, names, where, relation)
        _check(node.right, text, known, names, where, relation)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        _check(node.operand, text, known, names, where, relation)
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords or not node.args:
            raise refuse(f"the call `{ast.unparse(node)}` (only min(...) and max(...))")
        for argument in node.args:
            _check(argument, text, known, names, where, relation)
    elif relation and isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        for operand in (node.left, *node.comparators):
            _check(operand, text, known, names, where, relation=False)
    elif relation and top and isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for value in node.values:
            if not isinstance(value, ast.Compare):
                raise refuse(f"`{ast.unparse(value)}` inside `and` (only comparisons)")
            _check(value, text, known, names, where, relation)
    else:
        raise refuse(f"`{ast.unparse(node)}`")


def _evaluate(node: ast.AST, dims: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return dims[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, dims), _evaluate(node.right, dims))
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, dims)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)
        return _FUNCTIONS[node.func.id](*(_evaluate(a, dims) for a in node.args))
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, dims)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(comparator, dims)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        return all(_evaluate(value, dims) for value in node.values)
    raise AssertionError(f"unchecked node {ast.dump(node)}")  # _check refused it already
