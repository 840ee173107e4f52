"""Plots of a run as PNG files beside summary.md (docs/results.md "Plots"), drawn with matplotlib.

Per case and toolchain:
- `<case>__<toolchain>.branches.png`: each branch's median with its 95% confidence interval as an error bar,
  one group of bars per benchmark size when ref.py declares `bench_sizes`; the champion filled, the others hatched.
- `<case>__<toolchain>.roofline.png`: every branch at every benchmark size placed at its arithmetic intensity
  (ref.py `flops` / `bytes_moved`, i.e. GFLOP/s over GB/s of the same timing) and its achieved GFLOP/s, under the
  device's roofs from profile/data/peaks.json (profile/roofline.py `ceilings_for`) when the device has an entry.

matplotlib is imported here only, when plots are written (never when the plugin loads), with the Agg backend
(files only, no display). Without matplotlib, summary.md says so (`MATPLOTLIB_MISSING`) and nothing else changes.
"""
from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ..profile.roofline import Ceilings, ceilings_for
from .markdown import md_text
from .summary import sized_views

MATPLOTLIB_MISSING = "plots: not made: matplotlib is not installed; pip install matplotlib"
CHAMPION_COLOR, OTHER_COLOR, ROOF_COLOR = "#d62728", "#1f77b4", "#555555"
_MARKERS = "os^vD<>ph*"  # one per benchmark size on the roofline
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def load_pyplot() -> ModuleType | None:
    """matplotlib.pyplot on the Agg backend, or None when matplotlib cannot be imported."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        return None
    return pyplot


def file_stem(*parts: str) -> str:
    """A file name from case and toolchain names (any character outside [A-Za-z0-9_.-] becomes `_`)."""
    return "__".join(_UNSAFE_NAME.sub("_", part).strip("._") or "_" for part in parts)


@dataclass(frozen=True)
class Point:
    """One branch at one benchmark size (size "" when the case has none)."""

    branch: str
    size: str
    median_ms: float
    ci95_ms: tuple[float, float] | None
    champion: bool
    gflops: float | None
    gbps: float | None
    device: Mapping[str, Any]


def timed_points(result: Mapping[str, Any]) -> list[Point]:
    """Every timed branch of one case/toolchain result, at every benchmark size (its own timing when it has none)."""
    views = ([(size, name, view) for size, name, view in sized_views(result)] if result.get("sizes") else
             [("", name, branch) for name, branch in result["branches"].items()])
    points = []
    for size, name, view in views:
        timing = view.get("timing") or {}
        if timing.get("median_ms") is None:
            continue
        ci = timing.get("ci95_ms")
        tput = view.get("throughput") or {}
        points.append(Point(name, size, float(timing["median_ms"]), (float(ci[0]), float(ci[1])) if ci else None,
                            bool(view.get("champion")), tput.get("gflops"), tput.get("gbps"), view.get("device") or {}))
    return points


def branch_bars(pyplot: ModuleType, points: Sequence[Point], title: str, path: Path) -> None:
    """Grouped bars: x = benchmark size (one group when none), a bar per branch, the 95% CI as the error bar."""
    sizes = list(dict.fromkeys(p.size for p in points))
    branches = list(dict.fromkeys(p.branch for p in points))
    width = 0.8 / len(branches)
    figure, axes = pyplot.subplots(figsize=(max(6.0, 1.2 + 0.5 * len(points)), 4.2))
    try:
        for k, branch in enumerate(branches):
            mine = {p.size: p for p in points if p.branch == branch}
            for i, size in enumerate(sizes):
                point = mine.get(size)
                if point is None:
                    continue
                low, high = point.ci95_ms or (point.median_ms, point.median_ms)
                axes.bar(i + (k - (len(branches) - 1) / 2) * width, point.median_ms, width * 0.9,
                         yerr=[[max(0.0, point.median_ms - low)], [max(0.0, high - point.median_ms)]], capsize=3,
                         color=CHAMPION_COLOR if point.champion else OTHER_COLOR,
                         hatch="" if point.champion else "//", edgecolor="black", linewidth=0.5)
                axes.annotate(branch + (" *" if point.champion else ""), (i + (k - (len(branches) - 1) / 2) * width,
                              high), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7, rotation=90)
        axes.set_xticks(range(len(sizes)), [size or "default dims" for size in sizes])
        axes.set_ylabel("median ms (error bar: 95% CI)")
        axes.set_title(f"{title}\nred, filled, *: champion (at that size)", fontsize=9)
        axes.margins(y=0.25)
        figure.tight_layout()
        figure.savefig(path, dpi=110)
    finally:
        pyplot.close(figure)


def device_ceilings(points: Sequence[Point]) -> Ceilings:
    device = next((p.device for p in points if p.device), {})
    return ceilings_for(device.get("arch"), device.get("device"))


def roofline_plot(pyplot: ModuleType, points: Sequence[Point], ceilings: Ceilings, title: str, path: Path) -> None:
    """Log-log: x = FLOP per byte, y = achieved GFLOP/s; a colour per branch, a marker per benchmark size, the
    champion (at its size) ringed in black; the roofs when the device has an entry in peaks.json."""
    placed = [(p, p.gflops / p.gbps, p.gflops) for p in points if p.gflops and p.gbps]
    intensities = [x for _, x, _ in placed]
    ridge = ceilings.ridge
    # At least two decades: on a narrower log axis matplotlib labels minor ticks, which overprint each other.
    low = min([*intensities, ridge or intensities[0]]) / 10
    high = max([*intensities, ridge or intensities[0]]) * 10
    figure, axes = pyplot.subplots(figsize=(7.2, 4.8))
    try:
        if ceilings.peak_bandwidth or ceilings.peak_flops:
            _draw_roofs(axes, ceilings, low, high)
        branches = list(dict.fromkeys(p.branch for p, _, _ in placed))
        sizes = list(dict.fromkeys(p.size for p, _, _ in placed))
        colors = pyplot.get_cmap("tab10")
        for point, x, y in placed:
            label = point.branch + (f" [{point.size}]" if point.size else "")
            label += " (champion)" if point.champion else ""
            axes.scatter(x, y, marker=_MARKERS[sizes.index(point.size) % len(_MARKERS)],
                         color=colors(branches.index(point.branch) % 10), s=70 if point.champion else 40,
                         edgecolor="black", linewidth=2.0 if point.champion else 0.5, zorder=3, label=label)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlim(low, high)
        axes.set_xlabel("arithmetic intensity (FLOP/byte: ref.py flops / bytes_moved)")
        axes.set_ylabel("achieved GFLOP/s")
        roofs = (f"roofs: {ceilings.device}" if ceilings.peak_bandwidth or ceilings.peak_flops else
                 f"no roof: {ceilings.sources.get('device', 'device unknown')}")
        axes.set_title(f"{title}\n{roofs}", fontsize=9)
        axes.grid(True, which="both", linewidth=0.3)
        axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        figure.tight_layout()
        figure.savefig(path, dpi=110)
    finally:
        pyplot.close(figure)



def _draw_roofs(axes: Any, ceilings: Ceilings, low: float, high: float) -> None:
    import numpy as np  # a dependency already; only needed with matplotlib

    x = np.geomspace(low, high, 200)
    bandwidth = ceilings.peak_bandwidth / 1e9 if ceilings.peak_bandwidth else None
    compute = ceilings.peak_flops / 1e9 if ceilings.peak_flops else None
    if bandwidth and compute:
        axes.plot(x, np.minimum(x * bandwidth, compute), color=ROOF_COLOR,
                  label=f"roof: {bandwidth:.0f} GB/s, {compute:.0f} GFLOP/s")
    elif bandwidth:
        axes.plot(x, x * bandwidth, color=ROOF_COLOR, linestyle="--",
                  label=f"memory roof {bandwidth:.0f} GB/s (compute peak unknown)")
    elif compute:
        axes.axhline(compute, color=ROOF_COLOR, linestyle="--", label=f"compute roof {compute:.0f} GFLOP/s "
                                                                        "(bandwidth unknown)")


def write_run_plots(state: Mapping[str, Any], run_dir: Path) -> list[str]:
    """Write each case/toolchain's plots into `run_dir`; the `## Plots` lines of summary.md that link them, say
    why a plot was not made, or say that matplotlib is missing."""
    groups = [(case, toolchain, points) for case, data in state.get("cases", {}).items()
              for toolchain, result in data["toolchains"].items() if (points := timed_points(result))]
    if not groups:
        return []
    pyplot = load_pyplot()
    if pyplot is None:
        return ["## Plots", "", MATPLOTLIB_MISSING, ""]
    lines = ["## Plots", ""]
    for case, toolchain, points in groups:
        lines += plot_group(pyplot, points, f"{case} ({toolchain})", run_dir, file_stem(case, toolchain))
    return [*lines, ""]


def plot_group(pyplot: ModuleType, points: Sequence[Point], title: str, folder: Path, stem: str) -> list[str]:
    """The bars and the roofline of one case/toolchain in `folder`, and their Markdown lines."""
    lines = []
    bars = folder / f"{stem}.branches.png"
    lines += _made(lambda: branch_bars(pyplot, points, f"{title}: median per branch", bars), bars,
                   f"{title}: branch medians with 95% CI")
    roofline = folder / f"{stem}.roofline.png"
    if not any(p.gflops and p.gbps for p in points):
        roofline.unlink(missing_ok=True)  # an old run's plot would no longer match this run
        return [*lines, f"- {md_text(title)} roofline: not made: ref.py gives no `flops` and `bytes_moved` (or "
                        "no branch was timed with both), so no arithmetic intensity"]
    ceilings = device_ceilings(points)
    lines += _made(lambda: roofline_plot(pyplot, points, ceilings, f"{title}: roofline", roofline), roofline,
                   f"{title}: roofline")
    return lines


def _made(draw: Any, path: Path, caption: str) -> list[str]:
    """Draw one plot; a plotting error becomes a line of the summary naming it (the other files are still made)."""
    try:
        with warnings.catch_warnings():
            # A layout warning is cosmetic: under a `filterwarnings = error` pytest config it must not cost the plot.
            warnings.simplefilter("default")
            draw()
    except Exception as exc:  # matplotlib's errors have no common base class
        return [f"- {md_text(caption)}: not made: {type(exc).__name__}: {md_text(exc)}"]
    return [f"- {md_text(caption)}: [{path.name}]({path.name})", "", f"  ![{md_text(caption)}]({path.name})"]


def line_plot(pyplot: ModuleType, points: Sequence[tuple[str, float]], title: str, ylabel: str, path: Path) -> None:
    """One value per label, joined by a line, the value written at each point (the loop's best per iteration)."""
    figure, axes = pyplot.subplots(figsize=(max(5.0, 1.2 * len(points)), 3.6))
    try:
        xs = range(len(points))
        values = [value for _, value in points]
        axes.plot(xs, values, marker="o", color=OTHER_COLOR)
        for x, value in zip(xs, values, strict=True):
            axes.annotate(f"{value:.4g}", (x, value), textcoords="offset points", xytext=(0, 6), ha="center",
                          fontsize=8)
        axes.set_xticks(list(xs), [label for label, _ in points])
        axes.set_ylim(0, max(values) * 1.2 or 1.0)
        axes.set_ylabel(ylabel)
        axes.set_title(title, fontsize=9)
        figure.tight_layout()
        figure.savefig(path, dpi=110)
    finally:
        pyplot.close(figure)
