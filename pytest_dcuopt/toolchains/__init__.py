"""Toolchain registry: names -> Toolchain classes, from the `pytest_dcuopt.toolchains` entry points.

Built-in toolchains are listed here too, so a source checkout works without installation.
Selection is always by name through this registry, never by if/elif on the name.
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from importlib.metadata import entry_points

from ..isa.model import ResourceUsage
from .base import Artifact, Availability, Capability, Runtime, Toolchain

__all__ = ["Artifact", "Availability", "Capability", "ResourceUsage", "Runtime", "Toolchain",
           "registered_names", "toolchain_class", "make_toolchain"]

ENTRY_POINT_GROUP = "pytest_dcuopt.toolchains"
BUILTIN: dict[str, str] = {
    "cpu": "pytest_dcuopt.toolchains.cpu:CpuToolchain",
    "python": "pytest_dcuopt.toolchains.python:PythonToolchain",
    "cuda": "pytest_dcuopt.toolchains.cuda:CudaToolchain",
    "hip": "pytest_dcuopt.toolchains.hip:HipToolchain",
    "triton": "pytest_dcuopt.toolchains.triton:TritonToolchain",
}


def _registry() -> dict[str, str]:
    return dict(_installed())


@functools.cache
def _installed() -> tuple[tuple[str, str], ...]:
    """Built-in and installed toolchains, read once per process: scanning every distribution's entry points costs
    about a millisecond, and collection asks hundreds of times (0.85 s of a sweep's start)."""
    found = dict(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        found[entry.name] = entry.value
    return tuple(found.items())


def registered_names() -> list[str]:
    return sorted(_registry())


def toolchain_class(name: str) -> type[Toolchain]:
    registry = _registry()
    if name not in registry:
        raise KeyError(f"unknown toolchain {name!r}; registered toolchains: {', '.join(sorted(registry))}")
    module_name, _, attribute = registry[name].partition(":")
    cls = getattr(importlib.import_module(module_name), attribute)
    if not (isinstance(cls, type) and issubclass(cls, Toolchain)):
        raise TypeError(f"entry point {name!r} -> {registry[name]} is not a Toolchain subclass")
    return cls


def make_toolchain(name: str, arch: str | None = None, extra_flags: Sequence[str] = ()) -> Toolchain:
    return toolchain_class(name)(arch=arch, extra_flags=extra_flags)
