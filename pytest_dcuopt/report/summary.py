"""Human views of state.json: summary.md and the terminal table (pure functions of the state)."""
from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from .columns import BRANCH_COLUMNS, Column, Text, ms, times
from .markdown import md_code, md_fence, md_text, one_line, table
from .state import DISAGREE_FACTOR

LEGEND = ("`median ms`, `IQR ms`, `rounds`: the branch's own timing run. `A/B ms`: baseline/branch medians of the "
          "interleaved A/B rounds against the baseline; `speedup` and `beats noise` come from them when they ran "
          "(else from the two own-run medians), so `speedup` need not equal the ratio of the `median ms` column. "
          "`beats noise` is `-` when nothing was compared (the branch was never timed, or no baseline was), `disagree` "
          f"when the own-run medians and the A/B rounds differ by more than {DISAGREE_FACTOR:g}x (the machine's load "
          "changed; nothing is crowned then). "
          "`[sync]`: the solve synchronizes or allocates, so it was timed one call per sample (by its build's sync "
          "hooks, else the profiler's kernel records; docs/gpu-timing.md); `(too few clean samples)`: the median is "
          "not trustworthy; `(not representative: emulated)`: timed under an emulator (the Triton interpreter on the "
          "CPU), which says nothing about GPU performance.")


# Toolchain capabilities (toolchains.base.Capability values); anything else in the field is not one.
CAPABILITIES = ("run", "compile-only", "unavailable")


def branch_rows(toolchain: Mapping[str, Any], text: Text = one_line,
                columns: Sequence[Column] = BRANCH_COLUMNS) -> list[list[str]]:
    """One row per branch, a cell per column; `text` renders free text (md_text for Markdown, one line for the
    terminal)."""
    return [[column.cell(name, branch, text) for column in columns] for name, branch in toolchain["branches"].items()]


# ----- benchmark sizes (ref.py `bench_sizes`): a champion and a row per branch at each size ---------------------------

def sized_views(toolchain: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(size, branch, the branch as timed at that size) in size order: the size's entry (timing, throughput,
    speedup, champion, skip reason, error) over the branch's own fields (verdict, ISA)."""
    return [(size, name, {**branch, **branch["sizes"][size]})
            for size in toolchain.get("sizes", {}) for name, branch in toolchain["branches"].items()
            if size in (branch.get("sizes") or {})]


def size_rows(toolchain: Mapping[str, Any], text: Text = one_line,
              columns: Sequence[Column] = BRANCH_COLUMNS) -> list[list[str]]:
    """One row per branch and benchmark size, size by size (`*`: the champion at that size)."""
    return [[text(size), *(column.cell(name, view, text) for column in columns)]
            for size, name, view in sized_views(toolchain)]


def sized_table(toolchain: Mapping[str, Any], text: Text = one_line,
                columns: Sequence[Column] = BRANCH_COLUMNS) -> list[str]:
    """The table of a case with benchmark sizes: a row per branch and size; a row per branch when no size was timed
    (a compile-only toolchain: the same skip reason at every size would only repeat)."""
    if any(view.get("timing") for _, _, view in sized_views(toolchain)):
        return table(size_rows(toolchain, text, columns), ["size", *(column.header for column in columns)])
    return branch_table(toolchain, text, columns)


def branch_table(toolchain: Mapping[str, Any], text: Text = one_line,
                 columns: Sequence[Column] = BRANCH_COLUMNS) -> list[str]:
    """The table of a case without benchmark sizes: a row per branch."""
    return table(branch_rows(toolchain, text, columns), [column.header for column in columns])


def size_champions(toolchain: Mapping[str, Any], text: Text = one_line) -> str:
    """`l2 (N=65536): simd (1.20x); dram (N=8388608): baseline (1.00x)`: each size's dims and champion."""
    parts = []
    for size, info in toolchain.get("sizes", {}).items():
        dims = ", ".join(f"{k}={v}" for k, v in (info.get("dims") or {}).items())
        champion = info.get("champion")
        won = f"{text(champion)} ({times(info.get('champion_speedup'))})" if champion else "none"
        if info.get("champion_note"):
            won += f" ({text(info['champion_note'])})"
        parts.append(f"{text(size)} ({text(dims)}): {won}")
    return "; ".join(parts)


