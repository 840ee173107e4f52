"""The isa mark's spec validation and verdicts (pass / fail with closest matches / inconclusive), per family."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.isa import amdgcn, dcu
from pytest_dcuopt.isa.checks import FAIL, INCONCLUSIVE, PASS, Verdict, evaluate
from pytest_dcuopt.isa.functions import split_objdump
from pytest_dcuopt.isa.model import UNSPLIT, IsaDump
from pytest_dcuopt.isa.sass import parse_resource_usage, split_sass
from pytest_dcuopt.isa.spec import IsaMarkError, IsaSpec

ISA = Path(__file__).parents[2] / "data" / "isa"


def read(relative: str) -> str:
    return (ISA / relative).read_text()


@pytest.fixture(scope="module")
def gfx90a() -> IsaDump:
    """Real: the probe kernels built by hipcc for gfx90a, split from llvm-objdump, resources from the remarks."""
    return IsaDump("amdgcn", "gfx90a", "llvm-objdump-15 -d features.gfx90a.co",
                   split_objdump(read("amdgcn/features.gfx90a.objdump.txt")),
                   amdgcn.remark_resources(read("amdgcn/features.gfx90a.remarks.txt")),
                   demangled={"_Z8lds_tilePKfPfi": "lds_tile(float const*, float*, int)",
                              "_Z5pairsPK15HIP_vector_typeIfLj2EEPS0_i": "pairs(HIP_vector_type<float, 2u> const*, "
                                                                        "HIP_vector_type<float, 2u>*, int)",
                              "_Z13private_arrayPKiPfi": "private_array(int const*, float*, int)",
                              "_Z9mfma_tilePKDv4_DF16_S1_PDv16_f": "mfma_tile(...)"})


@pytest.fixture(scope="module")
def sm90() -> IsaDump:
    return IsaDump("sass", "sm_90", "cuobjdump --dump-sass features.sm_90.cubin",
                   split_sass(read("sass/features.sm_90.sass.txt")),
                   parse_resource_usage(read("sass/features.sm_90.resources.txt")))


@pytest.fixture(scope="module")
def x86() -> IsaDump:
    functions = split_objdump(read("x86/features.x86.objdump.txt"))
    return IsaDump("x86", None, "objdump -d -M intel", {k: v for k, v in functions.items() if "@" not in k})


def judge(dump: IsaDump, **mark: Any) -> Verdict:
    verdict = evaluate(IsaSpec.from_kwargs(mark), dump, "case/toolchain/branch")
    json.dumps(verdict.to_json())  # always serialisable into isa_check.json
    return verdict


# ----- the mark's keywords ----------------------------------------------------------------
@pytest.mark.parametrize("kwargs,message", [
    ({"requires": ["x"]}, "can't have 'requires' keyword argument; allowed: require, forbid"),
    ({"require": ["global_load_dwordx4("]}, "pattern 'global_load_dwordx4\\(' is not a valid regular expression"),
    ({"methods": ["memory.vectorise"]}, "unknown method id 'memory.vectorise'"),
    ({"require": ["x"], "family": "arm"}, "family 'arm' is not an ISA family; use one of x86, amdgcn, dcu, sass"),
    ({"family": "amdgcn"}, "checks nothing"),
    ({"require": {"x": 0}}, r"require\['x'\] = 0 must be a count >= 1"),
    ({"forbid": {"x": -1}}, r"forbid\['x'\] = -1 must be a count >= 0"),
    ({"forbid": ["@spill"]}, "unknown pattern set '@spill'"),
    ({"max_spills": "0"}, "max_spills='0' must be an integer >= 0"),
    ({"require": "x", "strict": "yes"}, "strict='yes' must be True or False"),
    ({"require": 3}, "require=3 must be a pattern, a list of patterns or a dict"),
])
def test_bad_marks_are_rejected_quoting_the_key(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(IsaMarkError, match=message):
        IsaSpec.from_kwargs(kwargs, origin="ref.py")


def test_positional_arguments_are_refused() -> None:
    with pytest.raises(IsaMarkError, match="keyword arguments only"):
        IsaSpec.from_kwargs({}, ("global_load_dwordx4",))


def test_applies_to_family_and_arch() -> None:
    spec = IsaSpec.from_kwargs({"require": "x", "family": "amdgcn", "arch": ["gfx9*"]})
    assert spec.applies_to("amdgcn", "gfx90a") is None
    assert spec.applies_to("dcu", "gfx936:sramecc+:xnack-") is None  # a DCU runs AMDGCN
    assert "family amdgcn" in (spec.applies_to("sass", "sm_90") or "")
    assert "arch gfx9*" in (spec.applies_to("amdgcn", "gfx1100") or "")
    assert IsaSpec.from_kwargs({"require": "x", "family": "dcu"}).applies_to("amdgcn", "gfx90a")


# ----- AMDGCN (real hipcc output) ---------------------------------------------------------
def test_require_passes_with_evidence_scoped_to_the_named_function(gfx90a: IsaDump) -> None:
    verdict = judge(gfx90a, require=[r"\bglobal_load_dwordx2\b"], function="pairs")
    assert verdict.outcome == PASS and verdict.scope == ["_Z5pairsPK15HIP_vector_typeIfLj2EEPS0_i"]
    assert verdict.checks[0].evidence[0].startswith("pairs:")


def test_a_failed_require_says_what_was_found_instead_and_the_closest(gfx90a: IsaDump) -> None:
    verdict = judge(gfx90a, require={r"\bglobal_load_dwordx4\b": 2}, function="pairs", reason="16-byte loads")
    assert verdict.outcome == FAIL
    message = verdict.message()
    assert "ISA check FAILED: case/toolchain/branch on gfx90a (amdgcn)" in message
    assert "why: 16-byte loads" in message
    assert "required at least 2, found 0" in message
    assert "closest: global_load_dwordx2 x1 (e.g. pairs:" in message


def test_default_scope_is_every_function_of_the_branch(gfx90a: IsaDump) -> None:
    verdict = judge(gfx90a, require=[r"\bglobal_load_dwordx4\b"])
    assert verdict.outcome == PASS and len(verdict.scope) == 9


def test_missing_function_fails_listing_what_exists_and_globs_match(gfx90a: IsaDump) -> None:
    verdict = judge(gfx90a, require=["s_endpgm"], function="vadd4")
    assert verdict.outcome == FAIL
    assert "no such function in the dump; functions found: lds_tile" in verdict.message()
    assert len(judge(gfx90a, require=["s_endpgm"], function="*_tile").scope) == 2
    assert judge(gfx90a, require=["s_endpgm"], function="_Z8lds_tilePKfPfi").scope == ["_Z8lds_tilePKfPfi"]


def test_forbid_scratch_traffic_catches_a_private_array(gfx90a: IsaDump) -> None:
    verdict = judge(gfx90a, forbid=["@scratch_traffic"], function="private_array")
    assert verdict.outcome == FAIL and "found: private_array:" in verdict.message()
    assert "buffer_store_dword" in verdict.checks[0].evidence[0]
    assert judge(gfx90a, forbid=["@scratch_traffic"], function="lds_tile").outcome == PASS


def test_forbid_with_a_count(gfx90a: IsaDump) -> None:
    assert judge(gfx90a, forbid={r"\bs_barrier\b": 1}, function="lds_tile").outcome == PASS
    assert judge(gfx90a, forbid={r"\bs_barrier\b": 0}, function="lds_tile").outcome == FAIL


def test_methods_pass_fail_with_hint_and_no_evidence_is_inconclusive(gfx90a: IsaDump) -> None:
    assert judge(gfx90a, methods=["memory.lds_tiling"], function="lds_tile").outcome == PASS
    failed = judge(gfx90a, methods=["memory.lds_tiling"], function="pairs")
    assert failed.outcome == FAIL and "fix: No LDS (shared memory) traffic" in failed.message()
    unsure = judge(gfx90a, methods=["memory.coalesced_access"])
    assert unsure.outcome == INCONCLUSIVE and "invisible in the instruction stream" in unsure.message()
    assert judge(gfx90a, methods=["compute.mmac_tensor_core"], function="mfma_tile").outcome == PASS


def test_resource_bounds(gfx90a: IsaDump) -> None:
    assert judge(gfx90a, max_spills=0, min_occupancy=8, function="lds_tile").outcome == PASS
    too_many = judge(gfx90a, max_vgprs=2, function="lds_tile")
    assert too_many.outcome == FAIL and "lds_tile: " in too_many.checks[0].detail
    assert judge(gfx90a, methods=["compute.register_pressure_control"], function="lds_tile").outcome == PASS


def test_a_failed_tool_is_never_verified() -> None:
    broken = IsaDump("amdgcn", "gfx90a", "llvm-objdump -d k.co", errors=["llvm-objdump failed (exit 1): bad ELF"])
    verdict = judge(broken, forbid=["@scratch_traffic"], require=["s_endpgm"], max_spills=0)
    assert verdict.outcome == INCONCLUSIVE
    assert all(c.outcome == INCONCLUSIVE for c in verdict.checks)
    assert "tool error: llvm-objdump failed" in verdict.message()


def test_a_partial_dump_proves_presence_but_not_absence(gfx90a: IsaDump) -> None:
    partial = IsaDump("amdgcn", "gfx90a", "x", dict(gfx90a.functions), errors=["second code object unreadable"])
    assert judge(partial, require=["s_barrier"]).outcome == PASS
    assert judge(partial, forbid=[r"\bv_mfma_f64"]).outcome == INCONCLUSIVE
    assert judge(partial, forbid=["@scratch_traffic"]).outcome == FAIL  # seen is seen


def test_an_unsplit_dump_cannot_be_narrowed_to_a_function() -> None:
    dump = IsaDump("dcu", "gfx936", "dccobjdump", {UNSPLIT: "\tv_mmac_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]"})
    assert judge(dump, methods=["compute.mmac_tensor_core"]).outcome == PASS
    assert judge(dump, methods=["compute.mmac_tensor_core"], function="gemm").outcome == INCONCLUSIVE


def test_empty_functions_are_inconclusive() -> None:
    dump = IsaDump("amdgcn", "gfx90a", "x", {"k": "\t; just a comment\n"})
    assert judge(dump, require=["s_endpgm"]).outcome == INCONCLUSIVE


# ----- Hygon DCU (recorded samples) -----------------------------------------------------------
def test_recorded_dcu_sample_verifies_the_dcu_methods() -> None:
    dump = IsaDump("dcu", "gfx936", "recorded", dcu.split_listing(read("dcu/recorded_gfx936.s")), recorded=True)
    verdict = judge(dump,
                    methods=["compute.mmac_tensor_core", "memory.ds_read_matrix_layout", "latency.waitcnt_pipeline"],
                    function="_Z17gemm_f16_pipelinev")
    assert verdict.outcome == PASS, verdict.message()
    assert "[RECORDED sample]" in verdict.message()
    assert judge(dump, methods=["memory.global_to_lds_async"], function="_Z15lds_direct_loadv").outcome == PASS
    assert judge(dump, methods=["compute.mixed_precision_fp8_bf8"], function="_Z10microbenchv").outcome == PASS
    no_mmac = judge(dump, methods=["compute.mmac_tensor_core"], function="_Z15lds_direct_loadv")
    assert no_mmac.outcome == FAIL and "v_mmac" in no_mmac.message()


def test_amd_names_do_not_satisfy_dcu_mmac(gfx90a: IsaDump) -> None:
    as_dcu = IsaDump("dcu", "gfx936", "x", {"k": gfx90a.functions["_Z9mfma_tilePKDv4_DF16_S1_PDv16_f"]})
    assert judge(as_dcu, methods=["compute.mmac_tensor_core"]).outcome == FAIL
    assert judge(as_dcu, methods=["memory.matrix_load_mls"]).outcome == FAIL


def test_recorded_gfx938_matrix_load_verifies_mls() -> None:
    dump = IsaDump("dcu", "gfx938", "recorded", dcu.split_listing(read("dcu/recorded_gfx938.s")), recorded=True)
    assert judge(dump, methods=["memory.matrix_load_mls"]).outcome == PASS
    amdgcn_only = IsaSpec.from_kwargs({"methods": "memory.matrix_load_mls", "family": "amdgcn"})
    assert amdgcn_only.applies_to("dcu", "gfx938") is None


# ----- NVIDIA SASS (real cuobjdump output) -------------------------------------------------
def test_sass_wide_loads_spills_and_shared_memory(sm90: IsaDump) -> None:
    assert judge(sm90, require=[r"\bLDG\.E\.128\b"], function="vec4_copy").outcome == PASS
    scalar = judge(sm90, require=[r"\bLDG\.E\.128\b"], function="scalar_copy")
    assert scalar.outcome == FAIL and "closest: LDG.E" in scalar.message()
    spill = judge(sm90, forbid=["@scratch_traffic"], max_registers=16, function="spill_kernel")
    assert spill.outcome == FAIL and {c.outcome for c in spill.checks} == {FAIL}
    assert "STL" in spill.message() and "spill_kernel: 32" in spill.message()
    assert judge(sm90, methods=["memory.lds_tiling", "latency.wavefront_shuffle_ds_bpermute"],
                 function="smem_reduce").outcome == PASS
    assert "use max_registers for sass" in judge(sm90, max_vgprs=8, function="vec4_copy").message()


# ----- x86 (real objdump output) -----------------------------------------------------------
def test_x86_checks_and_unknown_resources(x86: IsaDump) -> None:
    assert judge(x86, methods=["memory.cache_policy_glc_slc"], function="stream_store").outcome == PASS
    assert judge(x86, methods=["compute.fast_math_intrinsics"], function="fast_rsqrt").outcome == PASS
    scalar = judge(x86, require=[r"\bv?addps\b"], function="atomic_count")
    assert scalar.outcome == FAIL and scalar.checks[0].closest
    unknown = judge(x86, max_registers=8, function="packed_fma")
    assert unknown.outcome == INCONCLUSIVE and "reports no resource usage" in unknown.message()
