"""`dcuopt pack` / `dcuopt ingest` end to end on the CPU: a loop iteration is packed, its run.sh runs pytest in
another folder (as it would on a DCU machine), and the results come back to where close-iter reads its harness
state. Stale results (a packed file changed there before the run, or here since the pack) are refused, naming the
file; results that finished later than the ingested ones are kept unless forced."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pytest_dcuopt.cli.close_iter import MEASURE_SELECTION
from pytest_dcuopt.cli.harness import HarnessRun, toolchain_entry
from pytest_dcuopt.tool import ToolResult
from tests.context import skip_if_no_gxx
from tests.plugin.test_cli import HARNESS_ARGS, LOOP, PLACEBO, REGISTER, UNROLL, dcuopt, runs

RUN_SH_TIMEOUT_S = 600


def unpack(archive: Path, where: Path) -> Path:
    """The pack extracted into `where` (as a person would with tar xzf); its root folder."""
    with tarfile.open(archive) as packed:
        (root,) = {Path(name).parts[0] for name in packed.getnames()}
        for member in packed.getmembers():
            target = where / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            source = packed.extractfile(member)
            assert source is not None
            target.write_bytes(source.read())
            target.chmod(member.mode)
    return where / root


def run_remote(root: Path) -> subprocess.CompletedProcess[str]:
    """run.sh from an unrelated working directory, with this interpreter (which has pytest_dcuopt)."""
    return subprocess.run(["bash", str(root / "run.sh")], cwd=root.parent, env={**os.environ, "PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=RUN_SH_TIMEOUT_S, check=False)


def refusal(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    capsys.readouterr()
    assert dcuopt("ingest", *argv) == 2
    return capsys.readouterr().err


@skip_if_no_gxx
def test_a_packed_iteration_runs_elsewhere_and_is_ingested_where_close_iter_reads_it(
        tmp_path: Path, shared_build_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    shutil.copytree(LOOP / "case", project / "rowsum")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "conftest.py").write_text(REGISTER)
    assert dcuopt("setup", project / "rowsum", "--iterations", 1, "--branches", 2, "--pytest-args",
                  HARNESS_ARGS.format(cache=shared_build_cache)) == 0
    (run_dir,) = runs(project / "rowsum")
    assert dcuopt("open-iter", run_dir) == 0
    iteration = run_dir / "iterv1"
    (iteration / "methods.json").write_text(json.dumps({"iter": 1, "methods": [UNROLL, PLACEBO]}))
    for branch in ("b1", "b2"):
        shutil.copy(LOOP / "iter1" / branch / "kernel.cpp", iteration / "branches" / branch / "kernel.cpp")

    archive = tmp_path / "iterv1.pack.tar.gz"
    assert dcuopt("pack", run_dir, "-o", archive) == 0
    with tarfile.open(archive) as packed:
        names = {name.split("/", 1)[1] for name in packed.getnames()}
    assert names == {"manifest.json", "run.sh", "pytest.ini", "iterv1/ref.py", "iterv1/case_ref.py",
                     "iterv1/dims.json", "iterv1/methods.json", "iterv1/kernel.cpp", "iterv1/branches/b1/kernel.cpp",
                     "iterv1/branches/b2/kernel.cpp"}  # no profile run, budget, analysis or earlier results

    remote = unpack(archive, tmp_path / "elsewhere")
    manifest = json.loads((remote / "manifest.json").read_text())
    assert manifest["pytest_args"][:2] == ["iterv1", "--dcuopt-run-dir=results/pytest"]
    assert manifest["pytest_args"][-2:] == ["-k", MEASURE_SELECTION] and "--dcuopt-toolchain=cpu" in manifest[
        "pytest_args"]
    shim = (remote / "iterv1" / "ref.py").read_text()
    assert str(project / "rowsum" / "ref.py") not in shim and '/ "case_ref.py")' in shim  # the copy beside it
    done = run_remote(remote)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # b2 is wrong: its test fails
    assert (remote / "results.tar.gz").is_file()

    assert dcuopt("ingest", run_dir, remote / "results.tar.gz") == 0
    harness_dir = iteration / "pytest"
    entry = toolchain_entry(HarnessRun(ToolResult(("ingested",), 0, "", "", 0.0), harness_dir), "iterv1", "cpu")
    assert entry["branches"]["b1"]["correct"] is True and entry["branches"]["b1"]["timing"]["median_ms"] > 0
    assert entry["branches"]["b2"]["correct"] is False
    assert entry["branches"]["b1"]["source"] == "iterv1/branches/b1/kernel.cpp"  # the packed copy, there
    assert json.loads((harness_dir / "state.json").read_text())["run_dir"].endswith("results/pytest")
    ingested = json.loads((harness_dir / "ingested.json").read_text())
    assert ingested["manifest"]["pack_id"] == manifest["pack_id"] and ingested["exit_status"] == "1"
    assert (harness_dir / "pytest.log").is_file()

    capsys.readouterr()
    assert dcuopt("ingest", run_dir, remote / "results.tar.gz") == 0  # the same results again: nothing changes
    assert "already holds these results" in capsys.readouterr().out

    state = json.loads((harness_dir / "state.json").read_text())
    (harness_dir / "state.json").write_text(json.dumps({**state, "finished_at": "9999-01-01T00:00:00+00:00"}))
    assert "later than the ingested ones" in refusal(capsys, run_dir, remote / "results.tar.gz")
    assert dcuopt("ingest", run_dir, remote / "results.tar.gz", "--force") == 0
    assert json.loads((harness_dir / "state.json").read_text())["finished_at"] == state["finished_at"]

    b1 = iteration / "branches" / "b1" / "kernel.cpp"
    original = b1.read_text()
    b1.write_text(original + "// edited after the pack\n")
    message = refusal(capsys, run_dir, remote / "results.tar.gz")
    assert "iterv1/branches/b1/kernel.cpp" in message and "changed here since the pack" in message
    b1.write_text(original)

    tampered = remote / "iterv1" / "branches" / "b2" / "kernel.cpp"
    tampered.write_text(tampered.read_text() + "// edited there before the run\n")
    run_remote(remote)
    message = refusal(capsys, run_dir, remote / "results.tar.gz")
    assert "iterv1/branches/b2/kernel.cpp" in message and "differed from the pack" in message

    # close-iter finishes the iteration from the ingested results (the forced ingest above), measuring nothing here.
    before = (harness_dir / "state.json").read_text()
    assert dcuopt("close-iter", run_dir, "--ingested") == 0
    assert (harness_dir / "state.json").read_text() == before and (harness_dir / "ingested.json").is_file()
    closed = json.loads((run_dir / "state.json").read_text())
    assert [(h["status"], h["champion"]) for h in closed["history"]] == [("improved", "b1")]
    attribution = json.loads((iteration / "attribution.json").read_text())
    assert attribution["ablation"]["status"] == "not run" and "--ingested" in attribution["ablation"]["reason"]
    assert not (iteration / "ablation").exists() and not (iteration / "champion_profile.json").exists()
    b1.write_text(original + "// edited after the ingest\n")
    assert "changed here since the pack" in _close_refusal(capsys, run_dir)


def _close_refusal(capsys: pytest.CaptureFixture[str], run_dir: Path) -> str:
    capsys.readouterr()
    assert dcuopt("close-iter", run_dir, "--ingested") == 2
    return capsys.readouterr().err


@skip_if_no_gxx
def test_setup_judges_a_case_measured_elsewhere_instead_of_running_the_preflight(
        tmp_path: Path, shared_build_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = tmp_path / "project" / "rowsum"
    shutil.copytree(LOOP / "case", case)
    args = HARNESS_ARGS.format(cache=shared_build_cache)
    archive = tmp_path / "rowsum.pack.tar.gz"
    assert dcuopt("pack", case, "--toolchain", "cpu", "--pytest-args", args, "-o", archive) == 0
    remote = unpack(archive, tmp_path / "elsewhere")
    done = run_remote(remote)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    measured = tmp_path / "measured"
    assert dcuopt("ingest", case, remote / "results.tar.gz", "--into", measured) == 0
    run_dir = tmp_path / "run"
    assert dcuopt("setup", case, "--run-dir", run_dir, "--preflight-from", measured, "--pytest-args", args) == 0
    state = json.loads((run_dir / "state.json").read_text())
    assert state["toolchain"] == "cpu" and state["preflight"]["ingested_from"] == str(remote / "results.tar.gz")
    bench = json.loads((run_dir / "baseline" / "bench.json").read_text())
    assert bench["median_ms"] > 0 and state["best_metric_ms"] == bench["median_ms"]
    assert (run_dir / "baseline" / "preflight" / "ingested.json").is_file()
    (case / "kernel.cpp").write_text((case / "kernel.cpp").read_text() + "// edited after the pack\n")
    capsys.readouterr()
    assert dcuopt("setup", case, "--run-dir", tmp_path / "run2", "--preflight-from", measured) == 2
    assert "changed here since the pack was made" in capsys.readouterr().err
