"""`cpu`: C++ `solve` kernels built with the system compiler and run on host buffers."""
from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..case.cabi import Param
from ..external_tools import run_tool, which
from .base import Artifact, Availability, Capability, LoadedKernel, Runtime, Toolchain
from .binding import BindSpec
from .build import Compiled, build_cached, run_compiler
from .cabi_binding import CAbiBinding, load_solve
from .cache import BuildCache
from .host_runtime import HostRuntime, cpu_model

BASE_FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17")


@functools.cache  # keyed on the compiler path: one `--version` run per compiler and process
def _compiler_identity(compiler: str) -> str:
    version = run_tool([compiler, "--version"], timeout=30).stdout.splitlines()[:1]
    # -march=native makes the code depend on the host CPU: it is part of the identity.
    return f"{' '.join(version)} | {cpu_model()}"


class CpuToolchain(Toolchain):
    name = "cpu"
    extensions = (".cpp", ".cc", ".cxx")
    isa_family = "x86"  # its ISA is read by the family's reader (isa/x86.py), the default `disassemble`
    checks_timed_calls = True  # host timing (timing/host.py) brackets every call

    def compiler(self) -> str | None:
        return which(os.environ.get("CXX", "g++"))

    def availability(self) -> Availability:
        compiler = self.compiler()
        if compiler is None:
            return Availability(Capability.UNAVAILABLE, "no C++ compiler: g++ (or $CXX) is not on PATH; "
                                "install it with `apt-get install g++`")
        return Availability(Capability.RUN, f"{compiler} on {cpu_model()}", {"compiler": compiler})

    def identity(self) -> str:
        return _compiler_identity(self.compiler() or "g++")

    def flags(self) -> tuple[str, ...]:
        return BASE_FLAGS + self.extra_flags

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        compiler = self.compiler()
        if compiler is None:
            raise FileNotFoundError(self.availability().reason)
        # The build records its command and log beside the library (the key marks that layout).
        key = cache.key(source, self.name, self.identity(), None, (*self.flags(), "records:command.txt"))

        def compile_into(staging: Path) -> Compiled:
            result = run_compiler([compiler, *self.flags(), "-o", staging / "kernel.so", source], source, timeout=300)
            return Compiled(result.command_line, result.stderr)

        return build_cached(self.name, source, cache, key, None, compile_into)

    def load(self, artifact: Artifact, params: Sequence[Param]) -> LoadedKernel:
        _, entry = load_solve(artifact.path, params)
        return CAbiLoaded(params, entry)

    def runtime(self) -> Runtime:
        return HostRuntime()


class CAbiLoaded:
    """A loaded C ABI entry point; `bind` builds the buffers of one call."""

    def __init__(self, params: Sequence[Param], entry: Any) -> None:
        self.params = tuple(params)
        self.entry = entry

    def bind(self, spec: BindSpec, runtime: Runtime) -> CAbiBinding:
        return CAbiBinding(self.params, spec, runtime, self.entry)
