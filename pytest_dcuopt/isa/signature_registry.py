"""The ISA signature registry (isa_signatures.json): expected instructions per method and family.

`load()` validates the file against its JSON schema and compiles every pattern once; a bad
file is a `SignatureFileError` that names the file, the entry and the fix. The path is
`$DCUOPT_ISA_SIGNATURES` when set, else the copy shipped inside the package
(pytest_dcuopt/isa/data/, package data, so a wheel install has it too).

The packaged file is the only copy (tests/unit/isa/test_signature_data.py).
"""
from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import DcuOptError

SIGNATURES_ENV = "DCUOPT_ISA_SIGNATURES"
SIGNATURES_NAME = "isa_signatures.json"
SCHEMA_NAME = "isa_signatures.schema.json"
# Package data, found through importlib.resources (never relative to a source checkout).
PACKAGED_DATA = resources.files(__package__ or "pytest_dcuopt.isa") / "data"
DEFAULT_PATH = Path(str(PACKAGED_DATA / SIGNATURES_NAME))
SCHEMA_PATH = Path(str(PACKAGED_DATA / SCHEMA_NAME))
PATTERN_FLAGS = re.IGNORECASE


class SignatureFileError(DcuOptError):
    """The signature registry is missing or invalid."""


@dataclass(frozen=True)
class FamilySignature:
    """What one method looks like in one ISA family."""

    groups: tuple[tuple[str, ...], ...] = ()  # alternatives; every pattern of one group must match
    resources: Mapping[str, int] = field(default_factory=dict)
    note: str = ""
    no_evidence: str = ""  # non-empty: the method has no instruction of its own in this family (why)


@dataclass(frozen=True)
class MethodSignature:
    method: str
    name: str
    axis: str
    hint: str
    families: Mapping[str, FamilySignature]


@dataclass(frozen=True)
class Registry:
    path: Path
    methods: Mapping[str, MethodSignature]
    pattern_sets: Mapping[str, Mapping[str, tuple[str, ...]]]

    def method(self, method_id: str) -> MethodSignature:
        if method_id not in self.methods:
            raise KeyError(f"unknown method id {method_id!r}; {self.path.name} defines: "
                           f"{', '.join(sorted(self.methods))}")
        return self.methods[method_id]

    def pattern_set(self, name: str, family: str) -> tuple[str, ...]:
        if name not in self.pattern_sets:
            raise KeyError(f"unknown pattern set '@{name}'; {self.path.name} defines: "
                           f"{', '.join('@' + n for n in sorted(self.pattern_sets))}")
        return self.pattern_sets[name].get(family, ())

    def all_patterns(self) -> list[tuple[str, str, str]]:
        """(where, family, pattern) for every pattern in the file."""
        found = [(f"pattern_sets.{name}", family, p) for name, families in self.pattern_sets.items()
                 for family, patterns in families.items() for p in patterns]
        for method_id, method in self.methods.items():
            for family, signature in method.families.items():
                found += [(f"methods.{method_id}", family, p) for group in signature.groups for p in group]
        return found


def signatures_path() -> Path:
    return Path(os.environ[SIGNATURES_ENV]) if os.environ.get(SIGNATURES_ENV) else DEFAULT_PATH


def load(path: Path | None = None) -> Registry:
    return _load(str((path or signatures_path()).resolve()))


@functools.lru_cache(maxsize=4)
def _load(path_text: str) -> Registry:
    path = Path(path_text)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        raise SignatureFileError(f"cannot read the ISA signature registry {path}: {exc}. It ships inside the package "
                                 f"(pytest_dcuopt/isa/data/{SIGNATURES_NAME}); reinstall pytest_dcuopt, or point "
                                 f"${SIGNATURES_ENV} at a valid copy.") from exc
    _validate(data, path)
    methods = {mid: _method(mid, entry) for mid, entry in data["methods"].items()}
    sets = {name: {fam: tuple(p) for fam, p in entry["families"].items()}
            for name, entry in data["pattern_sets"].items()}
    registry = Registry(path, methods, sets)
    for where, family, pattern in registry.all_patterns():
        try:
            re.compile(pattern, PATTERN_FLAGS)
        except re.error as exc:
            raise SignatureFileError(f"{path}: {where} ({family}) pattern {pattern!r} is not a valid regular "
                                     f"expression: {exc}") from exc
    return registry


def _validate(data: Any, path: Path) -> None:
    import jsonschema

    schema_path = path.with_name(SCHEMA_NAME)
    schema = json.loads((schema_path if schema_path.is_file() else SCHEMA_PATH).read_text())
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise SignatureFileError(f"{path} does not follow {SCHEMA_NAME} at {where}: {exc.message}") from None


def _method(method_id: str, entry: Mapping[str, Any]) -> MethodSignature:
    families = {}
    for family, spec in entry["families"].items():
        if spec.get("evidence") == "none":
            families[family] = FamilySignature(no_evidence=spec["reason"])
        else:
            groups = tuple(tuple(group["all"]) for group in spec.get("groups", ()))
            families[family] = FamilySignature(groups, dict(spec.get("resources", {})), spec.get("note", ""))
    return MethodSignature(method_id, entry["name"], entry["axis"], entry["hint"], families)
