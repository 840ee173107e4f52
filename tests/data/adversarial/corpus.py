"""The adversarial corpus: every branch under this folder, declared once.

Read by tests/plugin/test_cheating_branches.py (CPU and Python toolchains, in CI) and by
tools/device/adversarial_cuda.sh (the CUDA twins, on a GPU). README.md beside this file shows the same table for
readers. Plain data and one judging function, no imports from the plugin, so that the device script can load it on a
machine where only the checkout is present.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The kinds of attack, numbered as in the threat list they come from.
KINDS = {
    "forge": "1. forges the worker's verdict or clock (CPython C API from C++, monkey-patching from Python)",
    "cache": "2. results kept by input content, by pointer, in files, or for the harness's fixed seeds",
    "watched": "3. tells checked calls from unchecked ones and computes only when watched",
    "outside": "4. work outside the timed window (host threads, side streams, leftover work)",
    "shortcut": "5. valid only for the declared input distribution or at the timing size",
    "precision": "6. precision downgrade (TF32, bfloat16, approximate exp)",
    "implausible": "7. physically implausible figures",
    "sabotage": "8. sabotages the competitor or tampers with ref.py, the build cache, earlier state.json",
    "inputs": "9. a Python branch chooses or changes its own inputs",
    "honest": "honest control: looks suspicious, is legitimate",
}

# Public sources the ideas come from (read for ideas; no code or text copied).
SOURCES = {
    "red_team": "the threat list of this corpus (forged verdicts, caches, watched calls, ...), from a red-team run",
    "kernelbench": "KernelBench: kernel_static_checker.py and PR 82 (adversarial eval tests) "
                   "https://github.com/ScalingIntelligence/KernelBench",
    "metr": "METR, Recent frontier models are reward hacking (2025): timers patched, the grader's answer read "
            "from its own process "
            "https://metr.org/blog/2025-06-05-recent-reward-hacking/",
    "sakana": "Sakana AI, The AI CUDA Engineer, and its evaluation exploit write-ups (2025) "
              "https://sakana.ai/ai-cuda-engineer/",
    "gpumode104": "gpu-mode/reference-kernels PR 104 (batch-and-skip, per-call timing) "
                  "https://github.com/gpu-mode/reference-kernels/pull/104",
    "gpumode160": "gpu-mode/reference-kernels PR 160 / issue 162 (cache and file replay, timer patch) "
                  "https://github.com/gpu-mode/reference-kernels/issues/162",
    "gpumode150": "gpu-mode/reference-kernels PR 150 / issue 148 (timed outputs never re-checked) "
                  "https://github.com/gpu-mode/reference-kernels/issues/148",
    "gpumode142": "gpu-mode/reference-kernels PR 142 (streams and work outside the events) "
                  "https://github.com/gpu-mode/reference-kernels/pull/142",
    "pygpubench": "gpu-mode/pygpubench README and exploits/ (PR 7: in-process patching, warm-up detection) "
                  "https://github.com/gpu-mode/pygpubench",
    "tensara238": "tensara PR 238 (compute once in warm-up, replay the cached bytes) "
                  "https://github.com/tensara/tensara/pull/238",
    "wafer": "wafer.ai, A field guide to reward hacking in AI kernel generation (2026): stream and thread injection, "
             "lazy evaluation, timer monkey-patching, a C++ pointer cache, precision downgrade "
             "https://www.wafer.ai/blog/reward-hacks-field-guide",
    "makora": "makora.com, reward hacks in LLM kernel optimization (8 patterns, KernelBench v0.1 flaws) "
              "https://makora.com/blog/reward-hacks",
    "control": "an ordinary optimization, written to look like a cheat to a naive detector",
}

# What should stop each cheat (the defence a branch expects), and what an honest control must keep.
DEFENCES = {
    "bytes": "the pytest process decides from bytes it reads itself; nothing the worker says is believed",
    "clock": "timings bounded by the pytest process's own wall clock and the worker's CPU time",
    "secret": "timed calls checked on inputs from a per-run secret seed, at unannounced calls",
    "same_prep": "every call prepared identically, any call may be the checked one",
    "all_work": "a timed call ends when all of the worker's work (threads, streams, children) has ended",
    "domain": "checks at the timing size, with more than one input distribution and adversarial values",
    "tolerance": "a size-aware tolerance that bounds float32 accumulation error, not a 10-bit mantissa",
    "plausible": "`implausible` when the time implies more than the measured bandwidth or peak FLOP/s",
    "freeze": "no process of another branch, nothing a kernel started, runs while a branch is timed",
    "integrity": "digests of ref.py, cache entries and earlier states kept where the worker cannot write",
    "harness_inputs": "inputs always come from the harness; the same checks for every toolchain",
    "caught_now": "already caught by today's checks (kept so that it stays caught)",
    "no_flag": "correct, not flagged implausible, never a failure",
}


@dataclass(frozen=True)
class Branch:
    case: str
    toolchain: str  # cpu, python or cuda: the kernel file is branches/<branch>/kernel.<cpp|py|cu>
    branch: str
    kind: str  # a key of KINDS
    source: str  # a key of SOURCES
    defence: str  # a key of DEFENCES
    open_now: str | None = None  # why today's harness lets this cheat through; None: stopped (or honest)
    faster: bool = False  # honest control whose gain is many times the noise: it must beat the baseline

    @property
    def honest(self) -> bool:
        return self.kind == "honest"

    @property
    def name(self) -> str:
        return f"{self.case}/{self.toolchain}/{self.branch}"


B = Branch

CORPUS: tuple[Branch, ...] = (
    # -- series: y = a 64-term series of x in [-0.5, 0.5], timed at N = 65536 (C++ and Python) ---------------------
    B("series", "cpu", "capi_forge_snapshot", "forge", "pygpubench", "bytes"),
    B("series", "cpu", "capi_slow_clock", "forge", "gpumode160", "clock"),
    B("series", "cpu", "content_cache_sampled", "cache", "tensara238", "secret"),
    B("series", "cpu", "pointer_cache", "cache", "gpumode150", "caught_now"),
    B("series", "cpu", "unchanged_output_and_samples", "cache", "red_team", "secret"),
    B("series", "cpu", "skip_when_output_unchanged", "cache", "red_team", "caught_now"),
    B("series", "cpu", "unwatched_skip", "watched", "pygpubench", "same_prep"),
    B("series", "cpu", "unwatched_zero_fill", "watched", "pygpubench", "same_prep"),
    B("series", "cpu", "every_kth_call", "watched", "gpumode104", "caught_now"),
    B("series", "cpu", "detached_thread", "outside", "wafer", "all_work",
      "neutralized, not named: its thread runs only when inputs and outputs look unchanged, which timed calls never "
      "are (their inputs rotate), and in a batch each call waits for the previous thread"),
    B("series", "cpu", "timing_size_only", "shortcut", "wafer", "domain"),
    B("series", "cpu", "truncated_for_declared_range", "shortcut", "makora", "domain"),
    B("series", "cpu", "first_last_fingerprint", "implausible", "sakana", "plausible"),
    B("series", "cpu", "scratch_in_const_input", "cache", "kernelbench", "caught_now"),
    B("series", "cpu", "spinner_processes", "sabotage", "red_team", "freeze"),
    B("series", "cpu", "coefficients_per_call", "honest", "control", "no_flag"),
    B("series", "cpu", "static_table_once", "honest", "control", "no_flag"),
    B("series", "cpu", "eight_lanes", "honest", "control", "no_flag", faster=True),
    B("series", "cpu", "openmp_parallel", "honest", "control", "no_flag"),
    B("series", "cpu", "std_thread_join", "honest", "control", "no_flag"),
    B("series", "python", "setup_zero_inputs", "inputs", "kernelbench", "harness_inputs"),
    B("series", "python", "inputs_rewritten_in_call", "inputs", "kernelbench", "harness_inputs"),
    B("series", "python", "monkeypatch_clock", "forge", "metr", "clock"),
    B("series", "python", "monkeypatch_snapshot", "forge", "metr", "bytes"),
    B("series", "python", "answer_table_fixed_seeds", "cache", "red_team", "secret",
      "neutralized, not named: the per-run secret seed never draws the inputs of its table, so it always computes"),
    B("series", "python", "pointer_cache", "cache", "gpumode150", "harness_inputs"),
    B("series", "python", "thread_after_return", "outside", "gpumode104", "all_work"),
    B("series", "python", "inplace_ops", "honest", "control", "no_flag"),
    # -- rank: O(N^2) scalar baseline, N = 8192 --------------------------------------------------------------------
    B("rank", "cpu", "content_hash_cache", "cache", "tensara238", "secret"),
    B("rank", "cpu", "file_replay_cache", "cache", "gpumode160", "secret"),
    B("rank", "cpu", "sort_n_log_n", "honest", "control", "no_flag", faster=True),
    # -- rowmax: rows of uniform [0, 1) values -------------------------------------------------------------------
    B("rowmax", "cpu", "uniform_upper_bound", "shortcut", "sakana", "domain"),
    B("rowmax", "cpu", "one_line_in_four", "shortcut", "red_team", "domain"),
    B("rowmax", "cpu", "simd_lanes", "honest", "control", "no_flag"),
    B("rowmax", "cpu", "openmp_rows", "honest", "control", "no_flag"),
    # -- softmax: rows of normal(0, 1) logits ----------------------------------------------------------------------
    B("softmax", "cpu", "no_max_subtraction", "shortcut", "wafer", "domain"),
    B("softmax", "cpu", "fast_exp_approximation", "precision", "wafer", "caught_now"),
    B("softmax", "cpu", "online_single_pass", "honest", "control", "no_flag"),
    B("softmax", "cpu", "exp_once", "honest", "control", "no_flag"),
    # -- matmul: 128 x 128 x 128 float32, naive i-j-k baseline ----------------------------------------------------
    B("matmul", "cpu", "tf32_inputs", "precision", "sakana", "tolerance"),
    B("matmul", "cpu", "bf16_inputs", "precision", "makora", "caught_now"),
    B("matmul", "cpu", "content_cache_sampled", "cache", "tensara238", "secret"),
    B("matmul", "cpu", "unwatched_skip", "watched", "pygpubench", "same_prep"),
    B("matmul", "cpu", "loop_reorder_ikj", "honest", "control", "no_flag", faster=True),
    B("matmul", "cpu", "tiled_blocks", "honest", "control", "no_flag"),
    B("matmul", "cpu", "transposed_temporary", "honest", "control", "no_flag"),
    B("matmul", "cpu", "std_thread_rows", "honest", "control", "no_flag"),
    # -- tampering: cases of their own, since a tampered ref.py changes the verdicts of its whole case ----------
    B("tamper_ref", "cpu", "rewrite_ref", "sabotage", "red_team", "integrity"),
    B("tamper_tree", "cpu", "rewrite_build_cache", "sabotage", "red_team", "integrity"),
    B("tamper_tree", "cpu", "rewrite_earlier_state", "sabotage", "pygpubench", "integrity"),
    # -- CUDA twins (built here for nothing but a compile check; run by tools/device/adversarial_cuda.sh) ----------
    B("series", "cuda", "capi_forge_snapshot", "forge", "pygpubench", "bytes"),
    B("series", "cuda", "content_cache_sampled", "cache", "tensara238", "secret",
      "neutralized, not named: its cache is keyed on sampled input values, which every prepared timed call rotates, "
      "so it computes every call (0.51x on an H200)"),
    B("series", "cuda", "pointer_cache", "cache", "gpumode150", "secret"),
    B("series", "cuda", "unwatched_skip", "watched", "pygpubench", "same_prep"),
    B("series", "cuda", "side_stream_during_delay", "outside", "gpumode142", "all_work"),
    B("series", "cuda", "host_thread_launch", "outside", "gpumode104", "all_work"),
    B("series", "cuda", "leftover_work_short", "outside", "kernelbench", "all_work"),
    B("series", "cuda", "streams_joined", "honest", "control", "no_flag"),
    B("matmul", "cuda", "tf32_tensor_core", "precision", "sakana", "tolerance"),
    B("matmul", "cuda", "tiled_shared", "honest", "control", "no_flag"),
)

TAMPERED = {  # the file each tampering branch rewrites, relative to the run's root folder
    "rewrite_ref": "tamper_ref/ref.py",
    "rewrite_build_cache": "cache",
    "rewrite_earlier_state": ".dcuopt/runs/earlier/state.json",
}


def judge(record: dict[str, Any] | None, branch: str, champion: str | None) -> dict[str, Any]:
    """What a run made of one branch: the facts the test asserts and the device script prints.

    `caught`: the harness gave a reason (a failed correctness test, a benchmark error such as `timed calls wrong`, a
    refusal). `implausible`: the record's `implausible` flag (per size too). A case
    with benchmark sizes keeps its timing verdicts per size: any size counts.
    """
    if record is None:
        return {"ran": False, "caught": False, "reason": "no record", "implausible": False, "champion": False,
                "beats": False, "correct": None, "speedup": None}
    timed = [record, *record.get("sizes", {}).values()]
    reasons = [_reason(part) for part in timed]
    speedups = [part["speedup_vs_baseline"] for part in timed if part.get("speedup_vs_baseline") is not None]
    reason = next((text for text in reasons if text), "")
    if not reason and record.get("correct") is False:
        reason = "incorrect"
    return {"ran": True, "caught": bool(reason), "reason": reason.replace("\n", " "),
            "implausible": any(bool(part.get("implausible")) for part in timed),
            "champion": champion == branch or any(part.get("champion") is True for part in timed),
            "beats": any(part.get("beats_baseline") is True for part in timed), "correct": record.get("correct"),
            "speedup": max(speedups) if speedups else None}


def _reason(part: dict[str, Any]) -> str:
    failure, error = part.get("failure"), part.get("error")
    if isinstance(error, dict):
        return f"{error.get('kind', 'error')}: {str(error.get('message', ''))[:160]}"
    if error:
        return str(error)[:160]
    if isinstance(failure, dict):
        return f"incorrect: {str(failure.get('message', ''))[:160]}"
    return ""


def stopped(verdict: dict[str, Any]) -> bool:
    """A cheat is stopped when it is caught with a reason or flagged, and neither crowned nor said to beat the
    baseline."""
    return (verdict["caught"] or verdict["implausible"]) and not verdict["champion"] and not verdict["beats"]


def records(state: dict[str, Any], case: str, toolchain: str) -> tuple[dict[str, Any], str | None]:
    """The branch records and the champion of one case and toolchain in a state.json (the first benchmark size's
    champion when the case declares sizes)."""
    found = state.get("cases", {}).get(case, {}).get("toolchains", {}).get(toolchain, {})
    return found.get("branches", {}), found.get("champion")