def throughput_by_size(toolchain: Mapping[str, Any]) -> list[str]:
    """summary.md: a branch x size table of GB/s (GFLOP/s where ref.py gives only flops), to read against size;
    [] when neither was measured."""
    views = sized_views(toolchain)
    unit = "gbps" if any("gbps" in (v.get("throughput") or {}) for _, _, v in views) else "gflops"
    if not any(unit in (v.get("throughput") or {}) for _, _, v in views):
        return []
    sizes = list(toolchain["sizes"])
    cells = {(size, name): ms((view.get("throughput") or {}).get(unit)) + ("*" if view.get("champion") else "")
             for size, name, view in views}
    names = list(dict.fromkeys(name for _, name, _ in views))
    header = ["branch", *(f"{md_text(size)} ({md_text(_dims_text(toolchain['sizes'][size]))})" for size in sizes)]
    rows = [[md_text(name), *(cells.get((size, name), "-") for size in sizes)] for name in names]
    title = "GB/s" if unit == "gbps" else "GFLOP/s"
    return [f"{title} by benchmark size (`*`: the champion at that size):", "", *table(rows, header), ""]


def _dims_text(info: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in (info.get("dims") or {}).items())


def render_summary(state: Mapping[str, Any], columns: Sequence[Column] = BRANCH_COLUMNS) -> str:
    """summary.md: one table per case and toolchain (a row per branch, a cell per column), champion marked, failures
    with their minimal example."""
    out = ["# pytest_dcuopt run summary", ""]
    if state.get("interrupted"):
        out += [f"> **Interrupted by {state['interrupted']}**: the run stopped early; these results are partial.", ""]
    if state.get("validation_error"):
        out += [f"> **state.json does not match its schema**: "
                f"{md_text(state['validation_error'].splitlines()[0])}", ""]
    out += [f"- run dir: {md_code(state['run_dir'])}", f"- started: {state['created_at']}, finished: "
            f"{state['finished_at']}",
            f"- machine: {md_text(state['machine'].get('cpu', '?'))} ({md_text(state['machine'].get('host', '?'))})",
            f"- timing: {timing_text(state)}", ""]
    toolchains = state.get("toolchains", {})
    if toolchains:
        out += ["## Toolchains", ""]
        out += [f"- {md_code(name)}: {toolchain_capability(state, name) or 'capability not recorded'}: "
                f"{md_text(info.get('reason'))}" for name, info in toolchains.items()]
        out.append("")
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            out += [f"## {md_text(case)} ({md_text(toolchain)})", ""]
            out += _sized_section(result, columns) if result.get("sizes") else _champion_section(result, columns)
            out += _problems(result)
            out += _isa_lines(result)
            out += _ablation_lines(result)
    if any(timing.get("concurrent_workers", 1) > 1 for timing in all_timings(state)):
        out += ["**Warning:** timings were taken while several xdist workers ran at once; they are fit for a "
                "correctness sweep, not for comparison. Re-run the benchmarks with `-n 0`.", ""]
    out += ["`*` = champion: the fastest correct branch whose median's 95% confidence interval lies wholly below the "
            "baseline's (\"beats noise\"). " + LEGEND, ""]
    out += gate_section(state)
    return "\n".join(out)


def _champion_section(result: Mapping[str, Any], columns: Sequence[Column]) -> list[str]:
    champion = result.get("champion")
    why = md_text(result.get("champion_note") or "no correct, timed branch")
    return [f"Champion: **{md_text(champion or 'none')}**"
            + (f" ({times(result.get('champion_speedup'))} vs baseline)" if champion else f" ({why})"),
            "", *branch_table(result, md_text, columns), ""]


