"""The build cache heals: a broken entry is rebuilt, never loaded; staging left by a killed build is
swept; concurrent builders of one key still build once. Real g++ builds through the cpu toolchain."""
from __future__ import annotations

import fcntl
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.build import cached_entry
from pytest_dcuopt.toolchains.cache import MANIFEST, BuildCache, BuildCacheError, entry_problem

KERNEL = 'extern "C" void solve(const float* x, float* y, int n) { for (int i = 0; i < n; ++i) y[i] = 2 * x[i]; }\n'
ELF_MAGIC = b"\x7fELF"


@pytest.fixture
def cpu():
    toolchain = make_toolchain("cpu")
    if not toolchain.availability().can_run:
        pytest.skip(f"cpu toolchain unavailable: {toolchain.availability().reason}")
    return toolchain


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "kernel.cpp"
    path.write_text(KERNEL)
    return path


def build_twice_breaking(cpu, source: Path, cache: BuildCache, damage) -> tuple[object, object]:
    """Build, damage the published entry with `damage(entry)`, build again."""
    first = cpu.build(source, cache)
    damage(first.path.parent)
    return first, cpu.build(source, cache)


@pytest.mark.parametrize("damage", [
    pytest.param(lambda entry: (entry / "kernel.so").write_bytes(b""), id="zero-byte kernel.so"),
    pytest.param(lambda entry: (entry / "kernel.so").write_bytes((entry / "kernel.so").read_bytes()[:100]),
                 id="truncated kernel.so"),
    pytest.param(lambda entry: (entry / "kernel.so").unlink(), id="kernel.so missing"),
    pytest.param(lambda entry: (entry / "command.txt").unlink(), id="command.txt missing"),
    pytest.param(lambda entry: (entry / MANIFEST).unlink(), id="no manifest (a half-published or old entry)"),
])
def test_a_broken_entry_is_rebuilt_not_loaded(cpu, source: Path, tmp_path: Path, damage) -> None:
    cache = BuildCache(tmp_path / "cache")
    first, second = build_twice_breaking(cpu, source, cache, damage)
    assert not second.cached, "the broken entry was reused"
    assert second.path == first.path
    assert second.path.read_bytes()[:4] == ELF_MAGIC
    assert entry_problem(second.path.parent, "kernel.so") is None
    assert list(cache.healed) == [second.key]
    cpu.load(second, ())  # the rebuilt library loads (dlopen)
    third = cpu.build(source, cache)
    assert third.cached  # healed once, then reused


def test_a_whole_entry_is_reused(cpu, source: Path, tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache")
    first = cpu.build(source, cache)
    assert cpu.build(source, cache).cached and not first.cached and cache.healed == {}


def test_an_entry_that_is_a_file_is_replaced(tmp_path: Path) -> None:
    cache = BuildCache(tmp_path / "cache")
    cache.root.mkdir()
    cache.entry("k1").write_text("not a folder")
    path, made = cached_entry(cache, "k1", "out.bin", lambda staging: (staging / "out.bin").write_bytes(b"data"))
    assert made and path.read_bytes() == b"data"


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_old_staging_left_by_a_killed_build_is_swept_on_first_use(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    stale, fresh, discarded = root / ".aaaa.x1y2", root / ".bbbb.z3w4", root / ".cccc.broken.q1"
    for folder in (stale, fresh, discarded):
        folder.mkdir()
        (folder / "kernel.so").write_bytes(b"half")
    age(stale, 3600)
    age(discarded, 3600)
    cache = BuildCache(root)
    cached_entry(cache, "dddd", "out.bin", lambda staging: (staging / "out.bin").write_bytes(b"x"))
    assert not stale.exists() and not discarded.exists()
    assert fresh.exists(), "a staging folder younger than a few minutes may belong to a build in progress"


def test_old_staging_of_a_key_being_built_is_kept(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir()
    staging = root / ".eeee.k9"
    staging.mkdir()
    age(staging, 3600)
    with open(root / ".eeee.lock", "w") as lock:  # another process is building this key (a slow compile)
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert BuildCache(root).sweep_stale_staging() == []
        assert staging.exists()
    assert BuildCache(root).sweep_stale_staging() == [staging]


def _build_once(root: str, counter: str, barrier, results) -> None:
    barrier.wait()

    def make(staging: Path) -> None:
        with open(counter, "a") as handle:
            handle.write("built\n")
        time.sleep(0.5)  # long enough for the other processes to reach the lock
        (staging / "out.bin").write_bytes(b"payload")

    path, _ = cached_entry(BuildCache(Path(root)), "ffff", "out.bin", make)
    results.put(str(path))


def test_concurrent_builders_of_one_key_build_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(3), context.Queue()
    counter = tmp_path / "builds.txt"
    builders = [context.Process(target=_build_once, args=(str(tmp_path / "cache"), str(counter), barrier, results))
                for _ in range(3)]
    for builder in builders:
        builder.start()
    paths = {results.get(timeout=60) for _ in builders}
    for builder in builders:
        builder.join(timeout=60)
        assert builder.exitcode == 0
    assert counter.read_text().splitlines() == ["built"]
    assert len(paths) == 1 and Path(paths.pop()).read_bytes() == b"payload"


def test_a_cache_folder_that_cannot_be_created_says_which_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    cache = BuildCache(tmp_path / "afile" / "cache")  # creating the cache object writes nothing
    with pytest.raises(BuildCacheError, match=r"cannot create the build cache .*afile/cache.*--dcuopt-cache-dir"):
        cached_entry(cache, "k", "out.bin", lambda staging: None)
