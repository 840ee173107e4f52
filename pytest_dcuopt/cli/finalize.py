"""`dcuopt finalize RUN_DIR`: summary.md for the whole run, and best_median.svg (the best median per iteration).

matplotlib is not a dependency; the plot is a small hand-written SVG (`svg_line_plot`).
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from ..files import write_atomic
from .layout import METHOD_LISTS, add_run_dir_command, open_run

PLOT_NAME = "best_median.svg"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_run_dir_command(commands, "finalize", "write summary.md (and best_median.svg) for the run", run)


def run(args: argparse.Namespace) -> int:
    layout, state = open_run(args)
    points = best_per_iteration(state)
    if points:
        write_atomic(layout.run_dir / PLOT_NAME, svg_line_plot(points, "best median per iteration (ms)"))
    write_atomic(layout.run_dir / "summary.md", render(state, PLOT_NAME if points else None))
    print(f"summary: {layout.run_dir / 'summary.md'}")
    return 0


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


def render(state: dict[str, Any], plot: str | None) -> str:
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
    if plot:
        lines += ["", f"![best median per iteration]({plot})"]
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


def svg_line_plot(points: Sequence[tuple[str, float]], title: str, width: int = 560, height: int = 320) -> str:
    """A minimal line chart: one point per (label, value), y from 0 to the largest value."""
    left, right, top, bottom = 64, 16, 32, 48
    top_value = max(v for _, v in points) or 1.0
    step = (width - left - right) / max(1, len(points) - 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return left + i * step, top + (1 - value / top_value) * (height - top - bottom)

    coords = [xy(i, v) for i, (_, v) in enumerate(points)]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             'font-size="12">', f'<text x="{width / 2}" y="18" text-anchor="middle">{title}</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
             f'<text x="{left - 6}" y="{top + 4}" text-anchor="end">{top_value:.4g}</text>',
             f'<text x="{left - 6}" y="{height - bottom + 4}" text-anchor="end">0</text>',
             '<polyline fill="none" stroke="steelblue" stroke-width="2" points="'
             + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords) + '"/>']
    for (label, value), (x, y) in zip(points, coords, strict=True):
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="steelblue"/>',
                  f'<text x="{x:.1f}" y="{y - 8:.1f}" text-anchor="middle">{value:.4g}</text>',
                  f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="middle">{label}</text>']
    return "\n".join([*parts, "</svg>"]) + "\n"
