"""What a build's cache key follows, the toolchain registry, and a real cpu build cached and disassembled."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.toolchains import make_toolchain, registered_names
from pytest_dcuopt.toolchains.cache import BuildCache


def test_cache_key_follows_source_headers_flags_and_compiler(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache")
    (tmp_path / "common.h").write_text("#define W 4\n")
    source = tmp_path / "k.cpp"
    source.write_text('#include "common.h"\nint f() { return W; }\n')
    key = cache.key(source, "cpu", "g++ 12", None, ("-O3",))
    assert key == cache.key(source, "cpu", "g++ 12", None, ("-O3",))
    assert key != cache.key(source, "cpu", "g++ 12", None, ("-O2",))
    assert key != cache.key(source, "cpu", "g++ 13", None, ("-O3",))
    (tmp_path / "common.h").write_text("#define W 8\n")
    assert key != cache.key(source, "cpu", "g++ 12", None, ("-O3",))


def test_registry_names_builtin_toolchains_and_rejects_unknown() -> None:
    assert {"cpu", "python"} <= set(registered_names())
    with pytest.raises(KeyError, match=r"unknown toolchain 'nope'; registered toolchains: .*cpu"):
        make_toolchain("nope")


def test_cpu_build_is_cached_and_disassembled(tmp_path: Path) -> None:
    toolchain = make_toolchain("cpu")
    if not toolchain.availability().can_run:
        pytest.skip(f"cpu toolchain unavailable: {toolchain.availability().reason}")
    source = tmp_path / "kernel.cpp"
    source.write_text('extern "C" void solve(const float* x, float* y, int n) '
                      '{ for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }\n')
    cache = BuildCache(tmp_path / "cache")
    first = toolchain.build(source, cache)
    second = toolchain.build(source, cache)
    assert not first.cached and second.cached and first.path == second.path and first.command == second.command
    assert "-O3" in first.command and "-march=native" in first.command
    functions = toolchain.disassemble(first)
    assert "solve" in functions and "frame_dummy" not in functions and ".plt" not in functions
    assert "ret" in functions["solve"]
