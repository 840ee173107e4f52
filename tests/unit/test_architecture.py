"""The package's shape, checked from its source with `ast` (nothing of it is imported or run).

Rules (see docs/architecture.md):

(a) no import cycles between modules;
(b) no import from a lower stage to a higher one (`STAGES`, bottom to top);
(c) no module uses another module's underscored name: `from x import _name`, `module._name` on an
    imported module, or `obj._name` where `_name` is not defined in the using module but is in another
    module of the package (`self._x`, `cls._x` and `super()._x` are a class's own members: allowed);
(d) every module of the package belongs to a stage;
(e) bench/ imports nothing of check/, not even for types: bench/ times, check/ decides, and the stage hands bench/
    the check (`FORBIDDEN_IMPORTS`);
(f) only check/ writes a verdict: no module outside it assigns a `Variant`'s `verdicts` (or a field of it) or a record's
    `correct`, by assignment, `setattr` or a `verdicts=` keyword (`VERDICT_ATTRIBUTES`; the one exception is the
    record's own merge of another process's verdict, `MERGED_VERDICT`).

Imports are read at module level and inside functions alike; relative imports are resolved.
Imports under `if TYPE_CHECKING:` never run, so they are left out of (a) and (b): a type-only
reference may point anywhere. A function-level import runs and counts like a module-level one, so
the TYPE_CHECKING exemption cannot hide a cycle that happens at runtime.
"""
from __future__ import annotations

import ast
import fnmatch
import importlib.util
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "pytest_dcuopt"

# The stages, bottom to top: a module may import its own stage and the stages below it, never above.
# Each entry names top-level modules or subpackages of the package (a subpackage covers every
# module in it; "__init__" is the package itself). A new top-level module must be added here.
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("errors", "external_tools", "files", "markers", "__init__")),
    ("case", ("case",)),
    ("timing", ("timing",)),
    ("isa", ("isa", "profile")),
    ("toolchains", ("toolchains",)),
    ("run", ("run",)),
    ("report", ("report",)),
    ("options", ("option_declarations", "options")),
    ("variant", ("variant", "call_inputs")),  # call_inputs: the inputs the pytest process draws for a call
    ("context", ("context",)),  # RunContext, what stages and observers see of the session; require_built
    ("check", ("check",)),
    ("bench", ("bench",)),
    ("gate", ("gate",)),  # judges what check and bench produced against a baseline; imports report and options
    ("observe", ("observe",)),
    ("triton_flow", ("triton_flow",)),  # the `dcuopt triton` investigation steps; uses isa, timing, toolchains
    ("top", ("session_view", "session", "collect", "stages", "selection", "results", "case_handle", "plugin",
             "hookspec", "cli")),
]


@dataclass(frozen=True)
class Import:
    """One imported module (or one name from it) as written in `importer`'s source."""

    importer: str
    target: str  # module of the package that the import loads
    statement: str  # the import as written, for messages
    line: int
    type_checking: bool  # under `if TYPE_CHECKING:`: never executed


@dataclass(frozen=True)
class PrivateUse:
    module: str
    line: int
    what: str  # the offending expression
    owner: str  # the module whose private name it uses
    fix: str


# ----- reading the package -----------------------------------------------------------------------

def package_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)  # locates the package without importing it
    assert spec is not None and spec.submodule_search_locations, f"{PACKAGE} is not importable"
    return Path(next(iter(spec.submodule_search_locations)))


