"""The `triton` toolchain with no GPU (CI): the contract, the interpreter (correctness, guard zones, labelled
timings), collection by the `.triton.py` suffix, and ahead-of-time ISA for gfx942 / gfx90a / cuda:90 / Hygon.

Fixture case: tests/data/cases/triton_vector_add (baseline: 16-byte loads; `scalar`: 4-byte loads;
`overrun`: stores 3 elements past the end of c). Examples: kernels/vector_add and kernels/row_softmax.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.case.model import load_case
from pytest_dcuopt.errors import CaseError
from pytest_dcuopt.isa.checks import FAIL, INCONCLUSIVE, PASS, evaluate
from pytest_dcuopt.isa.spec import IsaSpec
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.python import PythonToolchain
from pytest_dcuopt.toolchains.triton import TritonToolchain
from pytest_dcuopt.toolchains.triton_contract import derive_contract
from pytest_dcuopt.toolchains.triton_isa import TARGET_ENV, gpu_target, parse_target, target_for
from tests.conftest import CASES, KERNELS

_MISSING = [name for name in ("triton", "torch") if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed: "
                                "`pip install -r scripts/requirements.txt` (pins triton==3.9.0, torch==2.13.0)")

CASE = CASES / "triton_vector_add"
WIDE = {"require": {r"\bbuffer_load_dwordx4\b": 2, r"\bbuffer_store_dwordx4\b": 1}, "family": "amdgcn"}


def state_of(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "run" / "state.json").read_text())


def triton_branches(state: dict[str, Any], case: str) -> dict[str, Any]:
    return state["cases"][case]["toolchains"]["triton"]["branches"]


# ----- contract, targets, collection (no compile) -----------------------------------------------
def test_the_contract_comes_from_the_launcher_and_ref_py() -> None:
    contract = derive_contract(CASE / "kernel.triton.py")
    assert contract.launcher == ("a", "b", "c", "N")
    assert contract.outputs == ("c",) and contract.outputs_source == "ref.py outputs"
    params = {p.name: p for p in contract.params({"N": 7})}
    assert params["a"].pointer and params["a"].const and params["c"].pointer and not params["c"].const
    assert not params["N"].pointer and params["N"].dtype == "int64"
    assert contract.shapes_at({"N": 7}) == {"a": (7,), "b": (7,), "c": (7,)}
    derived = derive_contract(KERNELS / "row_softmax" / "branches" / "triton_row" / "kernel.triton.py")
    assert derived.outputs == ("y",) and derived.outputs_source.startswith("derived")  # ref.py has no `outputs`
    assert derived.default_dims == {"M": 256, "N": 1024}  # dims.triton.json over dims.json


def test_a_launcher_parameter_nobody_declares_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ref.py").write_text("shapes = {'x': ('N',), 'y': ('N',)}\noutputs = ['z']\n"
                                     "def reference(x, y, N):\n    y.copy_(x)\n")
    (tmp_path / "dims.json").write_text('{"N": 8}')
    source = tmp_path / "kernel.triton.py"
    source.write_text("def solve(x, y, N, alpha):\n    pass\n")
    with pytest.raises(CaseError, match=r"parameter 'alpha' is neither a buffer in ref.py `shapes`"):
        derive_contract(source)
    source.write_text("def solve(x, y, N):\n    pass\n")
    with pytest.raises(CaseError, match=r"`outputs` names \['z'\], which are not buffers"):
        derive_contract(source)


def test_a_triton_branch_is_never_claimed_by_the_python_toolchain() -> None:
    case = load_case(CASE)
    assert case.sources_for(PythonToolchain.extensions) == []
    assert sorted(b.name for b in case.sources_for(TritonToolchain.extensions)) == ["baseline", "overrun", "scalar"]


def test_targets_from_the_option_the_environment_or_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_target("gfx90a") == parse_target("hip:gfx90a") and parse_target("gfx90a").isa_arch == "gfx90a"
    assert parse_target("sm_90").label == "cuda:90" == parse_target("cuda:90").label
    assert parse_target("gfx936").family == "dcu" and parse_target("sm_90").family == "sass"
    assert parse_target("x86") is None
    monkeypatch.delenv(TARGET_ENV, raising=False)
    assert target_for("gfx90a")[0] == parse_target("gfx90a")
    target, why = target_for("sm_90,gfx90a")
    assert target is None and f"set ${TARGET_ENV} to one of them" in why
    monkeypatch.setenv(TARGET_ENV, "gfx90a")
    assert target_for("sm_90,gfx90a") == (parse_target("gfx90a"),
                                          f"${TARGET_ENV} (one of the 2 targets --dcuopt-arch names)")
    if gpu_target() is None:
        assert target_for(None) == (parse_target("gfx90a"), f"${TARGET_ENV} (no --dcuopt-arch, no GPU)")
        monkeypatch.delenv(TARGET_ENV)
        assert target_for(None)[0] == parse_target("gfx942")
        assert "the default hip:gfx942" in target_for(None)[1]


def test_importing_the_toolchain_imports_neither_torch_nor_triton() -> None:
    code = ("import sys, pytest_dcuopt.toolchains.triton, pytest_dcuopt.toolchains.triton_isa; "
            "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert found.stdout.strip() == "[]"


# ----- ahead-of-time ISA (a compile subprocess per branch and target, ~2 s) ----------------------
@pytest.fixture(scope="module")
def cache(shared_build_cache: Path) -> BuildCache:
    return BuildCache(shared_build_cache)


def dump_for(arch: str, source: Path, cache: BuildCache) -> Any:
    toolchain = TritonToolchain(arch)
    return toolchain.isa_dump(toolchain.build(source, cache))


def test_gfx942_wide_loads_pass_and_scalar_loads_fail_the_mark(cache: BuildCache) -> None:
    spec = IsaSpec.from_kwargs(WIDE, (), "test")
    wide = dump_for("gfx942", CASE / "kernel.triton.py", cache)
    assert (wide.family, wide.arch, list(wide.functions)) == ("amdgcn", "gfx942", ["add_kernel"])
    assert evaluate(spec, wide, "baseline").outcome == PASS, evaluate(spec, wide, "baseline").message()
    assert any("num_warps=4" in note and "tt.pointer_range" in note for note in wide.notes), wide.notes
    assert wide.resources["add_kernel"].registers and wide.resources["add_kernel"].spills == 0
    scalar = dump_for("gfx942", CASE / "branches" / "scalar" / "kernel.triton.py", cache)
    verdict = evaluate(spec, scalar, "scalar")
    assert verdict.outcome == FAIL
    assert "buffer_load_dwordx4" in verdict.message() and "found 0" in verdict.message()
    assert "buffer_load_dword " in scalar.functions["add_kernel"]


def test_gfx90a_is_disassembled_from_the_hsaco_when_llvm_objdump_knows_it(cache: BuildCache) -> None:
    dump = dump_for("gfx90a", CASE / "kernel.triton.py", cache)
    assert not dump.errors and evaluate(IsaSpec.from_kwargs(WIDE, (), "test"), dump, "baseline").outcome == PASS
    disassembled = "llvm-objdump" in dump.tool
    fallback = any(note.startswith("FALLBACK") for note in dump.notes)
    assert disassembled != fallback, (dump.tool, dump.notes)  # one or the other, and said which


def test_cuda_90_gives_sass_with_16_byte_loads(cache: BuildCache) -> None:
    dump = dump_for("sm_90", CASE / "kernel.triton.py", cache)
    assert (dump.family, dump.arch) == ("sass", "sm_90"), dump.errors
    verdict = evaluate(IsaSpec.from_kwargs({"family": "sass", "require": {r"\bLDG\.E\.128\b": 2}}, (), "t"), dump, "b")
    assert verdict.outcome == PASS, verdict.message()


def test_a_hygon_arch_is_refused_as_inconclusive_never_a_pass(cache: BuildCache) -> None:
    dump = dump_for("gfx936", CASE / "kernel.triton.py", cache)
    assert dump.family == "dcu" and not dump.functions
    assert any("unsupported target: 'gfx936'" in e and "Hygon DCU arch" in e for e in dump.errors), dump.errors
    assert evaluate(IsaSpec.from_kwargs(WIDE, (), "test"), dump, "baseline").outcome == INCONCLUSIVE


# ----- whole runs (pytester subprocesses) -------------------------------------------------------
def test_interpreter_correctness_guard_zones_and_labelled_timing(run_plugin, pytester: pytest.Pytester) -> None:
    """The baseline and `scalar` pass; `overrun` fails alone, naming the buffer and the element; the interpreter's
    timing is labelled as not representative."""
    result = run_plugin(CASE, args=("--dcuopt-toolchain=triton", "-k", "correctness or (benchmark and baseline)"))
    result.assert_outcomes(passed=3, failed=1, deselected=4)
    result.stdout.fnmatch_lines(["*test_correctness_triton?overrun?*", "*wrote past the end of buffer 'c' (*"])
    records = triton_branches(state_of(pytester), "triton_vector_add")
    assert records["overrun"]["correct"] is False and records["baseline"]["correct"] is True
    assert records["scalar"]["correct"] is True
    assert "wrote past the end of buffer 'c'" in records["overrun"]["failure"]["message"]
    timing, device = records["baseline"]["timing"], records["baseline"]["device"]
    if device["triton_mode"] == "interpreter":
        assert timing["representative"] is False and "Triton interpreter" in timing["timer"]
        assert "NOT representative" in timing["note"]


def test_an_isa_mark_judges_the_aot_build_in_a_run(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASE, args=("--dcuopt-toolchain=triton", "--dcuopt-arch=gfx942", "-k", "test_isa"))
    result.assert_outcomes(passed=1, failed=1, deselected=6)
    result.stdout.fnmatch_lines(["*test_isa_triton?scalar?*", "*buffer_load_dwordx4*"])
    isa = triton_branches(state_of(pytester), "triton_vector_add")["baseline"]["isa"]
    assert isa["outcome"] == "pass" and isa["arch"] == "gfx942"


def test_auto_backends_collect_triton_branches_only_as_triton(pytester: pytest.Pytester) -> None:
    shutil.copytree(CASE, pytester.path / CASE.name)
    result = pytester.runpytest_subprocess(CASE.name, "--collect-only", "-q", "-p", "no:cacheprovider")
    lines = [line for line in result.stdout.lines if "::test_" in line]
    assert lines and all("_triton[" in line for line in lines), lines


def test_the_example_suites_triton_branches_pass_under_the_interpreter(run_plugin) -> None:
    result = run_plugin(KERNELS / "vector_add", KERNELS / "row_softmax",
                        args=("--dcuopt-toolchain=triton", "-k", "correctness", "--dcuopt-examples=10"))
    result.assert_outcomes(passed=3, deselected=6)
