"""Every package of pytest_dcuopt says what is stable: an `__all__` in its `__init__.py` naming submodules or names it
defines, and docs/architecture.md's "What is stable" table listing exactly those (read with `ast`, nothing imported)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_dcuopt"
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
PACKAGES = sorted(init.parent for init in PACKAGE.rglob("__init__.py"))


def public_face(init: Path) -> list[str] | None:
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return None


def defined_names(init: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def documented_faces() -> dict[str, list[str]]:
    """{package path: names} from the rows `| `pytest_dcuopt/x/` | `a`, `b` |` of the "What is stable" section."""
    text = ARCHITECTURE_DOC.read_text()
    section = text.split("## What is stable", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(pytest_dcuopt/[\w/]*)` \| ([^|]*) \|", section, flags=re.MULTILINE)
    return {package.rstrip("/"): re.findall(r"`([\w.]+)`", names) for package, names in rows}


def relative(package: Path) -> str:
    return package.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("package", PACKAGES, ids=relative)
def test_every_package_declares_its_stable_names_and_they_exist(package: Path) -> None:
    face = public_face(package / "__init__.py")
    assert face, f"{relative(package)}/__init__.py has no __all__: say which of its names are stable"
    defined = defined_names(package / "__init__.py")
    missing = [name for name in face if name not in defined and not (package / f"{name}.py").is_file()
               and not (package / name / "__init__.py").is_file()]
    assert missing == [], f"{relative(package)}/__init__.py's __all__ names what is neither a submodule nor defined"


@pytest.mark.parametrize("package", PACKAGES, ids=relative)
def test_the_architecture_page_lists_each_packages_stable_names(package: Path) -> None:
    assert documented_faces().get(relative(package)) == public_face(package / "__init__.py"), (
        f"docs/architecture.md's 'What is stable' row for {relative(package)}/ differs from its __all__")
