"""Human views of state.json: summary.md and the terminal table (pure functions of the state)."""
from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

# ----- text from kernels, compilers and users, placed in Markdown -------------------------------------------------
# Branch and case names, messages and commands can hold `|`, backticks, `*`, `<` and newlines: each is escaped
# where it lands, so it shows as written and never ends a table row, a code span or a fenced block early.
_INLINE_SPECIALS = re.compile(r"([\\`*\[\]|])")


def md_text(text: Any) -> str:
    """Inline Markdown text (a table cell, a list item) that shows `text` literally, on one line."""
    flat = " ".join(str(text).splitlines())
    return _INLINE_SPECIALS.sub(r"\\\1", flat).replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: Any) -> str:
    """An inline code span holding `text` (one line): delimited by more backticks than any run inside it."""
    flat = " ".join(str(text).splitlines())
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def md_fence(text: Any) -> list[str]:
    """A fenced code block holding `text` verbatim: the fence is longer than any backtick run inside it."""
    body = str(text)
    fence = "`" * max(3, _longest_backtick_run(body) + 1)
    return [fence, body, fence]


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def _one_line(text: Any) -> str:
    """For the terminal: newlines shown as `\\n`, so a name or reason never breaks a table row."""
    return str(text).replace("\r", "\\r").replace("\n", "\\n")


