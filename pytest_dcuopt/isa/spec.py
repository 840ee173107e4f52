"""`IsaSpec`: one validated `@pytest.mark.isa(...)`.

Keyword arguments (all optional, at least one check is required):

    require        pattern | [patterns] | {pattern: min_count}   instructions that must appear
    forbid         pattern | [patterns] | {pattern: max_count}   instructions that must not (more than max) appear
    methods        id | [ids]      method ids whose signatures (isa/data/isa_signatures.json) must appear
    function       name | [names]  scope: functions to check (exact, demangled, bare name or glob);
                                   default: every function of the branch's own binary
    family         name | [names]  ISA families the mark applies to (x86, amdgcn, dcu, sass; amdgcn covers dcu)
    arch           glob | [globs]  target archs the mark applies to (gfx90a, gfx9*, sm_9*)
    max_vgprs, max_sgprs, max_agprs, max_registers, max_shared_bytes, max_scratch_bytes, max_spills,
    min_occupancy  resource bounds per checked function
    reason         text shown with every failure (what the expectation means)
    strict         an inconclusive verdict fails the test instead of skipping it

A pattern is a Python regular expression, matched case-insensitively against one instruction at
a time; `@name` names a pattern set of the registry (e.g. `@scratch_traffic`).
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import DcuOptError
from ..markers import ISA_MARKER, keyword_only
from .model import FAMILIES, FAMILY_COVERS

BOUNDS: dict[str, str] = {  # bound -> ResourceUsage field
    "max_vgprs": "registers", "max_sgprs": "sgprs", "max_agprs": "agprs", "max_registers": "registers",
    "max_shared_bytes": "shared_bytes", "max_scratch_bytes": "scratch_bytes", "max_spills": "spills",
    "min_occupancy": "occupancy",
}
ALLOWED: tuple[str, ...] = ("require", "forbid", "methods", "function", "family", "arch", *BOUNDS, "reason", "strict")


class IsaMarkError(DcuOptError):
    """An isa mark with an unknown keyword, a bad value or an invalid pattern."""


@dataclass(frozen=True)
class IsaSpec:
    require: tuple[tuple[str, int], ...] = ()  # (pattern, minimum count)
    forbid: tuple[tuple[str, int], ...] = ()  # (pattern, maximum count)
    methods: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    archs: tuple[str, ...] = ()
    bounds: tuple[tuple[str, int], ...] = ()
    reason: str = ""
    strict: bool = False
    origin: str = field(default="", compare=False)

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any], args: tuple[Any, ...] = (), origin: str = "") -> IsaSpec:
        where = keyword_only(ISA_MARKER, args, origin, "isa(require=['global_load_dwordx4'])", IsaMarkError)
        unknown = [k for k in kwargs if k not in ALLOWED]
        if unknown:
            raise IsaMarkError(f"isa mark{where} can't have {unknown[0]!r} keyword argument; "
                               f"allowed: {', '.join(ALLOWED)}")
        spec = cls(
            require=_counted(kwargs.get("require"), "require", 1, where),
            forbid=_counted(kwargs.get("forbid"), "forbid", 0, where),
            methods=_names(kwargs.get("methods"), "methods", where),
            functions=_names(kwargs.get("function"), "function", where),
            families=_names(kwargs.get("family"), "family", where), archs=_names(kwargs.get("arch"), "arch", where),
            bounds=tuple((k, _bound(k, kwargs[k], where)) for k in BOUNDS if k in kwargs),
            reason=_text(kwargs.get("reason", ""), "reason", where), strict=_flag(kwargs.get("strict", False), where),
            origin=origin,
        )
        spec._check(where)
        return spec

    def _check(self, where: str) -> None:
        if not (self.require or self.forbid or self.methods or self.bounds):
            raise IsaMarkError(f"isa mark{where} checks nothing: give require=, forbid=, methods= or a resource bound "
                               "such as max_spills=0")
        bad = [f for f in self.families if f not in FAMILIES]
        if bad:
            raise IsaMarkError(f"isa mark{where}: family {bad[0]!r} is not an ISA family; "
                               f"use one of {', '.join(FAMILIES)}")
        from .signature_registry import load

        registry = load()
        for pattern, _ in self.require + self.forbid:
            if pattern.startswith("@"):
                try:
                    registry.pattern_set(pattern[1:], "x86")
                except KeyError as exc:
                    raise IsaMarkError(f"isa mark{where}: {exc.args[0]}") from None
                continue
            try:
                re.compile(pattern, re.IGNORECASE)
            except re.error as exc:
                raise IsaMarkError(f"isa mark{where}: pattern {pattern!r} is not a valid regular expression ({exc}); "
                                   "escape literal brackets and dots, e.g. r'v\\[0:3\\]'") from None
        for method in self.methods:
            try:
                registry.method(method)
            except KeyError as exc:
                raise IsaMarkError(f"isa mark{where}: {exc.args[0]}") from None

    def applies_to(self, family: str, arch: str | None) -> str | None:
        """None when the mark applies to this target, else why not."""
        if self.families and not any(family in FAMILY_COVERS[f] for f in self.families):
            return f"written for family {'/'.join(self.families)}, the target is {family}"
        if self.archs and not (arch and any(fnmatch.fnmatch(arch.split(":")[0], a) for a in self.archs)):
            return f"written for arch {'/'.join(self.archs)}, the target is {arch or 'unknown'}"
        return None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.require:
            data["require"] = dict(self.require)
        if self.forbid:
            data["forbid"] = dict(self.forbid)
        for name, value in (("methods", self.methods), ("function", self.functions), ("family", self.families),
                            ("arch", self.archs)):
            if value:
                data[name] = list(value)
        data.update(dict(self.bounds))
        if self.reason:
            data["reason"] = self.reason
        if self.strict:
            data["strict"] = True
        if self.origin:
            data["origin"] = self.origin
        return data


def _counted(value: Any, name: str, default: int, where: str) -> tuple[tuple[str, int], ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = [(v, default) for v in value]
    else:
        raise IsaMarkError(f"isa mark{where}: {name}={value!r} must be a pattern, a list of patterns or a dict "
                           f"pattern -> count")
    for pattern, count in items:
        if not isinstance(pattern, str) or not pattern:
            raise IsaMarkError(f"isa mark{where}: {name} pattern {pattern!r} must be a non-empty string")
        if isinstance(count, bool) or not isinstance(count, int) or count < default:
            raise IsaMarkError(f"isa mark{where}: {name}[{pattern!r}] = {count!r} must be a count >= {default}")
    return tuple(items)


def _names(value: Any, name: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise IsaMarkError(f"isa mark{where}: {name}={value!r} must be a string or a list of strings")


def _bound(name: str, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise IsaMarkError(f"isa mark{where}: {name}={value!r} must be an integer >= 0")
    return value


def _text(value: Any, name: str, where: str) -> str:
    if not isinstance(value, str):
        raise IsaMarkError(f"isa mark{where}: {name}={value!r} must be a string")
    return value


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise IsaMarkError(f"isa mark{where}: strict={value!r} must be True or False")
    return value
