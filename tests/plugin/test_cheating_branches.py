"""The adversarial corpus (tests/data/adversarial) run through the plugin: no cheat is crowned, no control is flagged.

One pytest run (a subprocess, as a user would run it) times every CPU and Python branch of the corpus; each test
below then judges one branch from that run's state.json. A cheat must be caught with a reason (a failing
correctness or benchmark test, `timed calls wrong`, a refusal) or flagged `implausible`, and be neither champion
nor said to beat its baseline. An honest control must be correct and unflagged, and beat its baseline where the gain
is many times the noise. Cheats that today's harness does not stop in every run carry an xfail naming why. It is not
strict: the inputs come from a per-run secret seed and some bounds are measured, so a cheat can be stopped in one run
and not the next; a cheat whose mark is removed must be stopped in every run.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA

CORPUS_DIR = DATA / "adversarial"
REPO = Path(__file__).resolve().parents[2]
EARLIER_STATE = ".dcuopt/runs/earlier/state.json"


def _load_corpus() -> Any:
    spec = importlib.util.spec_from_file_location("adversarial_corpus", CORPUS_DIR / "corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
CASES = sorted({entry.case for entry in corpus.CORPUS})
RUN_HERE = [entry for entry in corpus.CORPUS if entry.toolchain in ("cpu", "python")]

# Small but real: 10 Hypothesis examples, 0.2 s of sampling per branch, the default 4 A/B rounds.
OPTIONS = ("--dcuopt-toolchain=cpu,python", "--dcuopt-max-time=0.2", "--dcuopt-min-samples=3",
           "--dcuopt-warmup=0.01", "--dcuopt-examples=10", "-p", "no:cacheprovider", "-q")


def _digests(root: Path) -> dict[str, str]:
    """A digest per file the tampering branches go after before the run (ref.py, an earlier state.json)."""
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest()
            for name in ("tamper_ref/ref.py", EARLIER_STATE)}


def _cache_entry(root: Path, source: str) -> Path | None:
    """The library the build cache holds for `source` (a path relative to the run's root), found by its command."""
    for command in (root / "cache").glob("*/command.txt"):
        if command.read_text().rstrip().endswith(str(root / source)):
            return command.parent / "kernel.so"
    return None


def _cache_tampered(root: Path) -> bool:
    """Whether the cached library of tamper_tree's baseline is now the tampering branch's own library."""
    baseline = _cache_entry(root, "tamper_tree/kernel.cpp")
    branch = _cache_entry(root, "tamper_tree/branches/rewrite_build_cache/kernel.cpp")
    return baseline is not None and branch is not None and baseline.read_bytes() == branch.read_bytes()


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Runs the whole corpus once; its state.json, its output, and which trusted files changed."""
    root = tmp_path_factory.mktemp("adversarial")
    for case in CASES:
        shutil.copytree(CORPUS_DIR / case, root / case)
    # The tampering branches act only in a copy marked like this one, never in the source tree.
    (root / ".adversarial-copy").write_text("")
    (root / EARLIER_STATE).parent.mkdir(parents=True)  # an earlier run, where the harness keeps them
    earlier = {"toolchains": {"cpu": {"branches": {"baseline": {"timing": {"median_ms": 1.0}}}}}}
    (root / EARLIER_STATE).write_text(json.dumps({"cases": {"tamper_tree": earlier}}))
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    command = [sys.executable, "-m", "pytest", *CASES, f"--dcuopt-cache-dir={root / 'cache'}",
               f"--dcuopt-run-dir={root / 'run'}", *OPTIONS]
    before = _digests(root)
    started = time.monotonic()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.monotonic() - started
    for kept in Path(tempfile.gettempdir()).glob("dcuopt-adversarial-*"):  # file_replay_cache's results
        kept.unlink(missing_ok=True)
    state_path = root / "run" / "state.json"
    assert state_path.is_file(), f"no state.json; pytest said:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    after = _digests(root)
    changed = {name for name in before if before[name] != after.get(name)}
    if _cache_tampered(root):
        changed.add("cache")
    return {"state": json.loads(state_path.read_text()), "output": done.stdout, "seconds": seconds,
            "changed": changed, "root": root}


def _param(entry: Any) -> Any:
    marks = []
    if entry.open_now is not None:
        marks.append(pytest.mark.xfail(strict=False, reason=f"not stopped in every run yet: {entry.open_now}"))
    return pytest.param(entry, id=entry.name, marks=marks)


def _verdict(corpus_run: dict[str, Any], entry: Any) -> dict[str, Any]:
    found, champion = corpus.records(corpus_run["state"], entry.case, entry.toolchain)
    return corpus.judge(found.get(entry.branch), entry.branch, champion)


@pytest.mark.parametrize("entry", [_param(entry) for entry in RUN_HERE if not entry.honest])
def test_a_cheat_is_caught_and_never_crowned(corpus_run: dict[str, Any], entry: Any) -> None:
    verdict = _verdict(corpus_run, entry)
    assert verdict["ran"], f"{entry.name}: no record in state.json"
    tampered = corpus.TAMPERED.get(entry.branch)
    if tampered is not None:
        # Stopped when the file it goes after was left alone, or when the run names what happened.
        left_alone = not any(name.startswith(tampered) for name in corpus_run["changed"])
        assert left_alone or corpus.stopped(verdict), (entry.name, tampered, verdict)
        return
    assert corpus.stopped(verdict), (entry.name, verdict)


@pytest.mark.parametrize("entry", [_param(entry) for entry in RUN_HERE if entry.honest])
def test_an_honest_control_is_correct_and_not_flagged(corpus_run: dict[str, Any], entry: Any) -> None:
    verdict = _verdict(corpus_run, entry)
    assert verdict["ran"], f"{entry.name}: no record in state.json"
    assert verdict["correct"] is True and not verdict["caught"], (entry.name, verdict)
    assert not verdict["implausible"], (entry.name, verdict)
    if entry.faster:
        assert verdict["beats"], (entry.name, verdict)


def test_every_branch_folder_is_declared_once() -> None:
    """The table in corpus.py and the branch folders agree, and README.md lists every branch."""
    suffix = {"cpu": ".cpp", "python": ".py", "cuda": ".cu"}
    declared = [(entry.case, entry.branch, suffix[entry.toolchain]) for entry in corpus.CORPUS]
    assert len(declared) == len(set(declared))
    on_disk = {(path.parts[-4], path.parts[-2], path.suffix)
               for path in CORPUS_DIR.glob("*/branches/*/kernel.*")}
    assert set(declared) == on_disk
    readme = (CORPUS_DIR / "README.md").read_text()
    for entry in corpus.CORPUS:
        assert f"| {entry.case} | {entry.toolchain} | {entry.branch} |" in readme, entry.name
        assert entry.kind in corpus.KINDS and entry.source in corpus.SOURCES and entry.defence in corpus.DEFENCES
    assert sum(not entry.honest for entry in corpus.CORPUS if entry.toolchain != "cuda") >= 30
    assert sum(entry.honest for entry in corpus.CORPUS) >= 10


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("source", sorted(str(path.relative_to(CORPUS_DIR)) for path in CORPUS_DIR.rglob("*.cu")))
def test_the_cuda_twins_compile(source: str, tmp_path: Path) -> None:
    """The CUDA corpus runs on a GPU elsewhere (tools/device/adversarial_cuda.sh); here it must at least build."""
    done = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "-Xcompiler", "-fPIC", "-shared", "-o",
                           str(tmp_path / "kernel.so"), str(CORPUS_DIR / source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
