"""The build steps every compiled toolchain shares: cache key, lock, lookup, staging, compile, publish.

A toolchain supplies only its compile step (`compile_into(staging) -> Compiled`); `build_cached` records the
exact command line and the compiler's log beside the output, so a cache hit reports them too. The same
lock-lookup-stage-publish cycle makes the cuda shim object and the adapted HIP headers (`cached_entry`).
"""
from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..errors import CompileError
from ..external_tools import ToolResult, run_tool
from .base import Artifact
from .cache import BuildCache

KERNEL_FILE = "kernel.so"
COMMAND_FILE = "command.txt"


@dataclass(frozen=True)
class Compiled:
    """What a compile step did: the command line (naming the staging folder) and the log to keep."""

    command: str
    log: str


def cached_entry(cache: BuildCache, key: str, filename: str, make: Callable[[Path], Any]) -> tuple[Path, bool]:
    """`<cache>/<key>/<filename>`, made once across processes: (its path, whether this call made it).

    `make(staging)` writes `filename` (and anything else) into an empty staging folder, which is
    published with one rename; on any failure the staging folder is removed and the error propagates.
    """
    with cache.locked(key):
        found = cache.lookup(key, filename)
        if found is not None:
            return found, False
        staging = cache.staging(key)
        try:
            make(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return cache.publish(key, staging) / filename, True


def build_cached(toolchain: str, source: Path, cache: BuildCache, key: str, arch: str | None,
                 compile_into: Callable[[Path], Compiled], log_file: str = "build.log") -> Artifact:
    """Build `source` into `<cache>/<key>/kernel.so` with `compile_into(staging)`, or reuse the cached build.

    The recorded command names the published folder, not the staging one it ran in.
    """
    started = time.perf_counter()

    def make(staging: Path) -> None:
        compiled = compile_into(staging)
        (staging / COMMAND_FILE).write_text(compiled.command.replace(str(staging), str(cache.entry(key))))
        (staging / log_file).write_text(compiled.log)

    path, made = cached_entry(cache, key, KERNEL_FILE, make)
    command, log = (path.parent / COMMAND_FILE).read_text(), (path.parent / log_file).read_text()
    return Artifact(toolchain, source, path, arch, command, log, key, not made, time.perf_counter() - started)


def run_compiler(command: Sequence[str | Path], source: Path, timeout: float, env: Mapping[str, str] | None = None,
                 on_failure: Callable[[ToolResult], NoReturn] | None = None) -> ToolResult:
    """Run a compiler; a failure raises `on_failure(result)`'s error, by default a CompileError naming `source`."""
    result = run_tool(command, timeout=timeout, env=env)
    if not result.ok:
        if on_failure is not None:
            on_failure(result)
        raise CompileError(result, str(source))
    return result
