"""The PNG plots beside summary.md (report/plots.py): branch bars with 95% intervals and the roofline, per case and
toolchain; the message when matplotlib is missing. Unit tests draw from hand-made states; the end-to-end test runs
the plugin on a CPU case with two benchmark sizes."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_dcuopt.report import plots
from tests.conftest import CASES, FAST
from tests.context import skip_if_no_gxx

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def timing(median: float) -> dict[str, Any]:
    return {"median_ms": median, "ci95_ms": [median * 0.9, median * 1.1], "iqr_ms": median * 0.05}


def branch(median: float, champion: bool, gflops: float | None = 2.0, gbps: float | None = 8.0,
           device: dict[str, Any] | None = None) -> dict[str, Any]:
    throughput = {k: v for k, v in (("gflops", gflops), ("gbps", gbps)) if v is not None}
    return {"timing": timing(median), "throughput": throughput, "champion": champion,
            "device": device or {"device": "H200"}}


def state_of(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"cases": {case: {"toolchains": {"cuda": result}} for case, result in results.items()}}


def sized_result() -> dict[str, Any]:
    """Two branches at two benchmark sizes: `fast` is champion at `big` only."""
    def with_sizes(small: dict[str, Any], big: dict[str, Any]) -> dict[str, Any]:
        return {"timing": None, "throughput": {}, "champion": False, "sizes": {"small": small, "big": big}}
    return {"sizes": {"small": {"dims": {"N": 4096}}, "big": {"dims": {"N": 1 << 20}}},
            "branches": {"baseline": with_sizes(branch(1.0, True), branch(4.0, False)),
                         "fast": with_sizes(branch(1.1, False), branch(2.0, True, gflops=4.0, gbps=16.0))}}


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC), path
    assert len(data) > 5000, f"{path}: {len(data)} bytes, too small for a drawn plot"


def test_bars_and_roofline_are_pngs_linked_from_the_lines(tmp_path: Path) -> None:
    lines = plots.write_run_plots(state_of({"vadd": sized_result()}), tmp_path)
    text = "\n".join(lines)
    assert lines[0] == "## Plots"
    for name in ("vadd__cuda.branches.png", "vadd__cuda.roofline.png"):
        assert_png(tmp_path / name)
        assert f"[{name}]({name})" in text and f"]({name})" in text


def test_points_cover_every_branch_at_every_size_with_its_interval() -> None:
    points = plots.timed_points(sized_result())
    assert {(p.branch, p.size) for p in points} == {(b, s) for b in ("baseline", "fast") for s in ("small", "big")}
    champions = {(p.branch, p.size) for p in points if p.champion}
    assert champions == {("baseline", "small"), ("fast", "big")}
    fast_big = next(p for p in points if (p.branch, p.size) == ("fast", "big"))
    assert fast_big.ci95_ms == pytest.approx((1.8, 2.2)) and fast_big.gflops / fast_big.gbps == 0.25


def test_a_case_without_sizes_is_plotted_from_the_branch_timings(tmp_path: Path) -> None:
    result = {"branches": {"baseline": branch(2.0, False), "b1": branch(1.0, True)}}
    points = plots.timed_points(result)
    assert [(p.branch, p.size) for p in points] == [("baseline", ""), ("b1", "")]
    plots.write_run_plots(state_of({"k": result}), tmp_path)
    assert_png(tmp_path / "k__cuda.branches.png")


def test_the_roofline_takes_the_devices_roofs_from_peaks_json() -> None:
    ceilings = plots.device_ceilings(plots.timed_points(sized_result()))
    assert ceilings.device == "h200" and ceilings.peak_bandwidth and ceilings.peak_flops


def test_no_roofline_without_flops_and_the_summary_says_why(tmp_path: Path) -> None:
    result = {"branches": {"baseline": branch(2.0, True, gflops=None)}}
    (tmp_path / "k__cuda.roofline.png").write_bytes(b"old run")
    text = "\n".join(plots.write_run_plots(state_of({"k": result}), tmp_path))
    assert "roofline: not made: ref.py gives no `flops` and `bytes_moved`" in text
    assert not (tmp_path / "k__cuda.roofline.png").exists()  # a stale plot is never left to be read as this run's
    assert_png(tmp_path / "k__cuda.branches.png")


def test_nothing_timed_means_no_plot_section(tmp_path: Path) -> None:
    result = {"branches": {"baseline": {"timing": None, "throughput": {}, "champion": False}}}
    assert plots.write_run_plots(state_of({"k": result}), tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_without_matplotlib_the_summary_says_so_and_no_file_is_written(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    lines = plots.write_run_plots(state_of({"vadd": sized_result()}), tmp_path)
    assert plots.MATPLOTLIB_MISSING in lines
    assert plots.MATPLOTLIB_MISSING == "plots: not made: matplotlib is not installed; pip install matplotlib"
    assert list(tmp_path.iterdir()) == []


def test_loading_the_plugin_and_the_cli_imports_no_matplotlib() -> None:
    """matplotlib is imported when plots are drawn, never when pytest loads the plugin or dcuopt starts."""
    code = ("import sys, pytest_dcuopt.plugin, pytest_dcuopt.session, pytest_dcuopt.cli.main; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_file_names_keep_only_safe_characters() -> None:
    assert plots.file_stem("a/b c", "cuda") == "a_b_c__cuda"
    assert plots.file_stem("..", "cpu") == "___cpu"


@skip_if_no_gxx
def test_a_plugin_run_writes_the_plots_beside_summary_md(pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    case = pytester.path / "sized"
    shutil.copytree(CASES / "bench_sizes", case)
    shutil.rmtree(case / "branches" / "wrong_past_64k")
    with (case / "ref.py").open("a") as ref:
        ref.write("\n\ndef flops(N):\n    return N\n")
    result = pytester.runpytest_subprocess("sized", f"--dcuopt-cache-dir={shared_build_cache}",
                                           f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST)
    result.assert_outcomes(passed=6)  # 2 correctness, 2 branches x 2 sizes benchmarks
    run_dir = pytester.path / "run"
    summary = (run_dir / "summary.md").read_text()
    state = json.loads((run_dir / "state.json").read_text())
    assert list(state["cases"]["sized"]["toolchains"]) == ["cpu"]
    for name in ("sized__cpu.branches.png", "sized__cpu.roofline.png"):
        assert_png(run_dir / name)
        assert f"[{name}]({name})" in summary
