from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_dcuopt.case.model import load_case
from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.errors import CaseError
from pytest_dcuopt.tool import run_tool
from pytest_dcuopt.toolchains import make_toolchain, registered_names
from pytest_dcuopt.toolchains.cache import BuildCache


def test_run_tool_records_the_command_and_output() -> None:
    result = run_tool([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"])
    assert (result.returncode, result.stdout.strip(), result.stderr.strip()) == (3, "out", "err")
    assert result.command_line.startswith(sys.executable) and not result.ok


def test_run_tool_kills_at_the_timeout() -> None:
    result = run_tool([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert result.timed_out and result.returncode == 124 and result.seconds < 10
    assert "timed out after 0.5 s" in result.stderr


def test_run_tool_reports_a_missing_program() -> None:
    result = run_tool(["dcuopt-no-such-program"])
    assert result.returncode == 127 and not result.ok


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


def write_case(root: Path, dims: object, ref: str = "def reference(x, y, N):\n    y.copy_(x)\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ref.py").write_text(ref)
    (root / "dims.json").write_text(json.dumps(dims) if not isinstance(dims, str) else dims)
    (root / "kernel.cpp").write_text("")
    return root


def test_case_discovers_baseline_and_branches(tmp_path: Path) -> None:
    root = write_case(tmp_path / "c", {"N": 8})
    for name in ("b2", "b1"):
        (root / "branches" / name).mkdir(parents=True)
        (root / "branches" / name / "kernel.cpp").write_text("")
    case = load_case(root)
    assert [b.name for b in case.branches] == ["baseline", "b1", "b2"]


@pytest.mark.parametrize(("dims", "message"), [
    ("[1, 2]", "non-empty JSON object"), ("{}", "non-empty JSON object"), ('{"N": true}', "is not a number"),
])
def test_dims_json_errors(tmp_path: Path, dims: str, message: str) -> None:
    with pytest.raises(CaseError, match=message):
        load_case(write_case(tmp_path / "c", dims))


@pytest.mark.parametrize(("extra", "message"), [
    ("dim_ranges = {'M': (1, 4)}", "not in dims.json"),
    ("dim_ranges = {'N': (5, 1)}", "0 <= lo <= hi"),
    ("inputs = {'x': ('gauss', 0, 1)}", "is not a value domain"),
    ("shapes = {'x': 'N'}", "must map pointer parameters"),
    ("atol = -1", "non-negative"),
    ("flops = 3", "must be a function of the dims"),
])
def test_reference_declarations_are_validated(tmp_path: Path, extra: str, message: str) -> None:
    root = write_case(tmp_path / "c", {"N": 8}, f"def reference(x, y, N):\n    pass\n{extra}\n")
    with pytest.raises(CaseError, match=message):
        load_reference(root / "ref.py", {"N": 8})


def test_default_dim_range_is_one_to_the_default(tmp_path: Path) -> None:
    root = write_case(tmp_path / "c", {"N": 64, "alpha": 0.5})
    assert load_reference(root / "ref.py", {"N": 64, "alpha": 0.5}).dim_ranges == {"N": (1, 64)}
