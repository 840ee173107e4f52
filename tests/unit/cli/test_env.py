"""`dcuopt env`: DTK tools found outside PATH, their versions, hipprof's counter probe, perf without a PMU."""
from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pytest_dcuopt.cli import env
from pytest_dcuopt.profile.profilers import PerfProfiler
from pytest_dcuopt.toolchains.tool_finders import TOOL_FINDERS

HIPPROF = """#!/bin/sh
case "$1" in
  -h) echo "hipprof (DTK 26.04.1) usage: hipprof [options] <app>";;
  --list-basic) if [ -n "$NO_PMC" ]; then echo "hsa error: no agent" >&2; exit 1; fi; echo "SQ_WAVES";;
esac
"""


def install(root: Path, name: str, text: str) -> Path:
    path = root / "bin" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def dtk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DTK install root with tools that are not on PATH."""
    root = tmp_path / "dtk"
    monkeypatch.setenv("DTK_PATH", str(root))
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # nothing on PATH: only the install root can answer
    return root


@pytest.mark.parametrize("name", ["hipprof", "rocm-smi", "rocminfo", "hipcc"])
def test_every_dtk_tool_is_found_under_the_install_root(dtk: Path, name: str) -> None:
    tool = install(dtk, name, "#!/bin/sh\necho 1.0\n")
    assert TOOL_FINDERS[name]() == str(tool)


def test_hipprof_has_its_version_line_and_the_counter_probe(dtk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install(dtk, "hipprof", HIPPROF)
    tools = {"hipprof": env.tool_entry(TOOL_FINDERS["hipprof"], "loss", env.VERSION_ARGS["hipprof"]),
             "perf": {"available": False, "path": None, "missing_means": "x"}}
    env.probe_counters(tools)
    assert tools["hipprof"]["version"] == "hipprof (DTK 26.04.1) usage: hipprof [options] <app>"
    assert tools["hipprof"]["pmc_available"] is True and "--list-basic" in tools["hipprof"]["pmc_probe"]["command"]
    monkeypatch.setenv("NO_PMC", "1")
    env.probe_counters(tools)
    assert tools["hipprof"]["pmc_available"] is False and "no agent" in tools["hipprof"]["pmc_probe"]["output"]


def test_perf_without_hardware_counters_is_not_available() -> None:
    tools = {"hipprof": {"available": False}, "perf": env.tool_entry(TOOL_FINDERS["perf"], "no CPU counters")}
    if tools["perf"]["path"] is None:
        pytest.skip("perf is not installed here")
    env.probe_counters(tools)
    counts = PerfProfiler().hardware_verdict() is None
    assert tools["perf"]["available"] is counts
    if not counts:
        assert tools["perf"]["unusable"].startswith(f"installed at {tools['perf']['path']}, but `perf stat")


def test_a_version_line_is_the_one_with_a_number() -> None:
    entry = env.tool_entry(lambda: "/bin/sh", "x", ("-c", "echo 'NVIDIA (R) driver'; echo 'release 13.0, V13.0.88'"))
    assert entry["version"] == "release 13.0, V13.0.88"
