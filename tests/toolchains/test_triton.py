"""The `triton` toolchain with no GPU (CI): the contract, the interpreter (correctness, guard zones, labelled
timings), collection by the `.triton.py` suffix, and ahead-of-time ISA for gfx942 / gfx90a / cuda:90 / Hygon.

Fixture case: tests/data/cases/triton_vector_add (baseline: 16-byte loads; `scalar`: 4-byte loads;
`overrun`: stores 3 elements past the end of c); tests/data/cases/triton_hints for variants. Examples:
kernels/vector_add, kernels/row_softmax and kernels/matmul (triton_dot with a config and a hint variant).
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.errors import CaseError
from pytest_dcuopt.isa.checks import FAIL, INCONCLUSIVE, PASS, evaluate
from pytest_dcuopt.isa.spec import IsaSpec
from pytest_dcuopt.toolchains.base import BranchUnavailable
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.python import PythonToolchain
from pytest_dcuopt.toolchains.triton import TritonToolchain
from pytest_dcuopt.toolchains.triton_contract import derive_contract
from pytest_dcuopt.toolchains.triton_isa import TARGET_ENV, gpu_target, parse_target, target_for
from pytest_dcuopt.toolchains.triton_variants import (
    check_against_launcher,
    declared_variants,
    split_variant_source,
    variant_source,
)
from tests.conftest import CASES, KERNELS

_MISSING = [name for name in ("triton", "torch") if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed: "
                                "`pip install -r scripts/requirements.txt` (pins triton==3.9.0, torch==2.13.0)")

CASE = CASES / "triton_vector_add"
HINTS = CASES / "triton_hints"
POSITIONAL = CASES / "contract_triton_positional"
MATMUL_DOT = KERNELS / "matmul" / "branches" / "triton_dot" / "kernel.triton.py"
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


def test_a_launcher_with_other_names_is_bound_by_position_like_a_c_abi_kernel() -> None:
    contract = derive_contract(POSITIONAL / "kernel.triton.py")
    assert contract.launcher == ("A", "B", "C", "N") and contract.tunables == ("BLOCK",)
    assert contract.launcher_names == {"A": "a", "B": "b", "C": "c", "N": "n"}
    assert contract.outputs == ("C",) and contract.shapes_at({"N": 5}) == {"A": (5,), "B": (5,), "C": (5,)}
    assert contract.binding is not None
    assert contract.binding.to_json() == {"by": "position", "map": {"a": "A", "b": "B", "c": "C", "n": "N"}}
    assert derive_contract(CASE / "kernel.triton.py").binding is None  # the case's own names: by name
    with pytest.raises(CaseError) as refused:
        derive_contract(POSITIONAL / "branches" / "one_short" / "kernel.triton.py")
    assert "kernel:    solve(a, b, c)" in str(refused.value)
    assert "reference: reference(A: buffer, B: buffer, C: buffer, N: int dim)" in str(refused.value)


# ----- variants: declared in the branch, read with ast --------------------------------------------
def test_the_three_declaration_forms_become_named_variants(tmp_path: Path) -> None:
    source = tmp_path / "kernel.triton.py"
    source.write_text(
        "import triton\n"
        "variants = {'wide': dict(BLOCK=1024, num_warps=8), 'plain_ops': {'env': {'AMDGCN_USE_BUFFER_OPS': '0'}}}\n"
        "configs = [triton.Config({'BLOCK_M': 64, 'BLOCK_N': 32}, num_warps=4, num_stages=2)]\n"
        "variant_grid: dict = {'BLOCK': [256, 512], 'HINTS': [True]}\n"
        "def solve(a, N, BLOCK=256, BLOCK_M=16, BLOCK_N=16, num_warps=4, num_stages=2, HINTS=False):\n    pass\n")
    found = {v.name: v for v in declared_variants(source)}
    assert list(found) == ["wide", "plain_ops", "m64_n32_w4_s2", "block256_hintson", "block512_hintson"]
    assert found["wide"].options == {"BLOCK": 1024, "num_warps": 8} and found["wide"].env == {}
    assert found["plain_ops"].options == {} and found["plain_ops"].env == {"AMDGCN_USE_BUFFER_OPS": "0"}
    assert found["m64_n32_w4_s2"].options == {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2}
    assert found["m64_n32_w4_s2"].origin == "configs[0]" and found["block512_hintson"].origin == "variant_grid"
    branches = TritonToolchain.expand_branches(Branch("b", source))
    assert [b.name for b in branches] == ["b", *(f"b@{name}" for name in found)]
    assert all(b.suffix == ".triton.py" for b in branches)  # still claimed by the triton toolchain alone
    assert split_variant_source(branches[1].source) == (source, "wide")
    assert split_variant_source(source) == (source, None)


def test_a_variant_declaration_that_is_not_a_literal_or_not_a_launcher_option_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "kernel.triton.py"
    source.write_text("SIZES = [1, 2]\nvariant_grid = {'BLOCK': SIZES}\ndef solve(a, N, BLOCK=1):\n    pass\n")
    with pytest.raises(CaseError, match=r"`variant_grid` must be written as literals .* `SIZES` is not one"):
        declared_variants(source)
    assert [b.name for b in TritonToolchain.expand_branches(Branch("b", source))] == ["b"]  # the bare build says why
    source.write_text("variants = {'x': {'BLOK': 64}}\ndef solve(a, N, BLOCK=1):\n    pass\n")
    with pytest.raises(CaseError, match=r"variant 'x' sets \['BLOK'\], which `solve` does not take with a default"):
        check_against_launcher(declared_variants(source)[0], ("BLOCK",), source)


def test_launcher_parameters_with_defaults_are_tunables_not_dims() -> None:
    contract = derive_contract(MATMUL_DOT)
    assert contract.launcher == ("a", "b", "c", "M", "N", "K")
    assert contract.tunables == ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "HINTS")
    assert contract.default_dims == {"M": 128, "N": 128, "K": 128}  # dims.triton.json over dims.json


def test_the_interpreter_never_probes_and_gfx90a_compiles_each_variant(cache: BuildCache) -> None:
    """A variant build under the interpreter says it was not probed; with --dcuopt-arch gfx90a it is compiled,
    and the record keeps its options, environment and kernel metadata (registers and spills from the hsaco)."""
    hinted = variant_source(MATMUL_DOT, "hinted")
    interpreted = TritonToolchain().build(hinted, cache)
    if TritonToolchain().device_platform() is None:
        assert interpreted.details["probe"]["outcome"] == "not probed"
    compiled = TritonToolchain("gfx90a").build(variant_source(MATMUL_DOT, "m128_n64_k32_w8_s3"), cache)
    details = compiled.to_json()["details"]
    assert details["variant"]["options"] == {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 8,
                                             "num_stages": 3}
    assert details["env"]["AMDGCN_USE_BUFFER_OPS"].startswith("unset")  # no variant turned it on or off
    probe = details["probe"]
    assert (probe["outcome"], probe["target"], probe["target_from"]) == ("compiled", "hip:gfx90a", "--dcuopt-arch")
    (kernel,) = probe["kernels"]
    assert (kernel["kernel"], kernel["num_warps"], kernel["num_stages"]) == ("matmul_kernel", 8, 3)
    assert kernel["shared"] > 0 and kernel["registers"] > 0 and kernel["spills"] == 0
    assert compiled.key != interpreted.key  # each variant is a build of its own


def test_the_compiler_rejecting_a_variant_makes_it_unavailable_with_its_reason(cache: BuildCache) -> None:
    with pytest.raises(BranchUnavailable) as raised:
        TritonToolchain("gfx90a").build(variant_source(HINTS / "kernel.triton.py", "rejected"), cache)
    assert "variant 'rejected'" in str(raised.value) and "unavailable on hip:gfx90a" in str(raised.value)
    assert "CompilationError" in str(raised.value) and "target doesn't provide conversion" in str(raised.value)
    assert raised.value.details["variant"]["options"] == {"FP8": True} and raised.value.command


def test_compiled_kernels_reads_num_warps_and_shared_from_the_jit_cache() -> None:
    """What the GPU worker records (`device.triton_kernels`), from a compile with no device (Triton's warmup)."""
    code = f"""
import importlib.util, json, torch
from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from pytest_dcuopt.toolchains.triton_aot import _target_only_driver
from pytest_dcuopt.toolchains.triton import compiled_kernels
driver.set_active(_target_only_driver(GPUTarget("hip", "gfx90a", 64), torch))
spec = importlib.util.spec_from_file_location("branch", {str(CASE / "kernel.triton.py")!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
x = torch.empty(4096)
module.add_kernel.warmup(x, x, x, 4096, BLOCK=1024, num_warps=4, grid=(4,))
print(json.dumps(compiled_kernels(module)))
"""
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "TRITON_INTERPRET": "0", "TRITON_DEFAULT_FP_FUSION": "1"})
    assert found.returncode == 0, found.stderr[-2000:]
    (kernel,) = json.loads(found.stdout.strip().splitlines()[-1])
    assert (kernel["kernel"], kernel["num_warps"], kernel["shared"]) == ("add_kernel", 4, 0)
    assert kernel["n_regs"] is None  # set only once a GPU loads the binary


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


