"""`cpu`: C++ `solve` kernels built with the system compiler and run on host buffers."""
from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

from ..case.cabi import Param
from ..errors import CompileError
from ..tool import run_tool, which
from .base import Artifact, Availability, Capability, Runtime, Toolchain
from .binding import BindSpec, CAbiBinding, load_solve
from .cache import BuildCache
from .host_runtime import HostRuntime, cpu_model

BASE_FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17")
# Functions the C runtime adds to every shared object; never part of a kernel's ISA.
_RUNTIME_SYMBOLS = re.compile(r"^(\.plt.*|\.init|\.fini|_init|_fini|frame_dummy|register_tm_clones|deregister_tm_clones|"
                              r"__do_global_dtors_aux|__cxa_finalize@plt|.*@plt|_start)$")
_FUNCTION_HEADER = re.compile(r"^[0-9a-f]+ <(?P<name>[^>]+)>:\s*$", re.M)


class CpuToolchain(Toolchain):
    name = "cpu"
    extensions = (".cpp", ".cc", ".cxx")
    isa_family = "x86"

    def compiler(self) -> str | None:
        return which(os.environ.get("CXX", "g++"))

    def availability(self) -> Availability:
        compiler = self.compiler()
        if compiler is None:
            return Availability(Capability.UNAVAILABLE, "no C++ compiler: g++ (or $CXX) is not on PATH; "
                                "install it with `apt-get install g++`")
        return Availability(Capability.RUN, f"{compiler} on {cpu_model()}", {"compiler": compiler})

    @functools.lru_cache(maxsize=1)
    def identity(self) -> str:
        compiler = self.compiler() or "g++"
        version = run_tool([compiler, "--version"], timeout=30).stdout.splitlines()[:1]
        # -march=native makes the code depend on the host CPU: it is part of the identity.
        return f"{' '.join(version)} | {cpu_model()}"

    def flags(self) -> tuple[str, ...]:
        return BASE_FLAGS + self.extra_flags

    def build(self, source: Path, cache: BuildCache) -> Artifact:
        compiler = self.compiler()
        if compiler is None:
            raise FileNotFoundError(self.availability().reason)
        key = cache.key(source, self.name, self.identity(), None, self.flags())
        final = cache.entry(key) / "kernel.so"
        # The command as it builds this source into the cache (recorded even when the build is reused).
        command = shlex.join([compiler, *self.flags(), "-o", str(final), str(source)])
        started = time.perf_counter()
        with cache.locked(key):
            if cache.lookup(key, "kernel.so") is not None:
                return Artifact(self.name, source, final, None, command, "", key, True, time.perf_counter() - started)
            staging = cache.staging(key)
            result = run_tool([compiler, *self.flags(), "-o", staging / "kernel.so", source], timeout=300)
            if not result.ok:
                shutil.rmtree(staging, ignore_errors=True)
                raise CompileError(result, str(source))
            cache.publish(key, staging)
        return Artifact(self.name, source, final, None, command, result.stderr, key, False, time.perf_counter() - started)

    def load(self, artifact: Artifact, params: Sequence[Param]) -> Any:
        library, entry = load_solve(artifact.path, params)
        return CAbiLoaded(params, entry)

    def runtime(self) -> Runtime:
        return HostRuntime()

    def disassemble(self, artifact: Artifact) -> dict[str, str]:
        objdump = which("objdump")
        if objdump is None:
            return {}
        result = run_tool([objdump, "-d", "--no-show-raw-insn", "-M", "intel", artifact.path], timeout=120)
        return split_objdump_functions(result.stdout) if result.ok else {}


class CAbiLoaded:
    """A loaded C ABI entry point; `bind` builds the buffers of one call."""

    def __init__(self, params: Sequence[Param], entry: Any) -> None:
        self.params = tuple(params)
        self.entry = entry

    def bind(self, spec: BindSpec, runtime: Runtime) -> CAbiBinding:
        return CAbiBinding(self.params, spec, runtime, self.entry)


def split_objdump_functions(text: str) -> dict[str, str]:
    """Split GNU/LLVM objdump -d output into {function: body}, dropping C runtime helpers."""
    functions: dict[str, str] = {}
    headers = list(_FUNCTION_HEADER.finditer(text))
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        name = header.group("name")
        if not _RUNTIME_SYMBOLS.match(name):
            functions[name] = text[header.end():end].strip("\n")
    return functions
