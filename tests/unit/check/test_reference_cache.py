"""The float64 reference is computed once per (case, dims, inputs) and shared by
every branch and every call of the process (check/reference_cache.py `ReferenceCache`), within a memory bound. Real
kernels in real worker processes (the cpu toolchain); the reference is counted by wrapping ref.py's function."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check import reference_cache
from pytest_dcuopt.check.checked_calls import checked_call
from pytest_dcuopt.check.reference_cache import ReferenceCache, reference_cache_bytes, reference_key
from pytest_dcuopt.check.reference_outputs import case_key, reference_outputs
from pytest_dcuopt.errors import CaseError
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.binding import Snapshot
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> BuildSettings:
    folder = tmp_path_factory.mktemp("reference-cache")
    return BuildSettings(BuildCache(folder / "cache"), None, (), folder / "logs", 60.0)


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> ReferenceCache:
    """A fresh shared cache that keeps even the tiny references of these fixture cases (min_seconds 0)."""
    fresh = ReferenceCache(64 * 2**20, min_seconds=0.0)
    monkeypatch.setattr(reference_cache, "shared_reference_cache", lambda: fresh)
    return fresh


class Counted:
    """ref.py's own reference function, counting its calls."""

    def __init__(self, function: Any) -> None:
        self.function, self.calls = function, 0

    def __call__(self, **kwargs: Any) -> None:
        self.calls += 1
        self.function(**kwargs)


def variants(case_name: str, settings: BuildSettings) -> Iterator[Variant]:
    case = load_case(CASES / case_name)
    for branch in case.sources_for((".cpp",)):
        variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch(branch.name, branch.source),
                          BranchRecord(case.name, "cpu", branch.name, str(branch.source)))
        resolve(variant, settings)
        assert variant.worker is not None, variant.setup_error
        yield variant


def counted(found: list[Variant]) -> Counted:
    """One counter shared by the variants (each loaded ref.py on its own, as the session does)."""
    assert found[0].reference is not None
    counter = Counted(found[0].reference.function)
    for variant in found:
        assert variant.reference is not None
        variant.reference.function = counter
    return counter


def test_every_branch_and_call_at_the_same_dims_and_seed_shares_one_reference(settings: BuildSettings,
                                                                             cache: ReferenceCache) -> None:
    found = list(variants("xdist_merge", settings))  # baseline and drops_tail: both right at the default N = 1000
    counter = counted(found)
    try:
        for variant in found:
            for _ in range(3):
                checked_call(variant, variant.case.dims, 0, "nodeid")
        # The first call computes the reference; the other five are bit-identical to a compared call of the case
        # (same dims, inputs and outputs, hashed here): not compared again, so not even looked up.
        assert counter.calls == 1 and cache.hits == 0 and cache.compared.count(case_key(found[0])) == 1
        checked_call(found[0], found[0].case.dims, 1, "nodeid")  # another seed: other inputs, another reference
        checked_call(found[1], {"N": 996}, 0, "nodeid")  # other dims
        assert counter.calls == 3 and len(cache) == 3
    finally:
        for variant in found:
            assert variant.worker is not None
            variant.worker.close()


def test_a_wrong_branch_is_still_caught_with_a_cached_reference(settings: BuildSettings,
                                                               cache: ReferenceCache) -> None:
    baseline, drops_tail = variants("xdist_merge", settings)
    try:
        checked_call(baseline, {"N": 1001}, 0, "nodeid")
        with pytest.raises(AssertionError, match="values differ"):
            checked_call(drops_tail, {"N": 1001}, 0, "nodeid")
        assert cache.hits == 1
    finally:
        for variant in (baseline, drops_tail):
            assert variant.worker is not None
            variant.worker.close()


def test_in_out_buffers_starting_values_are_part_of_the_key(settings: BuildSettings, cache: ReferenceCache) -> None:
    variant = next(variants("inout_axpy", settings))
    try:
        dims = {"N": 4}
        x = np.arange(4, dtype=np.float32)

        def snapshot(y_before: Sequence[float]) -> Snapshot:
            y = np.array(y_before, dtype=np.float32)
            return Snapshot({"x": x, "y": y, "N": np.asarray(4)}, {"y": y + 2 * x}, {"x": "float32", "y": "float32",
                                                                                  "N": "int32"}, [])

        shapes = {"x": (4,), "y": (4,)}
        first, same, other = (reference_key(variant, snapshot(y), dims, shapes, False)
                              for y in ([1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 5]))
        assert first == same and first != other
        assert reference_key(variant, snapshot([1, 2, 3, 4]), dims, shapes, True) != first  # |inputs| is another
        expected = reference_outputs(variant, snapshot([1, 2, 3, 5]), dims, shapes)["y"]
        assert expected.tolist() == [1, 4, 7, 11] and not expected.flags.writeable  # shared: nobody may change it
    finally:
        assert variant.worker is not None
        variant.worker.close()