def test_a_launcher_bound_by_position_runs_is_warned_about_and_recorded(run_plugin,
                                                                         pytester: pytest.Pytester) -> None:
    result = run_plugin(POSITIONAL, args=("--dcuopt-toolchain=triton", "-k", "correctness", "--dcuopt-examples=3"))
    result.assert_outcomes(passed=1, failed=2, deselected=3)
    records = triton_branches(state_of(pytester), "contract_triton_positional")
    assert records["baseline"]["correct"] is True
    assert records["baseline"]["observations"]["binding"] == {"by": "position",
                                                              "map": {"a": "A", "b": "B", "c": "C", "n": "N"}}
    assert records["drops_tail"]["correct"] is False  # bound the same way, and still judged
    assert records["drops_tail"]["observations"]["binding"]["by"] == "position"
    assert "kernel:    solve(a, b, c)" in records["one_short"]["error"]["message"]
    assert result.stdout.str().count("PositionalBindingWarning") == 2


def test_an_isa_mark_judges_the_aot_build_in_a_run(run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASE, args=("--dcuopt-toolchain=triton", "--dcuopt-arch=gfx942", "-k", "test_isa"))
    result.assert_outcomes(passed=1, failed=1, deselected=6)
    result.stdout.fnmatch_lines(["*test_isa_triton?scalar?*", "*buffer_load_dwordx4*"])
    isa = triton_branches(state_of(pytester), "triton_vector_add")["baseline"]["isa"]
    assert isa["outcome"] == "pass" and isa["arch"] == "gfx942"