def _ms(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


def _x(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _correct(branch: Mapping[str, Any]) -> str:
    if branch.get("skipped") and branch.get("correct") is None:
        return "skipped"
    return {True: "pass", False: "FAIL", None: "-"}[branch.get("correct")]


HEADERS = ["branch", "correct", "median ms", "IQR ms", "rounds", "A/B ms", "speedup", "beats noise", "GB/s",
           "GFLOP/s", "ISA"]
LEGEND = ("`median ms`, `IQR ms`, `rounds`: the branch's own timing run. `A/B ms`: baseline/branch medians of the "
          "interleaved A/B rounds against the baseline; `speedup` and `beats noise` come from them when they ran "
          "(else from the two own-run medians), so `speedup` need not equal the ratio of the `median ms` column. "
          "`beats noise` is `-` when nothing was compared (the branch was never timed, or no baseline was). "
          "`[sync]`: the solve synchronizes or allocates, so it was timed one call per sample from the profiler's "
          "kernel records (docs/gpu-timing.md); `(too few clean samples)`: the median is not trustworthy.")


def _median_cell(timing: Mapping[str, Any]) -> str:
    """The median, with the timing method when it is not the default and a warning when it is not to be trusted."""
    cell = _ms(timing.get("median_ms"))
    if timing.get("method") == "sync":
        cell += " [sync]"
    if timing and timing.get("quality", "ok") != "ok":
        cell += " (too few clean samples)"
    return cell


# Toolchain capabilities (toolchains.base.Capability values); anything else in the field is not one.
CAPABILITIES = ("run", "compile-only", "unavailable")


def branch_rows(toolchain: Mapping[str, Any], text: Callable[[Any], str] = _one_line) -> list[list[str]]:
    """One row per branch; `text` renders the branch name (md_text for Markdown, one line for the terminal)."""
    rows = []
    for name, branch in toolchain["branches"].items():
        timing = branch.get("timing") or {}
        tput = branch.get("throughput") or {}
        mark = "*" if branch.get("champion") else ""
        rows.append([
            f"{text(name)}{mark}", _correct(branch), _median_cell(timing), _ms(timing.get("iqr_ms")),
            str(timing.get("rounds", "-")), _ab(timing), _x(branch.get("speedup_vs_baseline")), _beats(name, branch),
            _ms(tput.get("gbps")), _ms(tput.get("gflops")), text(_isa(branch)),
        ])
    return rows


def _ab(timing: Mapping[str, Any]) -> str:
    """The interleaved medians the speedup came from: baseline/branch, or - when no A/B ran."""
    ab = timing.get("interleaved")
    if not ab:
        return "-"
    return f"{_ms(ab.get('baseline_median_ms'))}/{_ms(ab.get('median_ms'))}"


def _beats(name: str, branch: Mapping[str, Any]) -> str:
    """yes / no against the baseline; `-` when there was no comparison (never timed, or no timed baseline)."""
    if name == "baseline":
        return ""
    if branch.get("beats_baseline"):
        return "yes"
    return "no" if branch.get("speedup_vs_baseline") is not None else "-"


def _isa(branch: Mapping[str, Any]) -> str:
    """The ISA verdict of the branch's isa marks: pass, FAIL, inconclusive, or - (no marks checked)."""
    isa = branch.get("isa") or {}
    outcome = str(isa.get("outcome") or "-")
    return {"pass": "pass", "fail": "FAIL"}.get(outcome, outcome)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    body = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in rows]
    return [line, rule, *body]


def render_summary(state: Mapping[str, Any]) -> str:
    """summary.md: one table per case and toolchain, champion marked, failures with their minimal example."""
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
            champion = result.get("champion")
            out += [f"## {md_text(case)} ({md_text(toolchain)})", "",
                    f"Champion: **{md_text(champion or 'none')}**"
                    + (f" ({_x(result.get('champion_speedup'))} vs baseline)" if champion
                       else " (no correct, timed branch)"), ""]
            out += _table(branch_rows(result, md_text))
            out.append("")
            out += _problems(result)
            out += _isa_lines(result)
    if any(b.get("timing") and b["timing"].get("concurrent_workers", 1) > 1
           for d in state["cases"].values() for t in d["toolchains"].values() for b in t["branches"].values()):
        out += ["**Warning:** timings were taken while several xdist workers ran at once; they are fit for a "
                "correctness sweep, not for comparison. Re-run the benchmarks with `-n 0`.", ""]
    out += ["`*` = champion: the fastest correct branch whose median's 95% confidence interval lies wholly below the "
            "baseline's (\"beats noise\"). " + LEGEND, ""]
    out += gate_section(state)
    return "\n".join(out)


# ----- the regression gate (--dcuopt-compare; docs/gating.md) ---------------------------------------------------------
GATE_HEADERS = ["case", "toolchain", "branch", "verdict", "before ms", "after ms", "change", "95% interval",
                "regressions", "why / notes"]


def gate_rows(state: Mapping[str, Any]) -> list[list[str]]:
    """One row per branch with a `gate` entry: verdict, medians, change and its interval, regressions, reasons."""
    rows = []
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            for name, branch in result["branches"].items():
                gate = branch.get("gate")
                if not gate:
                    continue
                change = gate.get("change") or {}
                interval = change.get("change_interval")
                why = _clip(_one_line("; ".join(text for text in [gate.get("reason"), *(gate.get("notes") or [])]
                                                if text)))
                rows.append([_gate_name(case), _gate_name(toolchain), _gate_name(name), gate["verdict"],
                             _ms(change.get("before_median_ms")),
                             _ms(change.get("after_median_ms")), _pct(change.get("change")),
                             f"{_pct(interval[0])} .. {_pct(interval[1])}" if interval else "-",
                             ", ".join(gate.get("regressions") or []) or "-", why.replace("|", "/") or "-"])
    return rows


def _gate_name(text: str) -> str:
    """A name in the gate table, which the terminal shows too: one line, no `|` (as in `why / notes`)."""
    return _one_line(text).replace("|", "/")


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
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(GATE_HEADERS)]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(GATE_HEADERS, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return [line, rule, *("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
                          for row in rows)]


def gate_section(state: Mapping[str, Any]) -> list[str]:
    """`## Gate` with the baseline, the rule, the verdict counts and the table; [] when the run was not gated."""
    gate = state.get("gate")
    table = gate_table(state)
    if not gate or not table:
        return []
    rule = gate.get("rule") or {}
    counts = ", ".join(f"{v} {k}" for k, v in (gate.get("counts") or {}).items()) or "nothing compared"
    out = ["## Gate vs baseline", "", f"- baseline: {md_code(gate['baseline'])} ({gate.get('baseline_created_at')})",
           f"- rule: SLOW/FAST when the {rule.get('confidence', 0.95):.0%} interval of the ratio after/before excludes "
           f"1 and the change exceeds both {rule.get('threshold', 0):.1%} and {rule.get('floor_us', 0):g} us; "
           f"AMBIGUOUS re-measured up to {rule.get('retries', 0)} times; `why / notes` is cut short here, state.json "
           "has it whole", f"- verdicts: {counts}; regressions: {gate.get('regressions', 0)}"]
    if gate.get("missing"):
        out.append(f"- in the baseline, not in this run: {md_text(', '.join(gate['missing']))}")
    return [*out, "", *table, ""]


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
        parts.append(f"at least {policy['min_samples']} samples")
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
    return any("event_offset" in (b.get("timing") or {})
               for data in state.get("cases", {}).values() for result in data["toolchains"].values()
               for b in result["branches"].values())


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


def terminal_lines(state: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for case, data in state["cases"].items():
        for toolchain, result in data["toolchains"].items():
            capability = toolchain_capability(state, toolchain)
            note = f"  [{capability}: correctness and timing skipped]" if capability not in ("run", None) else ""
            lines.append(f"{_one_line(case)} [{toolchain}]  champion: {_one_line(result.get('champion') or 'none')}"
                         + (f" ({_x(result.get('champion_speedup'))})" if result.get("champion") else "") + note)
            lines += ["  " + row for row in _table(branch_rows(result))]
    if lines:
        lines += textwrap.wrap(LEGEND.replace("`", ""), width=118)
    lines += [line.replace("`", "") for line in gate_section(state)]
    return lines
