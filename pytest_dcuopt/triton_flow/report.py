"""`dcuopt triton report`: the investigation's output contract, from the other steps' JSON files.

Sections, in order: the kernel, its profile rank and time share, standalone timing; shapes, dtypes, strides; the
best config; pointer arguments and hint status; the load/store summary; tuning attempts and results; the
decision with its reasons; the eager-fallback timing; what could not be gathered. Every missing input is named
in the last section, never silently skipped.

The decision follows the rules of the original workflow:
* tune only a real hot spot (rank 1, or at least HOT_SHARE of the compiled model's device time);
* a kernel dominated by atomics / scatter, a generated GEMM-like loop with no matrix instructions (`tl.dot` in the
  source, or a template kernel, and no MFMA/MMAC/HMMA in the scanned code), or an initialization-only kernel (it
  stores and never loads: a fill the model materializes) is a model-code problem: rewrite the model code (or run
  that region eagerly);
* when the region run eagerly is measurably faster end to end (FALLBACK_MARGIN), disable the compiled region;
* memory traffic on the global/flat path with narrow accesses or missing pointer hints: continue Triton tuning
  (pointer hints, tl.assume / tl.multiple_of, block size, warps), one change at a time; on AMD/DCU code whose
  global traffic is not on the buffer path, the next experiment is a compile with `AMDGCN_USE_BUFFER_OPS=1` against
  one with it unset (the seed's rule: never set by default, probed per kernel family).

"The config Inductor uses" is `capture.inductor_choice` of the kernel's summary entries (the coordinate-descent
winner when there is one, else the autotuning best), the same definition as `run` and `to-case`; the report says
whether the standalone run timed it and whether the scanned artifact is that variant. Inductor's autotuning times
are its host-timed benchmark (launch overhead included): they are shown after the device timing, labelled so.
Paths are printed relative to the current folder (or the capture folder), not as absolute paths.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .artifacts import BEST, MANIFEST
from .capture import AUTOTUNE_TIMING, inductor_choice, parse_config, same_config
from .summarize import RECORDS_NAME

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


def shown_path(text: str | None) -> str:
    """A path for the report: relative to the current folder when under it, else from its capture folder (the one
    holding autotune.jsonl) or its collect folder (the one holding manifest.json and best/) on, i.e. relative to the
    work folder holding those, else as given; never an absolute path when any applies."""
    if not text:
        return "?"
    path = Path(text)
    if not path.is_absolute():
        return text
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        pass
    for parent in path.parents:
        if (parent / RECORDS_NAME).is_file() or ((parent / MANIFEST).is_file() and (parent / BEST).is_dir()):
            return str(path.relative_to(parent.parent))
    return text


def tuning(inputs: Inputs) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The kernel's summary record (the capture's, which has the arguments and config kwargs, else the log's) and
    `inductor_choice` of it over every summary entry of the kernel (the Inductor log's carry coordinate descent)."""
    kernels = (inputs.summary or {}).get("kernels", [])
    entries = [e for e in kernels if e.get("kernel") == inputs.kernel]
    if not entries:
        loose = find_kernel(kernels, inputs.kernel, "kernel")
        entries = [loose] if loose else []
    if not entries:
        return None, None
    record = next((e for e in entries if e.get("origin") == "capture"), entries[0])
    return record, inductor_choice(record, [e for e in entries if e is not record])


