"""Where the float64 reference runs (check/reference_device.py, --dcuopt-reference-device).

The GPU path itself needs a GPU (measured on the H200: docs/performance.md); here, on real CPU-toolchain branches
in real workers, the decision and its record, and the fall-back when the reference cannot run on the chosen device
(torch's "meta" device stands in for a GPU the reference fails on: it runs the reference, then refuses to copy
its outputs back, as a device fault would).
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check import reference_cache, reference_device, reference_outputs
from pytest_dcuopt.check.checked_calls import checked_call
from pytest_dcuopt.check.reference_cache import ReferenceCache
from pytest_dcuopt.check.reference_device import GPU_REFERENCE_MIN_BYTES, Placement, placement
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import LOCK_DIR_ENV, device_lock, held_by_this_process
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES


@pytest.fixture
def variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Variant]:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    fresh = ReferenceCache(64 * 2**20, min_seconds=0.0)
    monkeypatch.setattr(reference_cache, "shared_reference_cache", lambda: fresh)
    case = load_case(CASES / "xdist_merge")
    found = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch("baseline", case.root / "kernel.cpp"),
                    BranchRecord(case.name, "cpu", "baseline", str(case.root / "kernel.cpp")))
    resolve(found, BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0))
    assert found.worker is not None, found.setup_error
    yield found
    found.worker.close()
    reference_device.set_mode("auto")


def test_auto_keeps_small_references_on_the_host_and_says_nothing(variant: Variant) -> None:
    reference_device.set_mode("auto")
    where = placement(variant, GPU_REFERENCE_MIN_BYTES - 1)
    assert where.device is None and "64 MiB" in where.why
    checked_call(variant, {"N": 100}, 0, "test")
    assert "reference_device" not in variant.record.observations


def test_a_large_reference_of_a_host_branch_stays_on_the_host_with_the_reason(variant: Variant) -> None:
    for mode in ("auto", "gpu"):
        reference_device.set_mode(mode)
        where = placement(variant, GPU_REFERENCE_MIN_BYTES)
        assert where.device is None and where.why == f"{variant.label} does not run on a GPU"


def test_cpu_mode_is_recorded(variant: Variant) -> None:
    reference_device.set_mode("cpu")
    checked_call(variant, {"N": 100}, 0, "test")
    noted = variant.record.observations["reference_device"]
    assert (noted["device"], noted["why"]) == ("cpu", "--dcuopt-reference-device=cpu")
    assert noted["bytes"] == 2 * 100 * 8 and 0 < noted["seconds"] < 5  # x and y, float64
    checked_call(variant, {"N": 7}, 0, "test")  # a smaller example after it: the larger one stays the one noted
    assert variant.record.observations["reference_device"]["bytes"] == 2 * 100 * 8


def test_a_reference_that_fails_on_its_device_runs_on_the_host_and_the_record_says_why(
        variant: Variant, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference_device, "placement", lambda found, nbytes: Placement("meta", "test"))
    checked_call(variant, {"N": 1000}, 0, "test")  # right outputs: the host computed the reference
    noted = variant.record.observations["reference_device"]
    assert noted["device"] == "cpu" and noted["why"].startswith("the reference raised ")
    assert "on meta" in noted["why"] and noted["why"].endswith("computed on the host instead")


def test_a_mode_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="'tpu' is not one of"):
        reference_device.set_mode("tpu")


def test_the_gpu_lock_is_not_taken_twice_inside_a_hold(tmp_path: Path) -> None:
    """The A/B checks its last round inside its own hold of the GPU lock: the reference must not wait on it."""
    with device_lock("gpu-test", directory=tmp_path):
        assert held_by_this_process("gpu-test", tmp_path)
    assert not held_by_this_process("gpu-test", tmp_path)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "uint8", "uint32", "bool"])
@pytest.mark.parametrize("absolute", [False, True])
def test_inputs_converted_on_a_device_equal_the_hosts_decoding(dtype: str, absolute: bool) -> None:
    """On a GPU the reference's inputs are sent as stored and converted there; torch's CPU device runs that same
    code here and must give exactly the host's arguments (in/out, pure output, scalar and read-only input)."""
    from types import SimpleNamespace

    import numpy as np
    import torch

    from pytest_dcuopt.case.buffers import Domain, storage_dtype
    from pytest_dcuopt.toolchains.binding import Snapshot

    rng = np.random.default_rng(3)
    stored = np.empty(1000, storage_dtype(dtype))
    domain = Domain("uniform", -4.0, 4.0) if dtype not in ("uint8", "uint32", "bool") else Domain("int", 0, 1)
    domain.draw_into(rng, stored, dtype)
    inout = stored[::-1].copy()
    stored.flags.writeable = False  # as in the session's input store
    snapshot = Snapshot(inputs={"x": stored, "acc": inout, "n": np.asarray(-3)},
                        outputs={"acc": inout.copy(), "y": np.zeros(1000, storage_dtype(dtype))},
                        dtypes={"x": dtype, "acc": dtype, "y": dtype, "n": "int32"}, problems=[])
    variant = SimpleNamespace(reference=SimpleNamespace(shapes={"x": "declared"}), params=[])
    names = ["x", "acc", "y", "n"]
    before = stored.copy()
    on_host = reference_outputs._reference_kwargs(variant, snapshot, names, {"x": (10, 100)}, absolute)
    on_device = reference_outputs._reference_kwargs(variant, snapshot, names, {"x": (10, 100)}, absolute, device="cpu")
    np.testing.assert_array_equal(stored, before)  # the snapshot's inputs are read, never written
    assert on_host["n"] == on_device["n"] == -3
    for name in ("x", "acc", "y"):
        assert on_host[name].dtype == on_device[name].dtype and on_host[name].shape == on_device[name].shape
        assert torch.equal(on_host[name], on_device[name]), name
    unsigned, floating = dtype in ("uint8", "uint32", "bool"), dtype.startswith(("float", "bfloat"))
    assert on_device["x"].shape == (10, 100)  # the declared shape
    assert bool((on_device["x"] >= 0).all()) == (unsigned or (absolute and floating))  # integers: as they are
