"""Benchmark sizes (ref.py `bench_sizes`): declarations read and refused with the file, the value and the fix;
per-toolchain sizes; per-size records merged, ranked, validated, rendered and gated per size."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.case.model import load_case
from pytest_dcuopt.case.sizes import MAX_SIZES, parse_bench_sizes, select_sizes
from pytest_dcuopt.errors import CaseError
from pytest_dcuopt.gate import Gate, GateRule
from pytest_dcuopt.gate.baseline import Baseline
from pytest_dcuopt.gate.rule import NEW, SAME
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.report.state import build_state, validate_state
from pytest_dcuopt.report.summary import render_summary, terminal_lines
from pytest_dcuopt.timing.policy import summarize

DIMS = {"N": 1000, "alpha": 0.5}
WHERE = "case/ref.py: bench_sizes"


# ----- declarations ---------------------------------------------------------------------------------------------
def test_named_sizes_keep_their_names_order_and_dims() -> None:
    sizes = parse_bench_sizes({"l2": {"N": 65536}, "dram": {"N": 1 << 23, "alpha": 2.0}}, DIMS, WHERE)
    assert [(s.name, dict(s.dims)) for s in sizes] == [("l2", {"N": 65536}), ("dram", {"N": 1 << 23, "alpha": 2.0})]
    assert sizes[1].describe() == "N=8388608, alpha=2.0"


def test_axes_give_every_combination_named_by_its_values() -> None:
    sizes = parse_bench_sizes({"N": [16, 32], "alpha": (0.5, 1.5)}, DIMS, WHERE)
    assert [s.name for s in sizes] == ["N=16-alpha=0.5", "N=16-alpha=1.5", "N=32-alpha=0.5", "N=32-alpha=1.5"]
    assert dict(sizes[3].dims) == {"N": 32, "alpha": 1.5}


@pytest.mark.parametrize(("declared", "says"), [
    ([65536], ["is a list", "named sizes", "axes", "e.g."]),
    ({}, ["is empty", "Remove it to time at the default dims only"]),
    ({"l2": {"N": 64}, "N": [1, 2]}, ["mixes forms", "named sizes ['l2']", "axes ['N']", "Use one"]),
    ({"l2": 64}, ["mixes forms", "'l2' is a int"]),
    ({"a,b": {"N": 64}}, ["size name 'a,b'", "letters, digits", "Rename it"]),
    ({"all": {"N": 64}}, ["size name 'all'", "reserved", "--dcuopt-sizes all"]),
    ({"-x": {"N": 64}}, ["size name '-x'", "not starting with -"]),
    ({"big": {}}, ["bench_sizes['big'] = {} sets no dim", "\"N\": 1048576"]),
    ({"big": {"M": 64}}, ["bench_sizes['big'] sets 'M'", "dims.json does not declare (['N', 'alpha'])",
                          "add the dim to dims.json"]),
    ({"big": {"N": 64.5}}, ["'N' = 64.5 is not an integer", "dims.json gives 'N' as one (1000)", "e.g. 64"]),
    ({"big": {"N": True}}, ["'N' = True is not a number (it is a bool)", "e.g."]),
    ({"big": {"alpha": float("nan")}}, ["'alpha' = nan is not a finite number"]),
    ({"big": {"N": 2**64}}, ["does not fit a 64-bit integer"]),
    ({"N": []}, ["bench_sizes['N'] = [] is an empty axis", "[65536, 1048576]"]),
    ({"N": [64, 128, 64]}, ["repeats 64", "list it once"]),
    ({"N": list(range(1, 40)), "alpha": [0.5, 1.5]}, ["78 sizes", f"more than {MAX_SIZES}"]),
])
def test_a_declaration_that_cannot_be_used_is_refused_naming_file_value_and_fix(declared: Any,
                                                                                says: list[str]) -> None:
    with pytest.raises(CaseError) as raised:
        parse_bench_sizes(declared, DIMS, WHERE)
    message = str(raised.value)
    assert message.startswith(WHERE)
    for part in says:
        assert part in message, message


def test_select_sizes_keeps_the_declaration_order() -> None:
    sizes = parse_bench_sizes({"a": {"N": 1}, "b": {"N": 2}, "c": {"N": 3}}, DIMS, WHERE)
    assert [s.name for s in select_sizes(sizes, ["all"])] == ["a", "b", "c"]
    assert [s.name for s in select_sizes(sizes, ["c", "a"])] == ["a", "c"]
    assert select_sizes(sizes, ["zzz"]) == []


# ----- a case's sizes, per toolchain ---------------------------------------------------------------------------------
def write_case(root: Path, ref_tail: str, dims: dict[str, Any] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "ref.py").write_text("def reference(x, y, N):\n    y.copy_(x)\n" + ref_tail)
    (root / "dims.json").write_text(json.dumps(dims or {"N": 1000}))
    (root / "kernel.cpp").write_text('extern "C" void solve(const float* x, float* y, int N) {}\n')
    return root


def test_a_case_without_bench_sizes_has_none_and_its_ref_is_not_imported(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path / "c", "raise SystemExit('imported')\n"))
    assert case.bench_sizes == () and case.for_toolchain("cuda").bench_sizes == ()
    assert case.dims_at(None) == {"N": 1000}


def test_toolchain_sizes_replace_the_default_ones_and_lay_over_the_toolchain_dims(tmp_path: Path) -> None:
    root = write_case(tmp_path / "c", "bench_sizes = {'small': {'N': 64}}\nbench_sizes_by_toolchain = "
                                      "{'cuda': {'N': [1 << 20, 1 << 25]}, 'triton': None}\n")
    (root / "dims.cuda.json").write_text('{"N": 4096}')
    case = load_case(root)
    assert [s.name for s in case.for_toolchain("cpu").bench_sizes] == ["small"]
    cuda = case.for_toolchain("cuda")
    assert cuda.dims == {"N": 4096} and [s.name for s in cuda.bench_sizes] == ["N=1048576", "N=33554432"]
    assert cuda.dims_at(cuda.bench_sizes[1]) == {"N": 1 << 25}
    assert case.for_toolchain("triton").bench_sizes == ()


def test_a_bad_toolchain_declaration_names_the_toolchain(tmp_path: Path) -> None:
    root = write_case(tmp_path / "c", "bench_sizes_by_toolchain = {'cuda': {'big': {'K': 1}}}\n")
    with pytest.raises(CaseError, match=r"bench_sizes_by_toolchain\['cuda'\]\['big'\] sets 'K'"):
        load_case(root)
    root = write_case(tmp_path / "d", "bench_sizes_by_toolchain = [('cuda', {})]\n")
    with pytest.raises(CaseError, match="must be a dict toolchain name -> sizes"):
        load_case(root)


# ----- records: per size, merged, ranked, validated, rendered -------------------------------------------------------
def timing(ms: float, dims: dict[str, Any], **extra: Any) -> dict[str, Any]:
    samples = [ms / 1e3 * (1 + 0.001 * k) for k in (-2, -1, 0, 1, 2)] * 4
    return {**summarize(samples).to_json(), "mode": "cold", "timer": "host perf_counter_ns", "dims": dims,
            "samples_ms": [s * 1e3 for s in samples], **extra}


def sized(branch: str, per_size_ms: dict[str, float], *, correct: bool = True) -> BranchRecord:
    record = BranchRecord("vadd", "cpu", branch, f"vadd/{branch}.cpp", correct=correct, examples=5)
    record.build = {"toolchain": "cpu", "command": f"g++ -O3 vadd/{branch}.cpp"}
    for name, ms in per_size_ms.items():
        dims = {"N": 64 if name == "small" else 1 << 20}
        entry = record.size_entry(name, dims)
        entry.update(timing=timing(ms, dims), throughput={"gbps": 12 * dims["N"] / (ms / 1e3) / 1e9},
                     device={"device": "CPU", "timer": "host perf_counter_ns"})
    return record


HEADER = {"tool": {"name": "pytest_dcuopt", "version": "0"}, "created_at": "2026-12-01T00:00:00",
          "finished_at": "2026-12-01T00:01:00", "run_dir": "/runs/r", "exit_status": 0, "machine": {},
          "options": {}, "toolchains": {"cpu": {"capability": "run", "reason": "g++", "identity": "g++ 12"}}}


def sized_state() -> dict[str, Any]:
    base = sized("baseline", {"small": 0.010, "large": 2.0})
    simd = sized("simd", {"small": 0.010, "large": 1.0})  # faster at the large size only
    wrong = sized("wrong", {"small": 0.001}, correct=False)
    return build_state([base, simd, wrong], HEADER)


def test_each_size_has_its_own_speedup_and_champion_and_the_state_validates() -> None:
    state = sized_state()
    validate_state(state)
    result = state["cases"]["vadd"]["toolchains"]["cpu"]
    assert result["champion"] is None and result["baseline_ms"] is None  # no timing at the default dims
    assert result["sizes"]["small"]["champion"] == "baseline" and result["sizes"]["small"]["dims"] == {"N": 64}
    assert result["sizes"]["large"]["champion"] == "simd"
    assert result["sizes"]["large"]["champion_speedup"] == pytest.approx(2.0, rel=0.01)
    simd = result["branches"]["simd"]
    assert simd["timing"] is None and set(simd["sizes"]) == {"small", "large"}
    assert simd["sizes"]["large"]["champion"] is True and simd["sizes"]["small"]["champion"] is False
    assert simd["sizes"]["large"]["speedup_vs_baseline"] == pytest.approx(2.0, rel=0.01)
    wrong = result["branches"]["wrong"]  # 10x faster, but incorrect: never champion at any size
    assert set(wrong["sizes"]) == {"small"} and wrong["sizes"]["small"]["champion"] is False


def test_a_case_without_sizes_has_no_sizes_keys() -> None:
    record = BranchRecord("vadd", "cpu", "baseline", "k.cpp", correct=True)
    record.timing = timing(1.0, {"N": 1000})
    result = build_state([record], HEADER)["cases"]["vadd"]["toolchains"]["cpu"]
    assert "sizes" not in result and "sizes" not in result["branches"]["baseline"]
    assert "size" not in result["branches"]["baseline"] and result["champion"] == "baseline"


def test_the_sizes_two_processes_timed_are_merged_size_by_size() -> None:
    controller, worker = sized("simd", {"small": 0.01}), sized("simd", {"large": 1.0})
    controller.size_entry("large", {"N": 1 << 20})  # listed here (its test started here), timed in the worker
    controller.merge(worker)
    assert controller.sizes["large"]["timing"]["median_ms"] == pytest.approx(1.0)
    assert controller.sizes["small"]["timing"]["median_ms"] == pytest.approx(0.01)
    again = BranchRecord.from_json(json.loads(json.dumps(controller.to_json())))
    assert again.sizes == controller.sizes


def test_sizes_keep_their_declared_order_whichever_process_timed_them_first() -> None:
    controller, worker = BranchRecord("vadd", "cpu", "b", "b.cpp"), BranchRecord("vadd", "cpu", "b", "b.cpp")
    controller.size_entry("large", {"N": 1 << 20}, order=1)
    worker.size_entry("small", {"N": 64}, order=0)
    controller.merge(worker)
    assert list(controller.sizes) == ["large", "small"]
    assert list(build_state([controller], HEADER)["cases"]["vadd"]["toolchains"]["cpu"]["sizes"]) == ["small", "large"]


def test_a_size_view_carries_the_branch_verdict_and_its_reasons() -> None:
    record = sized("b", {"small": 0.01})
    record.skipped = "not benchmarked: failed its correctness test"
    record.size_entry("large", {"N": 1 << 20})
    view = record.at_size("large")
    assert view.size == "large" and view.timing is None and view.skipped == record.skipped
    assert view.build == record.build and view.correct is True and view.sizes == {}


def test_summary_and_terminal_show_the_champion_and_a_row_per_size() -> None:
    state = sized_state()
    summary = render_summary(state)
    assert "Champion per benchmark size: small (N=64): baseline (1.00x); large (N=1048576): simd (2.00x)." in summary
    assert "| size  | branch    | correct |" in summary
    assert "| large | simd*     | pass    |" in summary
    assert "GB/s by benchmark size (`*`: the champion at that size):" in summary
    assert "| branch   | small (N=64) | large (N=1048576) |" in summary
    assert "| wrong    | 0.768        | -                 |" in summary  # never timed at the large size
    lines = terminal_lines(state)
    assert lines[0].startswith("vadd [cpu]  champion per size: small (N=64): baseline (1.00x); large (N=1048576)")
    assert any(line.startswith("  | large | simd*") for line in lines)


# ----- the gate, per size --------------------------------------------------------------------------------------
def test_the_gate_compares_each_size_with_the_same_size_of_the_baseline(tmp_path: Path) -> None:
    before = sized_state()
    (tmp_path / "state.json").write_text(json.dumps(before))
    gate = Gate(Baseline.load(tmp_path / "state.json"), GateRule(floor_us=1000.0))
    now = sized("simd", {"large": 1.0, "huge": 1.0})
    same = gate.judge_timing(now.at_size("large"), "g++ 12", lambda: [])
    assert same.verdict == SAME and same.change is not None
    assert same.change.before_median_ms == pytest.approx(1.0, rel=0.01)  # the baseline's large, not its small
    new = gate.judge_timing(now.at_size("huge"), "g++ 12", lambda: [])
    assert new.verdict == NEW and "simd at size huge is not in the baseline run" in new.reason
    after = build_state([sized("baseline", {"small": 0.01}), now], HEADER)
    gate.attach(after, [{"case": "vadd", "toolchain": "cpu", "branch": "simd", "size": "large",
                         "timing": same.to_json()}])
    validate_state(after)
    branches = after["cases"]["vadd"]["toolchains"]["cpu"]["branches"]
    assert branches["simd"]["sizes"]["large"]["gate"]["verdict"] == SAME
    assert branches["simd"]["sizes"]["huge"]["gate"]["verdict"] == NEW
    assert branches["baseline"]["sizes"]["small"]["gate"]["verdict"] == "NOT TIMED"
    assert "gate" not in branches["simd"]  # gated per size, not as a whole
    assert sorted(after["gate"]["missing"]) == ["vadd/cpu/baseline/large", "vadd/cpu/simd/small",
                                                "vadd/cpu/wrong/small"]


def test_sizes_where_nothing_was_timed_show_a_row_per_branch_and_a_size_error_is_named_with_its_size() -> None:
    skipped = BranchRecord("vadd", "cuda", "baseline", "vadd/kernel.cu", skipped="cuda cannot run kernels here")
    for size in ("l2", "hbm"):
        skipped.size_entry(size, {"N": 1 << 20})
    broken = sized("baseline", {"small": 0.01})
    broken.size_entry("huge", {"N": 0})["error"] = {"kind": "case error", "message": "buffers ['a'] are empty"}
    state = build_state([skipped, broken], HEADER)
    validate_state(state)
    lines = terminal_lines(state)
    cuda = lines.index(next(line for line in lines if line.startswith("vadd [cuda]")))
    assert "l2 (N=1048576): none; hbm (N=1048576): none" in lines[cuda]
    assert lines[cuda + 1].startswith("  | branch ") and lines[cuda + 3].startswith("  | baseline | skipped")
    summary = render_summary(state)
    assert "**baseline** at size **huge**: case error:" in summary and "buffers ['a'] are empty" in summary
