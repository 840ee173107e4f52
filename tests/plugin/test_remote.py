"""`dcuopt pack` / `dcuopt ingest` end to end on the CPU: a two-iteration loop in which every step that needs the
device is a pack whose run.sh runs in another folder with an interpreter that has no pytest_dcuopt (as on a DCU
machine), with the plugin the pack carries: setup's preflight, open-iter's profile of the best, each iteration's
measurement with the champion by close-iter's rule, its ablation and its profile, and finalize's head-to-head. The
results come back to where the loop reads them, and each step finishes from them with `--ingested`, measuring
nothing here; the run folder then holds every file of docs/loop.md's file-by-file table. Stale results (a packed file
changed there before the run, or here since the pack) are refused, naming the file; results that finished later
than the ingested ones are kept unless forced."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pytest_dcuopt import __version__
from pytest_dcuopt.cli import close_iter, finalize, open_iter, setup_run
from pytest_dcuopt.cli.close_iter import MEASURE_SELECTION
from pytest_dcuopt.cli.harness import HarnessRun, toolchain_entry
from pytest_dcuopt.external_tools import ToolResult
from tests.context import skip_if_no_gxx
from tests.plugin.test_cli import (
    COALESCE,
    HARNESS_ARGS,
    LOOP,
    PLACEBO,
    REGISTER,
    UNROLL,
    dcuopt,
    expected_verdict,
    runs,
)

RUN_SH_TIMEOUT_S = 600
WHEEL = f"plugin/pytest_dcuopt-{__version__}-py3-none-any.whl"


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


def run_remote(root: Path, python: Path | str = sys.executable) -> subprocess.CompletedProcess[str]:
    """run.sh from an unrelated working directory with `python` and no PYTHONPATH of ours (this interpreter has
    pytest_dcuopt installed: the packed copy must win over it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_PLUGINS")}
    return subprocess.run(["bash", str(root / "run.sh")], cwd=root.parent, env={**env, "PYTHON": str(python)},
                          capture_output=True, text=True, timeout=RUN_SH_TIMEOUT_S, check=False)


def python_without_the_plugin(where: Path) -> Path:
    """A venv whose interpreter has this environment's packages (pytest, torch, ...) but not pytest_dcuopt: its
    site-packages links every entry of ours except the plugin's own (its package, dist-info and editable-install
    hooks, and any .pth that points at its checkout)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    python = where / "bin" / "python"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    ours = Path(subprocess.run([sys.executable, "-c", purelib], capture_output=True, text=True, check=True)
                .stdout.strip())
    theirs = Path(subprocess.run([python, "-c", purelib], capture_output=True, text=True, check=True).stdout.strip())
    theirs.mkdir(parents=True, exist_ok=True)
    checkout = str(Path(__file__).parents[2])
    for entry in ours.iterdir():
        name = entry.name.lower().replace("-", "_")
        if name.startswith(("pytest_dcuopt", "__editable__", "_pytest_dcuopt")):
            continue
        if entry.suffix == ".pth" and (checkout in entry.read_text(errors="replace") or "dcuopt" in name):
            continue
        (theirs / entry.name).symlink_to(entry)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_PLUGINS")}
    probe = subprocess.run([python, "-c", "import pytest_dcuopt"], cwd=where, env=env, capture_output=True,
                           text=True, timeout=120, check=False)
    assert probe.returncode == 1 and "No module named 'pytest_dcuopt'" in probe.stderr, probe.stderr
    return python


def refusal(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    capsys.readouterr()
    assert dcuopt("ingest", *argv) == 2
    return capsys.readouterr().err


def round_trip(tmp_path: Path, target: Path, python: Path, *pack_args: object, status: int = 0,
               into: Path | None = None) -> tuple[Path, Path]:
    """`dcuopt pack TARGET PACK_ARGS`, its run.sh run elsewhere with `python` (exit `status`), its results ingested
    back: the archive and the unpacked pack's folder."""
    label = "-".join(str(a).lstrip("-") for a in pack_args[:2])
    archive = tmp_path / f"{label}.pack.tar.gz"
    assert dcuopt("pack", target, *pack_args, "-o", archive) == 0
    remote = unpack(archive, tmp_path / f"elsewhere-{label}")
    done = run_remote(remote, python)
    assert done.returncode == status, done.stdout[-3000:] + done.stderr[-3000:]
    ran = json.loads((remote / "results" / "remote.json").read_text())
    assert ran["plugin_from_pack"] is True and Path(ran["harness_path"]).is_relative_to(remote / "_plugin"), ran
    assert dcuopt("ingest", target, remote / "results.tar.gz", *(["--into", into] if into else [])) == 0
    return archive, remote


def packed_names(archive: Path) -> set[str]:
    with tarfile.open(archive) as packed:
        return {name.split("/", 1)[1] for name in packed.getnames()}


def no_measurement(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"pytest ran here although every device step is packed: {args}")


@skip_if_no_gxx
def test_a_two_iteration_loop_runs_every_device_step_elsewhere_and_leaves_the_output_contract(
        tmp_path: Path, shared_build_cache: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """setup, each open-iter's profile, each close-iter's measurement (champion, ablation, profile) and finalize's
    head-to-head are measured by packs run with an interpreter that lacks pytest_dcuopt, and ingested; any pytest
    run here by a loop step fails the test."""
    project = tmp_path / "project"
    shutil.copytree(LOOP / "case", project / "rowsum")
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "conftest.py").write_text(REGISTER)
    python = python_without_the_plugin(tmp_path / "venv")
    for step in (setup_run, open_iter, close_iter, finalize):
        monkeypatch.setattr(step, "run_pytest", no_measurement)
    args = HARNESS_ARGS.format(cache=shared_build_cache)
    round_trip(tmp_path, project / "rowsum", python, "--toolchain", "cpu", "--pytest-args", args,
               into=tmp_path / "preflight")
    assert dcuopt("setup", project / "rowsum", "--iterations", 2, "--branches", 2, "--preflight-from",
                  tmp_path / "preflight", "--pytest-args", args) == 0
    (run_dir,) = runs(project / "rowsum")

    # open-iter: the best's profile comes from the device, so the budget exists before methods are chosen.
    capsys.readouterr()
    assert dcuopt("open-iter", run_dir, "--ingested") == 0
    assert f"dcuopt pack {run_dir} --profile" in capsys.readouterr().out
    iteration = run_dir / "iterv1"
    assert not (iteration / "budget.json").exists() and not (iteration / "branches").exists()
    archive, _ = round_trip(tmp_path, run_dir, python, "--profile", "--iter", 1)
    assert packed_names(archive) == {"manifest.json", "run.sh", "pytest.ini", "iterv1/ref.py", "iterv1/case_ref.py",
                                     "iterv1/dims.json", "iterv1/kernel.cpp", WHEEL}
    assert dcuopt("open-iter", run_dir, "--ingested") == 0
    first_profile = json.loads((iteration / "profile.json").read_text())
    assert first_profile["measured"] == "remote" and first_profile["verdict"].startswith(expected_verdict())
    assert first_profile["profile"]["branch"] == "baseline"
    assert json.loads((iteration / "budget.json").read_text())["verdict"] == first_profile["verdict"]

    champion_profile = first_iteration(tmp_path, run_dir, python, capsys)

    # The next iteration's best is that champion: open-iter takes its profile from the device too.
    assert dcuopt("open-iter", run_dir, "--ingested") == 0
    profile = json.loads((run_dir / "iterv2" / "profile.json").read_text())
    assert profile["measured"] == "remote" and profile["verdict"] == champion_profile["verdict"]
    assert profile["profile"] == champion_profile["profile"] and "iterv1/champion_profile.json" in profile["from"]
    assert json.loads((run_dir / "iterv2" / "budget.json").read_text())["verdict"] == profile["verdict"]
    assert not (run_dir / "iterv2" / "profile_run").exists()

    # Iteration 2: b1 is the serial first baseline, b2 wrong: no champion there, nothing promoted here.
    second = run_dir / "iterv2"
    (second / "methods.json").write_text(json.dumps({"iter": 2, "methods": [COALESCE]}))
    (second / "branches" / "b1" / "kernel.cpp").write_text((LOOP / "case" / "kernel.cpp").read_text())
    (second / "branches" / "b2" / "kernel.cpp").write_text(
        (LOOP / "case" / "kernel.cpp").read_text().replace("k < K; ++k", "k < K - 1; ++k"))
    _, remote = round_trip(tmp_path, run_dir, python, "--iter", 2, status=1)
    steps = json.loads((remote / "results" / "steps.json").read_text())
    assert steps["champion"]["champion"] is None and steps["ablation"]["status"] == "not run", steps
    assert dcuopt("close-iter", run_dir, "--ingested") == 0
    closed = json.loads((run_dir / "state.json").read_text())
    assert [(h["status"], h["champion"]) for h in closed["history"]] == [("improved", "b1"), ("no_gain", None)]
    assert Path(closed["best_file"]) == iteration / "champion" / "kernel.cpp"

    # finalize: the first baseline and the final best, timed head to head there.
    archive, _ = round_trip(tmp_path, run_dir, python, "--final")
    assert packed_names(archive) == {"manifest.json", "run.sh", "pytest.ini", "final/ref.py", "final/case_ref.py",
                                     "final/dims.json", "final/kernel.cpp", "final/branches/best/kernel.cpp", WHEEL}
    assert dcuopt("finalize", run_dir, "--ingested") == 0
    final = json.loads((run_dir / "final" / "head_to_head.json").read_text())
    assert final["measured"] == "remote" and final["correct"] is True and final["speedup"] > 1.2, final
    assert final["best_file"] == closed["best_file"]
    assert "timed head to head in one run on the device host" in (run_dir / "summary.md").read_text()
    assert_output_contract(run_dir, iterations=2, promoted={1})


def first_iteration(tmp_path: Path, run_dir: Path, python: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    """Iteration 1 packed, run elsewhere, ingested (again, refused when stale or older) and closed from the results;
    its champion profile."""
    iteration = run_dir / "iterv1"
    (iteration / "methods.json").write_text(json.dumps({"iter": 1, "methods": [UNROLL, PLACEBO]}))
    for branch in ("b1", "b2"):
        shutil.copy(LOOP / "iter1" / branch / "kernel.cpp", iteration / "branches" / branch / "kernel.cpp")
    archive, remote = round_trip(tmp_path, run_dir, python, "--iter", 1, status=1)  # b2 is wrong: its test fails
    assert packed_names(archive) == {
        "manifest.json", "run.sh", "pytest.ini", "iterv1/ref.py", "iterv1/case_ref.py", "iterv1/dims.json",
        "iterv1/methods.json", "iterv1/kernel.cpp", "iterv1/branches/b1/kernel.cpp", "iterv1/branches/b2/kernel.cpp",
        WHEEL}  # no profile run, budget, analysis or earlier results
    manifest = json.loads((remote / "manifest.json").read_text())
    assert manifest["pytest_args"][:2] == ["iterv1", "--dcuopt-run-dir=results/pytest"]
    assert manifest["pytest_args"][-2:] == ["-k", MEASURE_SELECTION] and "--dcuopt-toolchain=cpu" in manifest[
        "pytest_args"]
    assert manifest["steps"] == ["measure", "champion", "ablation", "champion_profile"]
    assert manifest["min_gain"] == close_iter.MIN_GAIN and "-k" not in manifest["champion_args"]
    shim = (remote / "iterv1" / "ref.py").read_text()
    assert str(run_dir.parent / "ref.py") not in shim and '/ "case_ref.py")' in shim  # the copy beside it
    assert (remote / "_plugin" / "pytest_dcuopt" / "toolchains" / "cuda_sync_hooks.h").is_file()  # a real file
    steps = json.loads((remote / "results" / "steps.json").read_text())
    assert steps["champion"]["champion"] == "b1", steps  # close-iter's rule, there
    assert steps["ablation"]["status"] == steps["champion_profile"]["status"] == "ran", steps

    harness_dir = iteration / "pytest"
    entry = toolchain_entry(HarnessRun(ToolResult(("ingested",), 0, "", "", 0.0), harness_dir), "iterv1", "cpu")
    assert entry["branches"]["b1"]["correct"] is True and entry["branches"]["b1"]["timing"]["median_ms"] > 0
    assert entry["branches"]["b2"]["correct"] is False
    assert entry["branches"]["b1"]["source"] == "iterv1/branches/b1/kernel.cpp"  # the packed copy, there
    assert json.loads((harness_dir / "state.json").read_text())["run_dir"].endswith("results/pytest")
    ingested = json.loads((harness_dir / "ingested.json").read_text())
    assert ingested["manifest"]["pack_id"] == manifest["pack_id"] and ingested["exit_status"] == "1"
    assert (harness_dir / "pytest.log").is_file()
    assert (iteration / "ablation" / "ablation.json").is_file()
    assert (iteration / "champion_profile" / "profile.json").is_file()

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

    # close-iter finishes the iteration from the ingested results, measuring nothing here.
    placed = {p: p.read_bytes() for p in sorted(iteration.rglob("*")) if p.is_file()
              and p.parts[len(iteration.parts)] in ("pytest", "ablation", "champion_profile")}
    assert dcuopt("close-iter", run_dir, "--ingested") == 0
    assert placed == {p: p.read_bytes() for p in placed}
    closed = json.loads((run_dir / "state.json").read_text())
    assert [(h["status"], h["champion"]) for h in closed["history"]] == [("improved", "b1")]
    attribution = json.loads((iteration / "attribution.json").read_text())
    assert attribution["ablation"]["status"] == "ran" and attribution["ablation"]["measured"] == "remote"
    # The ablation's buckets, from the remote rounds: a several-fold effect, and a placebo decided by its rounds.
    assert [m["id"] for m in closed["effective_methods"]][:1] == ["latency.ilp_unroll"], closed["effective_methods"]
    methods = {m["id"]: m for m in attribution["methods"]}
    assert set(attribution["ablation"]["methods"]) == set(methods)
    assert not any("not ablated" in (m.get("note") or "") for m in methods.values()), methods
    champion_profile = json.loads((iteration / "champion_profile.json").read_text())
    assert champion_profile["branch"] == "b1" and champion_profile["verdict"].startswith(expected_verdict())
    assert attribution["champion_profile"]["measured"] == "remote"
    assert [(r["iter"], r["stage"]) for r in closed["roofline_history"]] == [(1, "best before"), (1, "champion")]
    b1.write_text(original + "// edited after the ingest\n")
    assert "changed here since the pack" in _close_refusal(capsys, run_dir)
    b1.write_text(original)
    return dict(champion_profile)


CONTRACT_HEADING = "File by file against the seed skill's run folder"
WRITTEN = {"setup", "open-iter", "close-iter", "close-iter, promotion", "finalize", "finalize, promotion",
           "dcuopt probe", "open-iter, SQTT triage"}


def contract_rows() -> list[tuple[str, list[str]]]:
    """docs/loop.md's file-by-file table of the run folder: (when each row's files are written, their paths)."""
    text = (Path(__file__).parents[2] / "docs" / "loop.md").read_text()
    table = text.split(CONTRACT_HEADING, 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == 4 and cells[2] in WRITTEN, line
        rows.append((cells[2], re.findall(r"`([^`]+)`", cells[1])))
    return rows


def assert_output_contract(run_dir: Path, iterations: int, promoted: set[int]) -> None:
    """Every file docs/loop.md's table lists for this run is in the run folder (a probe and an SQTT triage were
    not asked for: their rows are left out)."""
    missing, checked = [], 0
    for written, paths in contract_rows():
        if written in ("dcuopt probe", "open-iter, SQTT triage") or (written == "finalize, promotion" and not promoted):
            continue
        indices = sorted(promoted) if written == "close-iter, promotion" else range(1, iterations + 1)
        for path in paths:
            for index in indices:
                for branch in ("b1", "b2"):
                    name = (path.replace("<i>", str(index)).replace("<k>", branch[1:]).replace("<ext>", "cpp")
                            .replace("<toolchain>", "cpu"))
                    checked += 1
                    if not (run_dir / name).exists():
                        missing.append(name)
    assert checked > 20 and not missing, sorted(set(missing))


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
    done = run_remote(remote)  # this interpreter has pytest_dcuopt installed: the packed one runs all the same
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = json.loads((remote / "results" / "remote.json").read_text())
    assert ran["plugin_from_pack"] is True and Path(ran["harness_path"]).is_relative_to(remote / "_plugin"), ran
    measured = tmp_path / "measured"
    claimed = remote / "results" / "remote.json"
    claimed.write_text(json.dumps({**ran, "plugin_from_pack": False, "harness_path": "/elsewhere/pytest_dcuopt"}))
    message = refusal(capsys, case, remote / "results", "--into", measured)
    assert "did not run the packed pytest_dcuopt" in message and "/elsewhere/pytest_dcuopt" in message
    claimed.write_text(json.dumps(ran))
    assert dcuopt("ingest", case, remote / "results.tar.gz", "--into", measured) == 0
    run_dir = tmp_path / "run"
    assert dcuopt("setup", case, "--run-dir", run_dir, "--preflight-from", measured, "--pytest-args", args) == 0
    state = json.loads((run_dir / "state.json").read_text())
    assert state["toolchain"] == "cpu" and state["preflight"]["ingested_from"] == str(remote / "results.tar.gz")
    assert "ptr_size" not in state  # the seed's --ptr-size is removed: shapes come from ref.py
    bench = json.loads((run_dir / "baseline" / "bench.json").read_text())
    assert bench["median_ms"] > 0 and state["best_metric_ms"] == bench["median_ms"]
    assert (run_dir / "baseline" / "preflight" / "ingested.json").is_file()
    tampered = remote / "rowsum" / "kernel.cpp"
    tampered.write_text(tampered.read_text() + "// edited there before the run\n")
    run_remote(remote)
    message = refusal(capsys, case, remote / "results.tar.gz", "--into", tmp_path / "measured2")
    assert "rowsum/kernel.cpp" in message and "differed from the pack" in message
    (case / "kernel.cpp").write_text((case / "kernel.cpp").read_text() + "// edited after the pack\n")
    capsys.readouterr()
    assert dcuopt("setup", case, "--run-dir", tmp_path / "run2", "--preflight-from", measured) == 2
    assert "changed here since the pack was made" in capsys.readouterr().err