def discover_modules(root: Path, package: str) -> dict[str, Path]:
    """{dotted module name: source file} for every .py file under `root`."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([package, *parts])] = path
    return modules


def is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _is_type_checking_test(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement, anywhere in the tree, with whether it sits under `if TYPE_CHECKING:`."""

    def walk(node: ast.AST, type_checking: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, type_checking
        if isinstance(node, ast.If) and _is_type_checking_test(node.test):
            for statement in node.body:
                yield from walk(statement, True)
            for statement in node.orelse:
                yield from walk(statement, type_checking)
            return
        for child in ast.iter_child_nodes(node):
            yield from walk(child, type_checking)

    yield from walk(tree, False)


def _resolve_base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom names (`from ..x import y` in a.b.c -> a.x)."""
    if node.level == 0:
        return node.module or ""
    package_parts = module.split(".") if is_package(path) else module.split(".")[:-1]
    base_parts = package_parts[: len(package_parts) - (node.level - 1)]
    return ".".join([*base_parts, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path, modules: dict[str, Path], tree: ast.AST) -> list[Import]:
    """The package modules that `module` imports (one entry per imported package module).

    Importing `a.b.c` first runs `a/b/__init__.py`: that parent package counts as imported too, unless
    it contains `module` (then it is already running).
    """
    found: list[Import] = []
    for node, type_checking in _import_nodes(tree):
        statement = ast.unparse(node)
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = _resolve_base(module, path, node)
            # `from pkg import sub` loads pkg.sub when it is a module, otherwise a name from pkg.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in dict.fromkeys(targets):
            if target not in modules or target == module:
                continue
            found.append(Import(module, target, statement, node.lineno, type_checking))
            for parent in _parent_packages(target):
                if parent in modules and not module.startswith(f"{parent}.") and parent != module:
                    found.append(Import(module, parent, f"{statement}  # runs {parent} first", node.lineno,
                                        type_checking))
    return found


def _parent_packages(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


@dataclass
class Package:
    root: Path
    name: str
    modules: dict[str, Path]
    trees: dict[str, ast.Module]
    imports: list[Import]

    @classmethod
    def read(cls, root: Path, name: str) -> Package:
        modules = discover_modules(root, name)
        trees = {module: ast.parse(path.read_text(), str(path)) for module, path in modules.items()}
        imports = [imp for module, path in modules.items() for imp in imports_of(module, path, modules, trees[module])]
        return cls(root, name, modules, trees, imports)

    def relative(self, module: str) -> str:
        return str(self.modules[module].relative_to(self.root.parent))


# ----- (d) stages -------------------------------------------------------------------------------

def stage_key(module: str, package: str) -> str:
    """The STAGES entry that covers `module`: its first component below the package ("__init__" for the package)."""
    rest = module[len(package) + 1:] if module != package else "__init__"
    return rest.split(".")[0]


def stage_index(stages: Sequence[tuple[str, tuple[str, ...]]]) -> dict[str, int]:
    return {key: index for index, (_, keys) in enumerate(stages) for key in keys}


def unassigned_modules(package: Package, stages: Sequence[tuple[str, tuple[str, ...]]]) -> list[str]:
    index = stage_index(stages)
    return sorted(m for m in package.modules if stage_key(m, package.name) not in index)


# ----- (a) cycles -------------------------------------------------------------------------------

def runtime_graph(imports: Sequence[Import]) -> dict[str, dict[str, Import]]:
    graph: dict[str, dict[str, Import]] = {}
    for imp in imports:
        if not imp.type_checking:
            graph.setdefault(imp.importer, {}).setdefault(imp.target, imp)
    return graph


def find_cycles(graph: dict[str, dict[str, Import]]) -> list[list[Import]]:
    """One cycle (as the list of imports that close it) per strongly connected group of modules."""
    cycles: list[list[Import]] = []
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        cycle = _cycle_through(start, graph)
        if cycle:
            cycles.append(cycle)
            done.update(imp.importer for imp in cycle)
    return cycles


def _cycle_through(start: str, graph: dict[str, dict[str, Import]]) -> list[Import]:
    """The shortest import path from `start` back to itself (breadth first), or []."""
    paths: dict[str, list[Import]] = {start: []}
    frontier = [start]
    while frontier:
        following = []
        for module in frontier:
            for target, imp in sorted(graph.get(module, {}).items()):
                if target == start:
                    return [*paths[module], imp]
                if target not in paths:
                    paths[target] = [*paths[module], imp]
                    following.append(target)
        frontier = following
    return []


# ----- (b) layering -----------------------------------------------------------------------------

def upward_imports(package: Package, stages: Sequence[tuple[str, tuple[str, ...]]]) -> list[tuple[Import, str, str]]:
    """(import, importer's stage, target's stage) for every executed import of a higher stage."""
    index = stage_index(stages)
    names = [name for name, _ in stages]
    found = []
    for imp in package.imports:
        low, high = (index.get(stage_key(m, package.name)) for m in (imp.importer, imp.target))
        if imp.type_checking or low is None or high is None:
            continue
        if high > low:
            found.append((imp, names[low], names[high]))
    return found


# ----- (c) private names ------------------------------------------------------------------------

def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_aliases(module: str, path: Path, modules: dict[str, Path], tree: ast.AST) -> dict[str, str]:
    """{local name: package module} for names bound to whole modules (`from . import markers`, `import x as y`)."""
    aliases: dict[str, str] = {}
    for node, _ in _import_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    aliases[alias.asname or alias.name] = alias.name
        else:
            base = _resolve_base(module, path, node)
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
    return aliases


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


def private_definitions(tree: ast.AST) -> set[str]:
    """Underscored names a module defines: functions, classes, assigned names and attributes (`self._x = ...`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if _is_private(name)}


def private_uses(package: Package) -> list[PrivateUse]:
    defined = {module: private_definitions(tree) for module, tree in package.trees.items()}
    uses: list[PrivateUse] = []
    for module, tree in package.trees.items():
        path = package.modules[module]
        uses += _private_imports(module, path, package, tree)
        uses += _private_attributes(module, path, package, tree, defined)
    return uses


def _private_imports(module: str, path: Path, package: Package, tree: ast.AST) -> list[PrivateUse]:
    uses = []
    for node, _ in _import_nodes(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = _resolve_base(module, path, node)
        if base not in package.modules:
            continue
        for alias in node.names:
            if _is_private(alias.name) and f"{base}.{alias.name}" not in package.modules:
                uses.append(PrivateUse(module, node.lineno, ast.unparse(node), base,
                                       f"make `{alias.name}` public in {base} (drop the underscore, type and "
                                       "document it) or move the code that needs it into that module"))
    return uses


def _private_attributes(module: str, path: Path, package: Package, tree: ast.AST,
                        defined: dict[str, set[str]]) -> list[PrivateUse]:
    aliases = _module_aliases(module, path, package.modules, tree)
    uses = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _is_private(node.attr)):
            continue
        owner = _owner_module(node.value, aliases, package.modules)
        if owner is not None and owner != module:
            fix = f"make `{node.attr}` public in {owner} or move the code that needs it there"
            uses.append(PrivateUse(module, node.lineno, ast.unparse(node), owner, fix))
        elif owner is None and not _is_self(node.value) and node.attr not in defined[module]:
            owners = sorted(m for m, names in defined.items() if node.attr in names and m != module)
            if owners:
                fix = (f"`{node.attr}` is private to {', '.join(owners)}: give that module a public function or "
                       "attribute for what this code needs")
                uses.append(PrivateUse(module, node.lineno, ast.unparse(node), owners[0], fix))
    return uses


def _owner_module(value: ast.expr, aliases: dict[str, str], modules: dict[str, Path]) -> str | None:
    """The package module an attribute's object is, when it is a module (`markers`, `pytest_dcuopt.session`)."""
    dotted = _dotted(value)
    if dotted is None:
        return None
    head, _, rest = dotted.partition(".")
    if head in aliases:
        full = f"{aliases[head]}.{rest}" if rest else aliases[head]
        return full if full in modules else None
    return dotted if dotted in modules else None


def _is_self(value: ast.expr) -> bool:
    """`self._x`, `cls._x`, `super()._x`: a class's own (or inherited) members."""
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"


# ----- (e) imports forbidden between two stages of the order -------------------------------------

# (importer's STAGES key, target's STAGES key, why): forbidden whatever the order allows, type-only imports included.
FORBIDDEN_IMPORTS: list[tuple[str, str, str]] = [
    ("bench", "check", "bench/ times and check/ decides: the stage passes bench/ the check (bench.run.TimingCheck)"),
]


def forbidden_imports(package: Package, rules: Sequence[tuple[str, str, str]]) -> list[tuple[Import, str]]:
    """(import, why) for every import, type-only or not, from a stage entry to one the rules keep it from."""
    found: dict[tuple[str, int], tuple[Import, str]] = {}  # one per import statement (not also its parent package)
    for imp in package.imports:
        pair = (stage_key(imp.importer, package.name), stage_key(imp.target, package.name))
        for importer, target, why in rules:
            if pair == (importer, target):
                found.setdefault((imp.importer, imp.line), (imp, why))
    return list(found.values())


# ----- (f) verdicts -----------------------------------------------------------------------------

# What a branch's checks found: `Variant.verdicts` and its fields (variant.Verdicts), and `BranchRecord.correct`.
VERDICT_ATTRIBUTES = frozenset({"verdicts", "default_verified", "boundary_checked", "failed_correctness", "correct"})
VERDICT_WRITERS = frozenset({"check"})  # the STAGES keys whose modules write them (check/verdicts.py)
# The record folding another xdist process's view of the same branch into its own (`BranchRecord.merge`).
MERGED_VERDICT = ("report.records", "self.correct")


def verdict_writes(package: Package, writers: frozenset[str] = VERDICT_WRITERS,
                   allowed: tuple[str, str] = MERGED_VERDICT) -> list[tuple[str, int, str]]:
    """(module, line, what) for every write of a verdict attribute in a module outside `writers`."""
    found = []
    for module, tree in package.trees.items():
        if stage_key(module, package.name) in writers:
            continue
        for node in ast.walk(tree):
            for what in _verdict_writes_in(node):
                if (module, what) != (f"{package.name}.{allowed[0]}", allowed[1]):
                    found.append((module, node.lineno if isinstance(node, ast.stmt | ast.expr) else 0, what))
    return found


def _verdict_writes_in(node: ast.AST) -> list[str]:
    """The verdict attributes one node writes: assignment targets (tuples unpacked), `setattr(obj, "name", ...)`,
    `object.__setattr__(obj, "name", ...)` and a `verdicts=` keyword (a Variant made or `replace`d with them)."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AugAssign | ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name in ("setattr", "object.__setattr__") and len(node.args) > 1:
            attr = node.args[1]
            if isinstance(attr, ast.Constant) and attr.value in VERDICT_ATTRIBUTES:
                return [ast.unparse(node)]
        return [f"{name}(verdicts=...)" for keyword in node.keywords if keyword.arg == "verdicts"]
    found = []
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Tuple | ast.List):
            targets += target.elts
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
        elif isinstance(target, ast.Attribute) and target.attr in VERDICT_ATTRIBUTES:
            found.append(ast.unparse(target))
    return found


# ----- messages ---------------------------------------------------------------------------------

def describe_cycle(package: Package, cycle: Sequence[Import]) -> str:
    chain = " -> ".join([cycle[0].importer, *(imp.target for imp in cycle)])
    steps = "\n".join(f"    {package.relative(imp.importer)}:{imp.line}: `{imp.statement}`" for imp in cycle)
    return (f"import cycle {chain}\n{steps}\n  fix: move what both sides need into the lower module (or a new one "
            "below both), or pass it in as an argument; a function-level import does not break a cycle.")


def describe_upward(package: Package, imp: Import, low: str, high: str) -> str:
    return (f"{package.relative(imp.importer)}:{imp.line}: `{imp.statement}`: stage {low!r} ({imp.importer}) imports "
            f"stage {high!r} ({imp.target}), which is above it.\n  fix: move the needed code down to {low!r} or "
            f"below, or have {high!r} pass it in (an argument, a callback, a hook); a type-only reference may go "
            "under `if TYPE_CHECKING:`.")


def describe_private(package: Package, use: PrivateUse) -> str:
    where = f"{package.relative(use.module)}:{use.line}"
    return f"{where}: `{use.what}` uses a private name of {use.owner}.\n  fix: {use.fix}."


# ----- the package's own checks -----------------------------------------------------------------

@pytest.fixture(scope="module")
def package() -> Package:
    return Package.read(package_dir(), PACKAGE)


def test_the_graph_is_read_from_the_whole_package(package: Package) -> None:
    """Guards the checks below against passing on an empty graph."""
    assert f"{PACKAGE}.session" in package.modules and f"{PACKAGE}.toolchains.cpu" in package.modules
    targets = {(imp.importer, imp.target) for imp in package.imports}
    assert (f"{PACKAGE}.session", f"{PACKAGE}.variant") in targets  # from .variant import ...
    assert (f"{PACKAGE}.toolchains.cpu", f"{PACKAGE}.case.cabi") in targets  # from ..case.cabi import Param
    assert (f"{PACKAGE}.plugin", f"{PACKAGE}.markers") in targets  # from . import markers


def test_every_module_is_assigned_to_a_stage(package: Package) -> None:
    missing = unassigned_modules(package, STAGES)
    assert not missing, (
        f"modules in no stage: {missing}. Put each in the stage folder it belongs to, or add its top-level name "
        f"to STAGES in {Path(__file__).name} (and to the table in docs/architecture.md), in the stage whose "
        "modules it imports and below those that import it.")


def test_every_stage_entry_names_an_existing_module(package: Package) -> None:
    present = {stage_key(m, package.name) for m in package.modules}
    stale = [key for _, keys in STAGES for key in keys if key not in present]
    assert not stale, f"STAGES names modules that do not exist: {stale}; remove them from {Path(__file__).name}."


def test_no_import_cycles(package: Package) -> None:
    cycles = find_cycles(runtime_graph(package.imports))
    if cycles:
        pytest.fail("\n".join(describe_cycle(package, c) for c in cycles), pytrace=False)


def test_no_import_from_a_lower_stage_to_a_higher_one(package: Package) -> None:
    found = upward_imports(package, STAGES)
    if found:
        pytest.fail("\n".join(describe_upward(package, *entry) for entry in found), pytrace=False)


def test_no_module_uses_another_modules_private_names(package: Package) -> None:
    uses = private_uses(package)
    if uses:
        pytest.fail("\n".join(describe_private(package, use) for use in uses), pytrace=False)


def test_bench_imports_nothing_of_check(package: Package) -> None:
    found = forbidden_imports(package, FORBIDDEN_IMPORTS)
    assert not found, "\n".join(
        f"{package.relative(imp.importer)}:{imp.line}: `{imp.statement}`: {why}. fix: take what it needs as an "
        "argument from the stage (a protocol declared in the importer's stage)" for imp, why in found)


def test_only_check_writes_a_verdict(package: Package) -> None:
    found = verdict_writes(package)
    assert not found, "\n".join(
        f"{package.relative(module)}:{line}: `{what}` writes a verdict outside check/. fix: call the function of "
        "check/verdicts.py that says what was found (or have the check that found it write it)"
        for module, line, what in found)


# ----- the checks themselves catch what they should (a small package written for the test) -------

def write_package(root: Path, files: dict[str, str]) -> Package:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Package.read(root / "pkg", "pkg")


TOY_STAGES = [("low", ("__init__", "low")), ("high", ("high",))]


def test_a_function_level_import_cycle_is_found_and_type_checking_is_not(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from . import b\n",
        "low/b.py": "def f():\n    from .a import x\n",
        "low/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n",
        "low/d.py": "from .c import z\n",
    })
    cycles = find_cycles(runtime_graph(toy.imports))
    assert [[(imp.importer, imp.target) for imp in cycle] for cycle in cycles] == [
        [("pkg.low.a", "pkg.low.b"), ("pkg.low.b", "pkg.low.a")]]
    assert "pkg.low.a -> pkg.low.b -> pkg.low.a" in describe_cycle(toy, cycles[0])


def test_a_cycle_through_a_parent_packages_init_is_found(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {
        "__init__.py": "",
        "a/__init__.py": "from ..b.x import f\n",
        "a/y.py": "",
        "b/__init__.py": "",
        "b/x.py": "from ..a.y import g\n",  # runs a/__init__.py, which imports b.x
    })
    cycles = find_cycles(runtime_graph(toy.imports))
    assert [[(imp.importer, imp.target) for imp in cycle] for cycle in cycles] == [
        [("pkg.a", "pkg.b.x"), ("pkg.b.x", "pkg.a")]]


def test_an_upward_import_is_found_with_its_line_and_a_type_only_one_is_not(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {
        "__init__.py": "",
        "low.py": ("import typing\nif typing.TYPE_CHECKING:\n    from .high import T\n\n"
                   "def f():\n    from . import high\n"),
        "high.py": "from .low import f\n",
    })
    found = upward_imports(toy, TOY_STAGES)
    assert [(imp.importer, imp.target, imp.line, low, high) for imp, low, high in found] == [
        ("pkg.low", "pkg.high", 6, "low", "high")]
    assert "fix:" in describe_upward(toy, *found[0])


def test_private_names_across_modules_are_found(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {
        "__init__.py": "",
        "low.py": "_TABLE = {}\n\ndef _helper():\n    pass\n\nclass C:\n    def _step(self):\n        self._own = 1\n",
        "high.py": ("from .low import _TABLE, C\nfrom . import low\n\ndef g(c: C, obj):\n"
                    "    low._helper()\n    c._step()\n    obj.__class__\n    obj._unknown\n"),
    })
    found = {(use.module, use.what, use.owner) for use in private_uses(toy)}
    assert found == {("pkg.high", "from .low import _TABLE, C", "pkg.low"), ("pkg.high", "low._helper", "pkg.low"),
                     ("pkg.high", "c._step", "pkg.low")}


def test_a_module_outside_every_stage_is_reported(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {"__init__.py": "", "low.py": "", "high.py": "", "newcomer.py": ""})
    assert unassigned_modules(toy, TOY_STAGES) == ["pkg.newcomer"]


def test_an_import_a_rule_forbids_is_found_type_only_too(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {
        "__init__.py": "",
        "low.py": "",
        "high.py": "import typing\nfrom . import low\nif typing.TYPE_CHECKING:\n    from .low import T\n",
        "other.py": "from . import low\n",
    })
    found = forbidden_imports(toy, [("high", "low", "why")])
    assert [(imp.importer, imp.line, why) for imp, why in found] == [("pkg.high", 2, "why"), ("pkg.high", 4, "why")]


def test_a_verdict_written_outside_check_is_found_and_one_inside_is_not(tmp_path: Path) -> None:
    toy = write_package(tmp_path, {
        "__init__.py": "",
        "check/__init__.py": "",
        "check/verdicts.py": "def mark(v):\n    v.verdicts = 1\n    v.record.correct = False\n",
        "report/__init__.py": "",
        "report/records.py": "class R:\n    def merge(self, o):\n        self.correct = o.correct\n",
        "bench.py": ("def f(v, r, replace):\n    v.verdicts.failed_correctness = True\n"
                     "    r.correct, n = False, 1\n    setattr(v, 'default_verified', True)\n"
                     "    v.boundary_checked += 1\n    replace(v, verdicts=None)\n    v.failure = 'kept'\n"
                     "    r.correct == True\n"),
    })
    found = [(module, line, what) for module, line, what in verdict_writes(toy)]
    assert sorted(found) == [("pkg.bench", 2, "v.verdicts.failed_correctness"), ("pkg.bench", 3, "r.correct"),
                             ("pkg.bench", 4, "setattr(v, 'default_verified', True)"),
                             ("pkg.bench", 5, "v.boundary_checked"), ("pkg.bench", 6, "replace(verdicts=...)")]


# docs/architecture.md's layer table names the package's modules: a folder (`run/`) at the top of a cell, then its
# modules in parentheses (`worker.py`, or a pattern such as `hip*.py`); a folder listed without modules stands for all
# of its modules. The table must name every module, and name no module that does not exist.
ARCHITECTURE_DOC = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def documented_modules(text: str) -> tuple[set[str], dict[str, set[str]]]:
    """(top-level modules, {folder: module names or patterns}) that the layer table of `text` names."""
    table = text[text.index("## Layers"):text.index("## Hooks")]
    top: set[str] = set()
    folders: dict[str, set[str]] = {}
    for row in (line for line in table.splitlines() if line.startswith("| **")):
        folder, depth = "", 0
        for match in re.finditer(r"`([^`]+)`|\(|\)", row.split("|")[2]):
            token, name = match.group(0), match.group(1)
            if token in "()":
                depth += 1 if token == "(" else -1
            elif name.endswith("/") and depth == 0:
                folder = name.rstrip("/")
                folders.setdefault(folder, set())
            elif name.endswith(".py"):
                (top if depth == 0 else folders[folder]).add(name)
    return top, folders


def undocumented_modules(root: Path, text: str) -> list[str]:
    top, folders = documented_modules(text)
    missing = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if len(parts) == 1:
            named = parts[0] in top
        else:
            patterns = folders.get(parts[0])
            rest = "/".join(parts[1:])
            named = patterns is not None and (not patterns or rest == "__init__.py"
                                              or any(fnmatch.fnmatch(rest, pattern) for pattern in patterns))
        if not named:
            missing.append("/".join(parts))
    return missing


def nonexistent_modules(root: Path, text: str) -> list[str]:
    top, folders = documented_modules(text)
    named = [*top, *(f"{folder}/{name}" for folder, names in folders.items() for name in names)]
    return sorted(name for name in named if not list(root.glob(name)))


def test_the_layer_table_names_every_module_and_only_modules_that_exist() -> None:
    root, text = package_dir(), ARCHITECTURE_DOC.read_text()
    assert undocumented_modules(root, text) == [], "name these modules in docs/architecture.md's layer table"
    assert nonexistent_modules(root, text) == [], "docs/architecture.md names modules that do not exist"


def test_a_module_missing_from_the_layer_table_is_found(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    for name in ("plugin.py", "run/__init__.py", "run/worker.py", "run/spare_workers.py"):
        (tmp_path / name).write_text("")
    text = ("## Layers\n| layer | modules | owns |\n|---|---|---|\n| **run** | `run/` (`worker.py`, `gone.py`) | x |\n"
            "| **top** | `plugin.py` | y |\n## Hooks\n")
    assert undocumented_modules(tmp_path, text) == ["run/spare_workers.py"]
    assert nonexistent_modules(tmp_path, text) == ["run/gone.py"]
