"""isa/data/isa_signatures.json: schema, the original 26 method ids, and every pattern backed by a real dump."""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from pytest_dcuopt.isa import signature_registry as signatures
from pytest_dcuopt.isa.instruction_lines import instructions
from pytest_dcuopt.isa.model import FAMILIES

ISA = Path(__file__).parents[2] / "data" / "isa"

# The original hygon-hip-kernel-optimizer method registry (seed-workflow.md section 7.1).
ORIGINAL_IDS = {
    "compute.mmac_tensor_core", "compute.mixed_precision_fp8_bf8", "compute.launch_config_wave64",
    "compute.thread_coarsening", "compute.register_pressure_control", "compute.fast_math_intrinsics",
    "compute.inline_asm_builtin", "memory.coalesced_access", "memory.vectorized_global_access",
    "memory.aligned_layout_transform", "memory.lds_tiling", "memory.global_to_lds_async", "memory.matrix_load_mls",
    "memory.ds_read_matrix_layout", "memory.lds_bank_conflict", "memory.cache_policy_glc_slc",
    "memory.ck_tile_named_pipeline", "memory.epilogue_fusion", "latency.waitcnt_pipeline", "latency.reduce_barrier",
    "latency.wavefront_shuffle_ds_bpermute", "latency.ilp_unroll", "latency.persistent_scheduler",
    "latency.split_k_streamk", "latency.salu_valu_phase_balance", "latency.sqtt_stall_triage",
}

# Dumps per family: real tool output, and for "dcu" the recorded samples. A DCU pattern may also be backed by
# real AMD gfx9 output, since DCU code is gfx9 AMDGCN (its own mnemonics, v_mmac_* and friends, exist only in
# the recorded samples).
DUMPS = {
    "x86": ["x86/*.objdump.txt"],
    "amdgcn": ["amdgcn/*.objdump.txt", "amdgcn/*.s"],
    "dcu": ["dcu/recorded_*", "amdgcn/*.objdump.txt", "amdgcn/*.s"],
    "sass": ["sass/*.sass.txt"],
}


@cache
def dump_lines(family: str) -> tuple[str, ...]:
    found: list[str] = []
    for pattern in DUMPS[family]:
        for path in sorted(ISA.glob(pattern)):
            text = path.read_text()
            parser_family = "amdgcn" if family == "dcu" else family
            found += [i.text for i in instructions(text, parser_family)]
    return tuple(found)


def test_the_registry_follows_its_schema_and_has_the_original_26_ids() -> None:
    registry = signatures.load()
    assert set(registry.methods) == ORIGINAL_IDS
    for method in registry.methods.values():
        assert set(method.families) == set(FAMILIES)
        assert method.hint and method.name


@pytest.mark.parametrize("where,family,pattern", signatures.load().all_patterns(),
                         ids=lambda v: v if isinstance(v, str) and len(v) < 40 else None)
def test_every_pattern_matches_a_line_of_a_real_or_recorded_dump(where: str, family: str, pattern: str) -> None:
    import re

    compiled = re.compile(pattern, signatures.PATTERN_FLAGS)
    lines = dump_lines(family)
    assert lines, f"no {family} dump lines under {ISA}"
    assert any(compiled.search(line) for line in lines), (
        f"{where} ({family}) pattern {pattern!r} matches no instruction of the {family} dumps {DUMPS[family]}: "
        "add a real (or, for DCU, recorded) dump line that shows it, or drop the pattern")


def test_methods_without_instruction_evidence_say_why() -> None:
    registry = signatures.load()
    none = [(m, f) for m, method in registry.methods.items() for f, s in method.families.items() if s.no_evidence]
    assert ("memory.coalesced_access", "amdgcn") in none and ("latency.sqtt_stall_triage", "sass") in none
    assert all(registry.methods[m].families[f].no_evidence.strip() for m, f in none)


def test_dcu_signatures_use_hygon_mnemonics_not_amd_ones() -> None:
    registry = signatures.load()
    mmac = registry.method("compute.mmac_tensor_core").families
    assert all("v_mmac" in p for group in mmac["dcu"].groups for p in group)
    assert not any("v_mmac" in p for group in mmac["amdgcn"].groups for p in group)


def test_an_invalid_pattern_names_file_entry_and_pattern(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads(signatures.DEFAULT_PATH.read_text())
    data["methods"]["memory.lds_tiling"]["families"]["amdgcn"]["groups"][0]["all"][0] = "ds_read(["
    broken = tmp_path / "isa_signatures.json"
    broken.write_text(json.dumps(data))
    monkeypatch.setenv(signatures.SIGNATURES_ENV, str(broken))
    with pytest.raises(signatures.SignatureFileError,
                       match=r"methods\.memory\.lds_tiling \(amdgcn\) pattern 'ds_read\(\['"):
        signatures.load()


def test_a_schema_violation_names_where(tmp_path: Path) -> None:
    data = json.loads(signatures.DEFAULT_PATH.read_text())
    del data["methods"]["memory.lds_tiling"]["families"]["sass"]
    broken = tmp_path / "isa_signatures.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(signatures.SignatureFileError,
                       match=r"methods/memory.lds_tiling/families.*'sass' is a required"):
        signatures.load(broken)


def test_unknown_names_list_what_exists() -> None:
    registry = signatures.load()
    with pytest.raises(KeyError, match=r"unknown method id 'memory.vectorise'.*memory.vectorized_global_access"):
        registry.method("memory.vectorise")
    with pytest.raises(KeyError, match=r"unknown pattern set '@spills'.*@scratch_traffic"):
        registry.pattern_set("spills", "sass")
