"""`dcuopt finalize RUN_DIR`: summary.md for the whole run, with PNG plots beside it (report/plots.py, matplotlib):
best_median.png (the best median per iteration) and, per closed iteration, its branch bars with 95% intervals and its
roofline, drawn from the iteration's harness state (`iterv<i>/pytest/state.json`).
"""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ..files import write_atomic
from ..report.plots import MATPLOTLIB_MISSING, file_stem, line_plot, load_pyplot, plot_group, timed_points
from .layout import METHOD_LISTS, RunLayout, add_run_dir_command, open_run

PLOT_NAME = "best_median.png"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_run_dir_command(commands, "finalize", "write summary.md (and its PNG plots) for the run", run)


def run(args: argparse.Namespace) -> int:
    layout, state = open_run(args)
    write_atomic(layout.run_dir / "summary.md", render(state, write_plots(layout, state)))
    print(f"summary: {layout.run_dir / 'summary.md'}")
    return 0


def write_plots(layout: RunLayout, state: dict[str, Any]) -> list[str]:
    """The PNG plots beside summary.md and the Markdown lines linking them ([] when nothing was measured yet)."""
    points = best_per_iteration(state)
    harness_states = [(h["iter"], Path(h["harness_state"])) for h in state["history"] if h.get("harness_state")]
    if not points:
        return []
    pyplot = load_pyplot()
    if pyplot is None:
        return [MATPLOTLIB_MISSING]
    line_plot(pyplot, points, "best median per iteration (ms)", "median ms", layout.run_dir / PLOT_NAME)
    lines = [f"![best median per iteration]({PLOT_NAME})", ""]
    for index, path in harness_states:
        if not path.is_file():
            lines.append(f"- iteration {index}: no plots: its harness state {path} is gone (close the iteration "
                         "again to measure it)")
            continue
        for case, data in json.loads(path.read_text()).get("cases", {}).items():
            for toolchain, result in data["toolchains"].items():
                found = timed_points(result)
                if found:
                    name = PurePosixPath(case).name  # the iteration's folder, whatever pytest's rootdir was
                    lines += plot_group(pyplot, found, f"iteration {index}: {name} ({toolchain})", layout.run_dir,
                                        file_stem(name, toolchain))
    return lines


def best_per_iteration(state: dict[str, Any]) -> list[tuple[str, float]]:
    """(label, ms): the first iteration's baseline (the original), then the best after each iteration, each as
    measured in that iteration's harness run."""
    history = state["history"]
    if not history:
        return []
    return [("baseline", history[0]["best_before_ms"])] + [(f"iter {h['iter']}", h["ms"]) for h in history]


def overall_speedup(state: dict[str, Any]) -> float | None:
    """The product of the promoted iterations' paired speedups (each against the best before it)."""
    steps = [h["speedup_vs_best_before"] for h in state["history"] if h["status"] == "improved"]
    return math.prod(steps) if steps else None


def render(state: dict[str, Any], plots: Sequence[str]) -> str:
    overall = overall_speedup(state)
    history = state["history"]
    lines = [f"# Optimization run: {state['case']} ({state['toolchain']})", "",
             f"- Run dir: `{state['run_dir']}`", f"- Baseline: `{state['baseline_file_original']}`",
             f"- Reference: `{state['ref_file']}`", f"- Dims: `{state['dims']}`",
             f"- Iterations closed: {len(history)} / {state['iterations_total']}, {state['branches']} branches each",
             "", "## Headline", "",
             f"- Best kernel: `{state['best_file']}`",
             f"- Best median: {_ms(state['best_metric_ms'])} (last measured in iteration "
             f"{history[-1]['iter'] if history else '-'})",
             f"- Overall speedup: {f'{overall:.2f}x' if overall else 'none'} (product of each promotion's paired "
             "speedup against the best before it)"]
    if history:
        lines.append(f"- First baseline median: {_ms(history[0]['best_before_ms'])} (iteration 1's harness run)")
    lines += ["", "## Iterations", "", "| iter | status | champion | best before ms | best after ms | speedup "
              "| interval | methods |", "|---|---|---|---|---|---|---|---|"]
    for h in history:
        interval = h["speedup_interval"] or "-"
        speed = f"{h['speedup_vs_best_before']:.3g}x" if h["speedup_vs_best_before"] else "-"
        lines.append(f"| {h['iter']} | {h['status']} | {h['champion'] or '-'} | {_ms(h['best_before_ms'])} | "
                     f"{_ms(h['ms'])} | {speed} | {interval} | {', '.join(h['methods'])} |")
    for name in METHOD_LISTS[1:]:
        lines += ["", f"## {name.replace('_methods', '').replace('_', ' ').capitalize()} methods", ""]
        lines += [f"- **{m['id']}** ({m['axis']}, iter {m['iter']}){_detail(m)}" for m in state[name]] or ["_(none)_"]
    lines += ["", "## Method interactions (pairs ablated together)", ""]
    lines += interaction_lines(history) or ["_(none measured)_"]
    lines += ["", "## All methods tried", ""]
    lines += [f"- {m['id']} (iter {m['iter']}): {m['name']}" for m in state["selected_methods"]] or ["_(none)_"]
    if plots:
        lines += ["", "## Plots", "", *plots]
    lines += ["", "## Caveats", "", *caveats(state)]
    return "\n".join(lines) + "\n"


def interaction_lines(history: Sequence[dict[str, Any]]) -> list[str]:
    """Per promoted iteration, each pair's slowdown-when-both-removed over the product of the singles."""
    found = []
    for entry in history:
        for pair, result in ((entry.get("ablation") or {}).get("interactions") or {}).items():
            if result.get("interaction") is None:
                found.append(f"- iter {entry['iter']}, {pair}: not estimated ({result.get('outcome')})")
            else:
                found.append(f"- iter {entry['iter']}, {pair}: {result['interaction_outcome']}, "
                             f"{result['interaction']}x the product of the single slowdowns "
                             f"{result['interaction_interval']}")
    return found


def _detail(method: dict[str, Any]) -> str:
    parts = []
    if method.get("slowdown_when_removed"):
        parts.append(f"removing it: {method['slowdown_when_removed']}x slower {method['slowdown_interval']}")
    if method.get("note"):
        parts.append(method["note"])
    isa = method.get("isa") or {}
    if isa and isa.get("isa") not in ("missing", "unknown"):  # those two are the note already
        parts.append(f"ISA ({isa.get('family') or '?'}): {isa['isa']}")
    return f" - {'; '.join(parts)}" if parts else ""


def caveats(state: dict[str, Any]) -> list[str]:
    found = [f"- {name} missing: {why}" for name, why in state.get("env", {}).get("degraded", {}).items()]
    profiles = {r.get("profile", {}).get("reason") for r in state["iterations"].values()} - {None}
    found += [f"- profile: {reason}" for reason in sorted(profiles)]
    if state.get("recommendation"):
        found.append(f"- recommendation: {state['recommendation']}")
    open_ones = [k for k, r in state["iterations"].items() if r["status"] == "open"]
    if open_ones:
        found.append(f"- iteration(s) {', '.join(open_ones)} opened but never closed")
    return found or ["_(none)_"]


def _ms(value: float | None) -> str:
    return f"{value:.4g} ms" if value else "n/a"