def _sized_section(result: Mapping[str, Any], columns: Sequence[Column]) -> list[str]:
    """A case with benchmark sizes: the champion at each size, a row per branch and size, throughput by size."""
    out = [f"Champion per benchmark size: {size_champions(result, md_text)}.", ""]
    return [*out, *sized_table(result, md_text, columns), "", *throughput_by_size(result)]


def all_timings(state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every timing of the run: each branch's own, and each branch's at every benchmark size."""
    found = []
    for data in state.get("cases", {}).values():
        for result in data["toolchains"].values():
            for branch in result["branches"].values():
                entries = [branch, *(branch.get("sizes") or {}).values()]
                found += [entry["timing"] for entry in entries if entry.get("timing")]
    return found


# ----- the regression gate (--dcuopt-compare; docs/gating.md) ---------------------------------------------------------
GATE_HEADERS = ["case", "toolchain", "branch", "verdict", "before ms", "after ms", "change", "95% interval",
                "regressions", "why / notes"]


def gate_rows(state: Mapping[str, Any]) -> list[list[str]]:
    """One row per branch with a `gate` entry: verdict, medians, change and its interval, regressions, reasons."""
    rows = []
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            units = [(name, branch) for name, branch in result["branches"].items()]
            units += [(f"{name} [{size}]", view) for size, name, view in sized_views(result)]
            for name, branch in units:
                gate = branch.get("gate")
                if not gate:
                    continue
                change = gate.get("change") or {}
                interval = change.get("change_interval")
                why = _clip(one_line("; ".join(text for text in [gate.get("reason"), *(gate.get("notes") or [])]
                                                if text)))
                rows.append([_gate_name(case), _gate_name(toolchain), _gate_name(name), gate["verdict"],
                             ms(change.get("before_median_ms")),
                             ms(change.get("after_median_ms")), _pct(change.get("change")),
                             f"{_pct(interval[0])} .. {_pct(interval[1])}" if interval else "-",
                             ", ".join(gate.get("regressions") or []) or "-", why.replace("|", "/") or "-"])
    return rows


def _gate_name(text: str) -> str:
    """A name in the gate table, which the terminal shows too: one line, no `|` (as in `why / notes`)."""
    return one_line(text).replace("|", "/")


def _clip(text: str, width: int = 120) -> str:
    """A reason cut to fit a table cell; state.json keeps it whole."""
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _pct(value: Any) -> str:
    return "-" if value is None else f"{value:+.1%}"


def gate_table(state: Mapping[str, Any]) -> list[str]:
    """The gate's Markdown table (summary.md, the terminal, $GITHUB_STEP_SUMMARY); [] when the run was not gated."""
    gate = state.get("gate")
    rows = gate_rows(state)
    if not gate or not rows:
        return []
    return table(rows, GATE_HEADERS)


def _threshold_text(rule: Mapping[str, Any]) -> str:
    if rule.get("threshold") is not None:
        return f"{rule['threshold']:.1%}"
    return (f"{rule.get('threshold_device', 0):.1%} (device timings) or {rule.get('threshold_host', 0):.1%} "
            "(host clocks)")


def gate_section(state: Mapping[str, Any]) -> list[str]:
    """`## Gate` with the baseline, the rule, the verdict counts and the table; [] when the run was not gated."""
    gate = state.get("gate")
    rows = gate_table(state)
    if not gate or not rows:
        return []
    rule = gate.get("rule") or {}
    counts = ", ".join(f"{v} {k}" for k, v in (gate.get("counts") or {}).items()) or "nothing compared"
    out = ["## Gate vs baseline", "", f"- baseline: {md_code(gate['baseline'])} ({gate.get('baseline_created_at')})",
           f"- rule: SLOW/FAST when the {rule.get('confidence', 0.95):.0%} interval of the ratio after/before excludes "
           f"1 and the change exceeds both {_threshold_text(rule)} and {rule.get('floor_us', 0):g} us; "
           f"AMBIGUOUS re-measured up to {rule.get('retries', 0)} times; `why / notes` is cut short here, state.json "
           "has it whole", f"- verdicts: {counts}; regressions: {gate.get('regressions', 0)}"]
    if gate.get("missing"):
        out.append(f"- in the baseline, not in this run: {md_text(', '.join(gate['missing']))}")
    if gate.get("parallelism"):
        out.append(f"- **Warning:** {md_text(gate['parallelism']['warning'])}")
    return [*out, "", *rows, ""]


def timing_text(state: Mapping[str, Any]) -> str:
    """The timing policy as a sentence (options.timing is TimingPolicy.to_json(); fields may be missing)."""
    options = state.get("options", {})
    policy = options.get("timing") or {}
    if not policy:
        return "not recorded"
    cold = policy.get("cold", True)
    parts = ["cold samples (caches flushed before each)" if cold else "hot samples (back-to-back, no flush)"]
    if "warmup_s" in policy:
        parts.append(f"warm-up {policy['warmup_s']:g} s")
    if "min_samples" in policy:
        parts.append(f"at least {policy['min_samples']} samples unless the time cap came first (then as few as 3, "
                     "and the median is marked too few clean samples)")
    if "target_rel_spread" in policy and "max_time_s" in policy:
        parts.append(f"stop at {policy['target_rel_spread'] * 100:g}% CI half-width or {policy['max_time_s']:g} s")
    if _device_timed(state):
        flush = policy.get("l2_flush") or "from $DCUOPT_L2_FLUSH, default read"
        offset = policy.get("event_offset") or "from $DCUOPT_EVENT_OFFSET, default calibrated"
        parts.append((f"GPU L2 flush {flush}, " if cold else "GPU ") + f"event offset {offset}")
    if options.get("interleave_rounds"):
        parts.append(f"{options['interleave_rounds']} interleaved A/B rounds against the baseline")
    return ", ".join(parts)


def _device_timed(state: Mapping[str, Any]) -> bool:
    """Whether any branch was timed with device events (their timing records the event offset)."""
    return any("event_offset" in timing for timing in all_timings(state))


def toolchain_capability(state: Mapping[str, Any], toolchain: str) -> str | None:
    """The toolchain's capability (run, compile-only, unavailable), or None when the state does not say.

    The `capability` field is read only when it holds one of the capability values: a toolchain's
    availability details can overwrite it (cuda's device compute capability, e.g. [9, 0]). When it does,
    a branch that was checked or timed shows the toolchain ran.
    """
    value = state.get("toolchains", {}).get(toolchain, {}).get("capability")
    if isinstance(value, str) and value in CAPABILITIES:
        return value
    ran = any(b.get("correct") is not None or b.get("timing")
              for data in state.get("cases", {}).values()
              for b in data["toolchains"].get(toolchain, {}).get("branches", {}).values())
    return "run" if ran else None


def _isa_lines(result: Mapping[str, Any]) -> list[str]:
    """One line per branch with ISA verdicts (isa_check.json has the details): outcome, target, what did not pass."""
    lines: list[str] = []
    for name, branch in result["branches"].items():
        isa = branch.get("isa")
        if not isa:
            continue
        unmet = [c for v in isa["verdicts"] for c in v["checks"] if not c.startswith("pass")]
        lines.append(f"- ISA **{md_text(name)}**: {md_text(isa['outcome'])} ({md_text(isa['family'])}, "
                     f"{md_text(isa.get('arch') or 'arch not recorded')})")
        lines += [f"  - {md_text(c)}" for c in unmet[:8]]
    return [*lines, ""] if lines else []


def _ablation_lines(result: Mapping[str, Any]) -> list[str]:
    """One line per ablated branch and method (ablation.json has the rounds): outcome, slowdown when removed."""
    lines: list[str] = []
    for name, branch in result["branches"].items():
        ablation = (branch.get("observations") or {}).get("ablation")
        if not ablation:
            continue
        lines.append(f"- Ablation **{md_text(name)}** ({ablation.get('rounds')} rounds):")
        for method, found in ablation.get("methods", {}).items():
            slowdown = found.get("slowdown_when_removed")
            figure = f", {slowdown}x slower without it {found.get('slowdown_interval')}" if slowdown else ""
            lines.append(f"  - {md_code(method)}: {md_text(found.get('outcome'))}{md_text(figure)}")
    return [*lines, ""] if lines else []


def _problems(result: Mapping[str, Any]) -> list[str]:
    """Failures and errors per branch; skipped branches grouped by reason (one line per distinct reason)."""
    lines: list[str] = []
    skipped: dict[str, list[str]] = {}
    for name, branch in result["branches"].items():
        failure, error = branch.get("failure"), branch.get("error")
        if failure:
            dims, seed = md_code(json.dumps(failure["dims"])), md_code(failure["seed"])
            lines += [f"**{md_text(name)}** is incorrect. Minimal example: dims {dims}, seed {seed}.",
                      "", *md_fence(_without_reproduce(failure).strip())]
            lines += [*_reproduce_lines(str(failure["reproduce"])), ""] if failure.get("reproduce") else [""]
        elif error:
            lines += [f"**{md_text(name)}** {md_text(error['kind'])}:", "",
                      *md_fence(str(error["message"]).strip()[:3000]), ""]
        elif branch.get("skipped"):
            skipped.setdefault(branch["skipped"], []).append(name)
    for size, name, view in sized_views(result):  # what happened at one size only (the branch's own is above)
        own = result["branches"][name]
        if view.get("error") and view["error"] != own.get("error"):
            lines += [f"**{md_text(name)}** at size **{md_text(size)}**: {md_text(view['error']['kind'])}:", "",
                      *md_fence(str(view["error"]["message"]).strip()[:3000]), ""]
        elif view.get("skipped") and view["skipped"] != own.get("skipped"):
            skipped.setdefault(view["skipped"], []).append(f"{name} [{size}]")
    for reason, names in skipped.items():
        lines += [f"{', '.join(f'**{md_text(n)}**' for n in names)} skipped: {md_text(reason)}", ""]
    return lines


def _reproduce_lines(command: str) -> list[str]:
    """`Reproduce: <command>` as a code span, or as a fenced block when the command spans lines (a code span would
    show its newlines as spaces, and the command pasted from it would differ)."""
    if "\n" in command or "\r" in command:
        return ["Reproduce:", "", *md_fence(command)]
    return [f"Reproduce: {md_code(command)}"]


def _without_reproduce(failure: Mapping[str, Any]) -> str:
    """The failure message without its `reproduce:` line: the summary prints the command once, below it."""
    message = str(failure["message"])
    if not failure.get("reproduce"):
        return message
    return "\n".join(line for line in message.splitlines() if not line.lstrip().lower().startswith("reproduce:"))


def terminal_lines(state: Mapping[str, Any], columns: Sequence[Column] = BRANCH_COLUMNS) -> list[str]:
    """The terminal's tables of branches per case (summary.md's, on plain lines), the legend and the gate's table."""
    lines: list[str] = []
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            capability = toolchain_capability(state, toolchain)
            note = f"  [{capability}: correctness and timing skipped]" if capability not in ("run", None) else ""
            if result.get("sizes"):
                lines.append(f"{one_line(case)} [{toolchain}]  champion per size: {size_champions(result)}{note}")
                lines += ["  " + row for row in sized_table(result, one_line, columns)]
                continue
            why = f" ({one_line(result['champion_note'])})" if result.get("champion_note") else ""
            lines.append(f"{one_line(case)} [{toolchain}]  champion: {one_line(result.get('champion') or 'none')}"
                         + (f" ({times(result.get('champion_speedup'))})" if result.get("champion") else why) + note)
            lines += ["  " + row for row in branch_table(result, one_line, columns)]
    if lines:
        lines += textwrap.wrap(LEGEND.replace("`", ""), width=118)
    lines += [line.replace("`", "") for line in gate_section(state)]
    return lines