def timed_config(run: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The config the standalone run timed and whether it was read back from the launcher (older run.json files
    only say which config was asked for)."""
    if run.get("timed"):
        return run["timed"], True
    return parse_config(str(run.get("requested", run["config"]))), False


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
    if scans and initialization_only(scans[0]):
        reasons.append("initialization-only kernel: it stores to global memory and never loads (a fill or zeroing "
                       "the model materializes); fuse it into its consumer or drop it in the model code")
        return REWRITE, reasons
    if verdict is not None and verdict["matrix_ops"] == 0 and gemm_like(inputs):
        reasons.append(f"GEMM-like kernel ({gemm_like(inputs)}) with no matrix instructions in its "
                       f"{scans[0].get('family', 'scanned')} code: a generated loop does the products on the vector "
                       "units; use the library GEMM (the model's matmul) or the dtype/shape that reaches the matrix "
                       "cores")
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
    amd = scans and scans[0].get("family") in ("amdgcn", "dcu")
    if verdict is not None and amd and verdict["dominant_path"] in ("global", "flat"):
        reasons.append(f"experiment: global traffic is on the {verdict['dominant_path']} path, not buffer "
                       "instructions; compile once with AMDGCN_USE_BUFFER_OPS=1 and once unset, scan both and time "
                       "both (`dcuopt triton run`), keeping the faster; never set it by default")
    if profile is not None:
        reasons.append(f"rank {profile['rank']}, {profile['share']:.1%} of the device time: a hot spot")
    return CONTINUE, reasons


def initialization_only(scan: dict[str, Any]) -> bool:
    """Global stores and no load of any kind in the scanned function."""
    memory = scan.get("memory", [])
    return (not any(m["op"] == "load" for m in memory)
            and any(m["op"] == "store" and m["space"] in ("buffer", "global", "flat", "generic") for m in memory))


def gemm_like(inputs: Inputs) -> str:
    """Why the kernel is a GEMM ('' when it is not): a template kernel, or tl.dot in its source."""
    if inputs.kernel.startswith("triton_tem_"):
        return "an Inductor template kernel"
    dots = ((inputs.hints or {}).get("counts") or {}).get("dot", 0)
    return f"tl.dot x{dots} in its source" if dots else ""


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
    timed, verified = timed_config(run)
    lines = ["## Standalone timing", "", f"{run['median_ms']:.4f} ms median device time over {run['samples']} "
             f"{run['mode']} samples ({run['timer']}, quality {run['quality']}) on {run['device']}, config "
             f"{timed['config']}. Footprint rate {run['footprint_gbps']:.1f} GB/s (tensor bytes / device time).", ""]
    if verified:
        lines.append(f"The timed config was {run.get('timed_read_back', 'read back from the launcher')}; re-tuning "
                     f"{run.get('retuning', 'off')}.")
    else:
        lines.append("The timed config is not verified: this run.json names the config that was asked for, not the "
                     "one Inductor's launcher ran (a replay before re-tuning was switched off could have been "
                     "re-tuned by coordinate descent); run `dcuopt triton run` again.")
        gaps.append("the config the standalone run actually timed (run.json from before the launcher read-back)")
    _, choice = tuning(inputs)
    if choice is not None and choice["entry"] is not None:
        same = same_config(timed, choice["entry"])
        lines.append(f"{'This is' if same else 'This is NOT'} the config Inductor uses ({choice['entry']['config']}, "
                     f"{choice['source']}).")
    if run.get("autotune_ms") is not None:
        lines.append(f"Inductor's autotuning had given {run['autotune_ms']:.4f} ms for the config asked for: "
                     f"{AUTOTUNE_TIMING}; not comparable with the device time above.")
    return [*lines, ""]


def _summary_entry(inputs: Inputs) -> dict[str, Any] | None:
    return tuning(inputs)[0]


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
    lines += ["", f"Autotuning best: {best.get('config', '(none recorded)')} at {best.get('ms', float('nan')):.4f} ms "
              f"in Inductor's benchmark (out of {len(entry.get('configs', []))} configs)."]
    _, choice = tuning(inputs)
    if choice is not None and choice["entry"] is not None:
        chosen = choice["entry"]
        figure = f" at {chosen['ms']:.4f} ms" if chosen.get("ms") is not None else ""
        lines.append(f"Config Inductor uses: {chosen['config']}{figure} ({choice['source']}).")
        if choice["note"]:
            lines.append(f"Note: {choice['note']}.")
    return [*lines, ""]


def _hints(inputs: Inputs, gaps: list[str]) -> list[str]:
    kernel = find_kernel((inputs.hints or {}).get("kernels", []), inputs.kernel, "name")
    if kernel is None:
        gaps.append("pointer arguments and hints (no inspect result for this kernel)")
        return ["## Pointer arguments and hints", "", "(not gathered)", ""]
    hinted = inputs.hints or {}
    lines = ["## Pointer arguments and hints", "", f"From {hinted.get('kind')} ({shown_path(hinted.get('file'))}).", "",
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
    return [*lines, *_scanned_variant(inputs, found[0]["file"], gaps)]


def scanned_config(scanned: str) -> tuple[dict[str, Any] | None, str]:
    """The launch config of the scanned binary: its compile metadata (`<name>.json` beside it: num_warps,
    num_stages), with the block sizes of the `.best_config` that `collect` matched it to when it is the `best/`
    copy (`manifest.json` one folder up)."""
    path = Path(scanned)
    meta_file = path.with_suffix(".json")
    if not meta_file.is_file():
        return None, f"no compile metadata ({meta_file.name}) beside {shown_path(scanned)}"
    meta = json.loads(meta_file.read_text())
    found: dict[str, Any] = {"kwargs": None, "num_warps": meta.get("num_warps"), "num_stages": meta.get("num_stages")}
    where = f"{shown_path(str(meta_file))} (warps, stages)"
    manifest = path.parent.parent / "manifest.json"
    if path.parent.name == "best" and manifest.is_file():
        bests = json.loads(manifest.read_text()).get("copied", {}).get("best_config", [])
        known = {"file", "num_warps", "num_stages", "configs_hash", "found_by_coordesc", "time_taken_ms",
                 "triton_cache_hash", "num_ctas", "maxnreg"}
        matching = [b for b in bests if b.get("num_warps") == found["num_warps"]
                    and b.get("num_stages", found["num_stages"]) == found["num_stages"]]
        if len(matching) == 1:
            found["kwargs"] = {k: v for k, v in matching[0].items() if k not in known}
            where += f" and {shown_path(str(manifest))} (block sizes of {matching[0].get('file', '?')})"
    kwargs = found["kwargs"]
    text = ", ".join([*(f"{k}: {v}" for k, v in (kwargs or {}).items()), f"num_warps: {found['num_warps']}",
                      f"num_stages: {found['num_stages']}"])
    return {**found, "config": text}, where


def _scanned_variant(inputs: Inputs, scanned: str, gaps: list[str]) -> list[str]:
    config, where = scanned_config(scanned)
    if config is None:
        gaps.append(f"which compiled variant was scanned ({where})")
        return [f"Scanned variant: {shown_path(scanned)}, config unknown ({where}).", ""]
    keys = ("num_warps", "num_stages") if config["kwargs"] is None else ("kwargs", "num_warps", "num_stages")
    lines = [f"Scanned variant: {shown_path(scanned)}, {config['config']} (from {where})."]
    _, choice = tuning(inputs)
    against = [("the config Inductor uses", choice["entry"] if choice else None)]
    if inputs.run is not None:
        against.append(("the standalone run's timed config", timed_config(inputs.run)[0]))
    for name, other in against:
        if other is not None:
            same = all(config[k] == other.get(k) for k in keys)
            partial = "" if config["kwargs"] is not None else " (warps and stages compared; block sizes unknown)"
            lines.append(f"- {'matches' if same else 'does NOT match'} {name} ({other['config']}){partial}")
    return [*lines, ""]


def _attempts(inputs: Inputs) -> list[str]:
    lines = ["## Tuning attempts", ""]
    entry, choice = tuning(inputs)
    chosen = (choice or {}).get("entry")
    tried = [("autotune", c) for c in (entry or {}).get("configs", [])]
    tried += [("coordinate descent", c) for c in (choice or {}).get("coordesc", [])]
    if tried:
        lines += [f"Autotuning configs, then coordinate descent's trials, as Inductor's benchmark measured them "
                  f"({AUTOTUNE_TIMING}; compare them with each other only):", "",
                  "| stage | config | ms | used |", "|---|---|---|---|"]
        used = [i for i, (_, c) in enumerate(tried) if chosen is not None and same_config(c, chosen)]
        kept = used[-1] if used else None  # the last trial of the used config: the one Inductor kept
        lines += [f"| {stage} | {c['config']} | {c['ms']:.4f} | {'Inductor uses this' if i == kept else ''} |"
                  for i, (stage, c) in enumerate(tried)]
    lines += [f"- {a['change']}: {a['ms']:.4f} ms {a.get('note', '')}".rstrip() for a in inputs.attempts]
    if not tried and not inputs.attempts:
        lines.append("(none recorded)")
    return [*lines, ""]


def _fallback(inputs: Inputs, gaps: list[str]) -> list[str]:
    fallback = inputs.fallback
    if fallback is None or "fallback_ms" not in fallback:
        gaps.append("eager-fallback timing (report --fallback MODEL.py on the GPU)")
        return ["## Eager fallback", "", "(not measured)", ""]
    return ["## Eager fallback", "", f"Model {shown_path(fallback['model'])} on {fallback['device']}: compiled "
            f"{fallback['compiled_ms']:.4f} ms, with `{fallback['region']}` under torch._dynamo.disable "
            f"{fallback['fallback_ms']:.4f} ms: difference {fallback['difference_ms']:+.4f} ms "
            f"({fallback['fallback_over_compiled']:.2f}x).", ""]