def test_auto_toolchains_collect_triton_branches_only_as_triton(pytester: pytest.Pytester) -> None:
    shutil.copytree(CASE, pytester.path / CASE.name)
    result = pytester.runpytest_subprocess(CASE.name, "--collect-only", "-q", "-p", "no:cacheprovider")
    lines = [line for line in result.stdout.lines if "::test_" in line]
    assert lines and all("_triton[" in line for line in lines), lines


def test_the_example_suites_triton_branches_pass_under_the_interpreter(run_plugin,
                                                                      pytester: pytest.Pytester) -> None:
    result = run_plugin(KERNELS / "vector_add", KERNELS / "row_softmax", KERNELS / "matmul",
                        args=("--dcuopt-toolchain=triton", "-k", "test_correctness", "--dcuopt-examples=10"))
    # vector_add 2, row_softmax 1, matmul 3 (triton_dot, @m128_n64_k32_w8_s3, @hinted): variants run as branches
    result.assert_outcomes(passed=6, deselected=10)
    matmul = triton_branches(state_of(pytester), "matmul")
    assert {name: record["correct"] for name, record in matmul.items()} == {
        "triton_dot": True, "triton_dot@m128_n64_k32_w8_s3": True, "triton_dot@hinted": True}


# ----- the H200 script's summary (tools/device/triton_examples.sh), on a hand-made state.json ----------
def test_the_device_summary_lists_variants_against_their_bare_branch(tmp_path: Path) -> None:
    def record(median: float | None, **extra: Any) -> dict[str, Any]:
        return {"correct": True, "timing": {"median_ms": median, "rounds": 9} if median else None, "device": {},
                "build": {"toolchain": "triton", "command": ""}, **extra}

    kernels = [{"kernel": "matmul_kernel", "num_warps": 8, "num_stages": 3, "shared": 49152, "n_regs": 128,
                "n_spills": 0}]
    branches = {"triton_dot": record(0.02),
                "triton_dot@w8": {**record(0.01), "device": {"triton_mode": "compiled", "triton_kernels": kernels},
                                  "build": {"details": {"probe": {"outcome": "compiled"}}}},
                "triton_dot@bad": {**record(None), "correct": None, "skipped": "unavailable: rejected"}}
    state = {"interrupted": None, "cases": {"matmul": {"toolchains": {"triton": {"branches": branches}}}}}
    (tmp_path / "state.json").write_text(json.dumps(state))
    tool = KERNELS.parent / "tools" / "device" / "triton_examples.py"
    done = subprocess.run([sys.executable, str(tool), str(tmp_path / "state.json"), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "out" / "triton_examples.json").read_text())
    rows = {row["branch"]: row for row in written["branches"]}
    assert rows["triton_dot@w8"]["speedup_vs_bare"] == 2.0 and rows["triton_dot"]["speedup_vs_bare"] is None
    assert rows["triton_dot@w8"]["probe"] == "compiled" and rows["triton_dot@bad"]["correct"] is None
    table = (tmp_path / "out" / "triton_examples.md").read_text()
    assert ("| matmul | triton_dot@w8 | pass | 0.01 | - | 2 | compiled | - | matmul_kernel: w8 s3 shared=49152 "
            "regs=128 spills=0 |") in table
    assert "| matmul | triton_dot@bad | skipped |" in table
    assert "- matmul/triton_dot@bad: unavailable: rejected" in table