def outputs(megabytes: float) -> dict[str, np.ndarray]:
    return {"y": np.zeros(int(megabytes * 2**20) // 8)}


def test_the_cache_is_bounded_by_bytes_and_entries_least_recently_used_out() -> None:
    cache = ReferenceCache(max_bytes=3 * 2**20, max_entries=3, min_seconds=0.0)
    for key in ("a", "b", "c"):
        cache.put(key, outputs(1), 1.0)
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("d", outputs(1), 1.0)
    assert cache.get("b") is None and cache.get("a") is not None and len(cache) == 3
    assert cache.nbytes <= 3 * 2**20
    cache.put("big", outputs(4), 1.0)  # larger than the whole bound: not kept, nothing evicted for it
    assert cache.get("big") is None and len(cache) == 3
    cache.put("e", outputs(2), 1.0)  # needs two entries' room
    assert len(cache) == 2 and cache.nbytes <= 3 * 2**20 and cache.get("e") is not None
    assert cache.hits == 3 and cache.misses == 2


def test_the_costly_reference_outlives_cheaper_ones_between_its_uses_yet_ages_out_unused() -> None:
    cache = ReferenceCache(max_bytes=2**30, max_entries=4, min_seconds=0.0)
    cache.put("default dims", outputs(1), 1.0)
    for branch in range(3):  # each branch: ~20 boundary examples near the defaults, then the defaults again
        for index in range(20):
            cache.put(f"boundary {branch}.{index}", outputs(1), 0.05)
        assert cache.get("default dims") is not None, branch
    for index in range(100):  # another case: the old default is never asked for again
        cache.put(f"other case {index}", outputs(1), 0.05)
    assert cache.get("default dims") is None and len(cache) == 4


def test_cheap_references_are_not_kept_so_they_cannot_push_out_a_costly_one() -> None:
    cache = ReferenceCache(max_bytes=2**30, max_entries=2)
    cache.put("default dims", outputs(1), 5.0)
    for index in range(10):
        cache.put(f"hypothesis draw {index}", outputs(0.001), 1e-5)
    assert len(cache) == 1 and cache.get("default dims") is not None


def test_the_size_comes_from_the_environment() -> None:
    assert reference_cache_bytes({}) == 1024 * 2**20
    assert reference_cache_bytes({"DCUOPT_REFERENCE_CACHE_MB": "0"}) == 0
    assert reference_cache_bytes({"DCUOPT_REFERENCE_CACHE_MB": "1.5"}) == int(1.5 * 2**20)
    with pytest.raises(CaseError, match=r"DCUOPT_REFERENCE_CACHE_MB='lots' is not a size.*or 0 to compute"):
        reference_cache_bytes({"DCUOPT_REFERENCE_CACHE_MB": "lots"})


def test_with_the_cache_off_every_call_computes_the_reference(settings: BuildSettings,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference_cache, "shared_reference_cache", lambda: ReferenceCache(0, min_seconds=0.0))
    found = list(variants("xdist_merge", settings))
    counter = counted(found)
    try:
        for variant in found:
            checked_call(variant, variant.case.dims, 0, "nodeid")
        assert counter.calls == 2
    finally:
        for variant in found:
            assert variant.worker is not None
            variant.worker.close()


def test_the_key_follows_an_edited_ref_py(settings: BuildSettings, tmp_path: Path, cache: ReferenceCache) -> None:
    variant = next(variants("xdist_merge", settings))
    try:
        assert variant.reference is not None
        snap = Snapshot({"x": np.ones(2, np.float32), "N": np.asarray(2)}, {"y": np.zeros(2, np.float32)},
                        {"x": "float32", "y": "float32", "N": "int32"}, [])
        before = reference_key(variant, snap, {"N": 2}, {"x": (2,), "y": (2,)}, False)
        copy = tmp_path / "ref.py"
        copy.write_text(variant.reference.path.read_text())
        variant.reference.path = copy
        assert reference_key(variant, snap, {"N": 2}, {"x": (2,), "y": (2,)}, False) != before
    finally:
        assert variant.worker is not None
        variant.worker.close()
