"""`dcuopt triton report`: the investigation's output contract, from the other steps' JSON files.

Sections, in order: the kernel, its profile rank and time share, standalone timing; shapes, dtypes, strides; the
best config; pointer arguments and hint status; the load/store summary; tuning attempts and results; the
decision with its reasons; the eager-fallback timing; what could not be gathered. Every missing input is named
in the last section, never silently skipped.

The decision follows the rules of the original workflow:
* tune only a real hot spot (rank 1, or at least HOT_SHARE of the compiled model's device time);
* a kernel dominated by atomics / scatter, or a generated GEMM-like loop with no matrix instructions, is a
  model-code problem: rewrite the model code (or run that region eagerly);
* when the region run eagerly is measurably faster end to end (FALLBACK_MARGIN), disable the compiled region;
* memory traffic on the global/flat path with narrow accesses or missing pointer hints: continue Triton tuning
  (pointer hints, tl.assume / tl.multiple_of, block size, warps), one change at a time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HOT_SHARE = 0.10
FALLBACK_MARGIN = 0.03  # the eager run must be this much faster end to end to count (timing noise is ~1%)
CONTINUE, DISABLE, REWRITE, LEAVE = ("continue Triton tuning", "disable the compiled region",
                                     "rewrite the model code", "leave it: not worth tuning")


@dataclass
class Inputs:
    kernel: str
    summary: dict[str, Any] | None = None
    hints: dict[str, Any] | None = None
    scan: dict[str, Any] | None = None
    run: dict[str, Any] | None = None
    fallback: dict[str, Any] | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)  # {"change", "ms", "note"} from the user


def find_kernel(entries: list[dict[str, Any]], kernel: str, key: str) -> dict[str, Any] | None:
    exact = [e for e in entries if e.get(key) == kernel]
    loose = [e for e in entries if kernel in str(e.get(key, ""))]
    found = exact or loose
    return found[0] if found else None


def profile_entry(inputs: Inputs) -> dict[str, Any] | None:
    return find_kernel((inputs.fallback or {}).get("kernels", []), inputs.kernel, "kernel")


def decide(inputs: Inputs) -> tuple[str, list[str]]:
    reasons: list[str] = []
    profile = profile_entry(inputs)
    fallback = inputs.fallback or {}
    scans = [f for f in (inputs.scan or {}).get("functions", []) if f["function"] == inputs.kernel]
    verdict = scans[0]["verdict"] if scans else None
    if fallback.get("fallback_over_compiled") is not None and fallback["fallback_over_compiled"] < 1 - FALLBACK_MARGIN:
        reasons.append(f"with {fallback['region']} run eagerly the model takes {fallback['fallback_ms']:.4f} ms vs "
                       f"{fallback['compiled_ms']:.4f} ms compiled ({fallback['fallback_over_compiled']:.2f}x)")
        return DISABLE, reasons
    if profile is not None and profile["rank"] > 1 and profile["share"] < HOT_SHARE:
        reasons.append(f"rank {profile['rank']}, {profile['share']:.1%} of the compiled model's device time "
                       f"(below {HOT_SHARE:.0%}): not a hot spot")
        return LEAVE, reasons
    if verdict and verdict["atomics"] and verdict["atomics"] >= max(1, verdict["global_memory_ops"] // 2):
        reasons.append(f"{verdict['atomics']} atomics among {verdict['global_memory_ops']} global-memory "
                       "instructions: scatter/atomic-heavy work is a model-code problem")
        return REWRITE, reasons
    if fallback.get("fallback_over_compiled") is not None:
        reasons.append(f"running {fallback['region']} eagerly does not help end to end "
                       f"({fallback['fallback_over_compiled']:.2f}x of the compiled time)")
    if verdict is not None:
        if verdict["dominant_path"] in ("global", "flat", "generic") and not verdict["wide_128bit"]:
            reasons.append(f"memory goes through {verdict['dominant_path']} instructions at most "
                           f"{verdict['widest_bits']} bits wide: check pointer hints and offsets")
        else:
            reasons.append(f"memory path {verdict['dominant_path']}, widest {verdict['widest_bits']} bits")
    missing = missing_hints(inputs)
    if missing:
        reasons.append("pointer arguments without hints: " + ", ".join(missing))
    if profile is not None:
        reasons.append(f"rank {profile['rank']}, {profile['share']:.1%} of the device time: a hot spot")
    return CONTINUE, reasons


def missing_hints(inputs: Inputs) -> list[str]:
    kernel = find_kernel((inputs.hints or {}).get("kernels", []), inputs.kernel, "name")
    status = (kernel or {}).get("hint_status") or {}
    return [f"{n} (tt.divisibility)" for n in status.get("missing_divisibility", [])]


def render(inputs: Inputs) -> str:
    gaps: list[str] = []
    decision, reasons = decide(inputs)
    lines = [f"# Triton investigation: {inputs.kernel}", ""]
    lines += _profile(inputs, gaps) + _timing(inputs, gaps) + _shapes(inputs, gaps) + _hints(inputs, gaps)
    lines += _scan(inputs, gaps) + _attempts(inputs)
    lines += ["## Decision", "", f"**{decision}**", ""] + [f"- {r}" for r in reasons] + [""]
    lines += _fallback(inputs, gaps)
    gaps += [f"scan: {g}" for g in (inputs.scan or {}).get("not_gathered", [])]
    lines += ["## Not gathered", ""] + ([f"- {g}" for g in gaps] or ["- nothing"])
    return "\n".join(lines).rstrip() + "\n"


def _profile(inputs: Inputs, gaps: list[str]) -> list[str]:
    profile = profile_entry(inputs)
    if profile is None:
        gaps.append("profile rank and time share (no fallback/profile JSON naming this kernel)")
        return ["## Profile", "", "(not gathered)", ""]
    kernels = (inputs.fallback or {}).get("kernels", [])
    return ["## Profile", "", f"Rank {profile['rank']} of {len(kernels)} kernels of the compiled "
            f"model, {profile['ms']:.4f} ms per forward, {profile['share']:.1%} of its device time.", ""]


def _timing(inputs: Inputs, gaps: list[str]) -> list[str]:
    run = inputs.run
    if run is None:
        gaps.append("standalone timing (no `dcuopt triton run` result)")
        return ["## Standalone timing", "", "(not gathered)", ""]
    return ["## Standalone timing", "", f"Config {run['config']}: "
            f"{run['median_ms']:.4f} ms median over {run['samples']} {run['mode']} samples "
            f"({run['timer']}, quality {run['quality']}) on {run['device']}; autotuning had measured "
            f"{run['autotune_ms']:.4f} ms. Footprint rate {run['footprint_gbps']:.1f} GB/s (tensor bytes / time).",
            ""]


def _summary_entry(inputs: Inputs) -> dict[str, Any] | None:
    return find_kernel((inputs.summary or {}).get("kernels", []), inputs.kernel, "kernel")


def _shapes(inputs: Inputs, gaps: list[str]) -> list[str]:
    entry = _summary_entry(inputs)
    lines = ["## Inputs and best config"]
    if entry is None:
        gaps.append("shapes, dtypes, strides and the best config (the summary has no entry for this kernel)")
        return [*lines, "", "(not gathered)", ""]
    if entry.get("args"):
        lines += ["", "| argument | shape | stride | dtype |", "|---|---|---|---|"]
        lines += [f"| {a['name']} | {a.get('shape', '')} | {a.get('stride', '')} | {a.get('dtype', a.get('value'))} |"
                  for a in entry["args"]]
    else:
        gaps.append("shapes, dtypes and strides (an Inductor log has none; capture the run to record them)")
    best = entry.get("best") or {}
    lines += ["", f"Best config: {best.get('config', '(none recorded)')} at {best.get('ms', float('nan')):.4f} ms "
              f"(out of {len(entry.get('configs', []))} configs)."]
    if entry.get("coordesc_best"):
        lines.append(f"Coordinate descent then chose {entry['coordesc_best']['config']} at "
                     f"{entry['coordesc_best']['ms']:.4f} ms.")
    return [*lines, ""]


def _hints(inputs: Inputs, gaps: list[str]) -> list[str]:
    kernel = find_kernel((inputs.hints or {}).get("kernels", []), inputs.kernel, "name")
    if kernel is None:
        gaps.append("pointer arguments and hints (no inspect result for this kernel)")
        return ["## Pointer arguments and hints", "", "(not gathered)", ""]
    hinted = inputs.hints or {}
    lines = ["## Pointer arguments and hints", "", f"From {hinted.get('kind')} ({hinted.get('file')}).", "",
             "| argument | type | tt.divisibility | tt.pointer_range |", "|---|---|---|---|"]
    lines += [f"| {a['name']} | {a['type']} | {a['divisibility'] or '-'} | {a['pointer_range'] or '-'} |"
              for a in kernel["args"] if a["pointer"]]
    used = {k: v for k, v in hinted.get("counts", {}).items() if v}
    return [*lines, "", "Calls/ops: " + (", ".join(f"{k} x{v}" for k, v in used.items()) or "none counted"), ""]


def _scan(inputs: Inputs, gaps: list[str]) -> list[str]:
    found = [f for f in (inputs.scan or {}).get("functions", []) if f["function"] == inputs.kernel]
    if not found:
        gaps.append("load/store summary (no scan of this kernel's machine code)")
        return ["## Load/store summary", "", "(not gathered)", ""]
    lines = ["## Load/store summary", "", "| file | arch | space | op | bits | count |", "|---|---|---|---|---|---|"]
    for entry in found:
        lines += [f"| {entry['file'].rsplit('/', 1)[-1]} | {entry['arch']} | {m['space']} | {m['op']} | "
                  f"{m['width_bits'] or '-'} | {m['count']} |" for m in entry["memory"]]
    verdict = found[0]["verdict"]
    lines += ["", f"Global memory via {verdict['dominant_path']} ({verdict['global_memory_ops']} instructions), "
              f"widest {verdict['widest_bits']} bits; atomics {verdict['atomics']}, matrix instructions "
              f"{verdict['matrix_ops']}; registry signatures: {', '.join(found[0]['signatures']) or 'none'}.", ""]
    return lines


def _attempts(inputs: Inputs) -> list[str]:
    lines = ["## Tuning attempts", ""]
    entry = _summary_entry(inputs)
    tried = [(c["config"], c["ms"]) for c in (entry or {}).get("configs", [])]
    tried += [(c["config"], c["ms"]) for c in (entry or {}).get("coordesc", [])]
    if tried:
        lines += ["Autotuning (configs and coordinate descent, as Inductor measured them):", "",
                  "| config | ms |", "|---|---|"] + [f"| {c} | {ms:.4f} |" for c, ms in tried]
    lines += [f"- {a['change']}: {a['ms']:.4f} ms {a.get('note', '')}".rstrip() for a in inputs.attempts]
    if not tried and not inputs.attempts:
        lines.append("(none recorded)")
    return [*lines, ""]


def _fallback(inputs: Inputs, gaps: list[str]) -> list[str]:
    fallback = inputs.fallback
    if fallback is None or "fallback_ms" not in fallback:
        gaps.append("eager-fallback timing (report --fallback MODEL.py on the GPU)")
        return ["## Eager fallback", "", "(not measured)", ""]
    return ["## Eager fallback", "", f"Model {fallback['model']} on {fallback['device']}: compiled "
            f"{fallback['compiled_ms']:.4f} ms, with `{fallback['region']}` under torch._dynamo.disable "
            f"{fallback['fallback_ms']:.4f} ms: difference {fallback['difference_ms']:+.4f} ms "
            f"({fallback['fallback_over_compiled']:.2f}x).", ""]
