"""What a worker's snapshots leave off the reply pipe (toolchains/exchange.py): inputs the pytest process holds,
and outputs bit-identical to a verified call. Pure units, then real cpu-toolchain workers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_dcuopt.bench.run import measure
from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check import verify
from pytest_dcuopt.check.verify import ReferenceCache, checked_call, exchange_for
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import LOCK_DIR_ENV
from pytest_dcuopt.timing.policy import TimingPolicy
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.binding import Snapshot
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.exchange import (
    Exchange,
    InputStore,
    buffer_digest,
    call_token,
    input_store_bytes,
    receive,
)
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES


def test_a_digest_names_content_type_and_shape() -> None:
    a = np.arange(6, dtype=np.float32)
    assert buffer_digest("x", "float32", a) == buffer_digest("x", "float32", a.copy())
    assert buffer_digest("x", "float32", a) != buffer_digest("y", "float32", a)
    assert buffer_digest("x", "float32", a) != buffer_digest("x", "float32", a.reshape(2, 3))
    b = a.copy()
    b[5] = np.nextafter(b[5], np.float32(10))  # one bit
    assert buffer_digest("x", "float32", a) != buffer_digest("x", "float32", b)
    assert call_token({"N": 6}, {"x": "1"}, {"y": "2"}) != call_token({"N": 6}, {"x": "1"}, {"y": "3"})
    assert call_token({"N": 6}, {"x": "1"}, {"y": "2"}) != call_token({"N": 7}, {"x": "1"}, {"y": "2"})


def test_the_store_puts_left_out_inputs_back_and_keeps_within_its_size() -> None:
    store = InputStore(max_bytes=100)
    x = np.arange(10, dtype=np.float32)  # 40 bytes
    digest = buffer_digest("x", "float32", x)
    sent = Snapshot({"x": x}, {}, {"x": "float32"}, [], {"x": digest})
    store.complete(sent)
    assert digest in store.known() and not store.get(digest).flags.writeable
    left_out = Snapshot({}, {}, {"x": "float32"}, [], {"x": digest}, ("x",))
    assert np.array_equal(store.complete(left_out).inputs["x"], x) and left_out.omitted_inputs == ()
    for i in range(3):  # 3 x 40 bytes more: the oldest goes
        y = np.full(10, i, dtype=np.float32)
        store.complete(Snapshot({"y": y}, {}, {"y": "float32"}, [], {"y": buffer_digest("y", "float32", y)}))
    assert digest not in store.known() and store.nbytes <= 100
    with pytest.raises(RuntimeError, match="no longer holds it: a harness bug"):
        store.complete(Snapshot({}, {}, {"x": "float32"}, [], {"x": digest}, ("x",)))
    store.complete(Snapshot({"z": np.zeros(100)}, {}, {"z": "float64"}, [], {"z": "big"}))  # over the whole size
    assert "big" not in store.known()


def test_the_store_size_option_is_checked() -> None:
    assert input_store_bytes({}) == 2048 << 20
    assert input_store_bytes({"DCUOPT_INPUT_STORE_MB": "0"}) == 0
    with pytest.raises(ValueError, match="DCUOPT_INPUT_STORE_MB='lots' is not a number of MB"):
        input_store_bytes({"DCUOPT_INPUT_STORE_MB": "lots"})


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> ReferenceCache:
    fresh = ReferenceCache(64 * 2**20, min_seconds=0.0)
    monkeypatch.setattr(verify, "shared_reference_cache", lambda: fresh)
    return fresh


def variants(case_name: str, folder: Path) -> list[Variant]:
    settings = BuildSettings(BuildCache(folder / "cache"), None, (), folder / "logs", 60.0)
    case = load_case(CASES / case_name)
    found = []
    for branch in case.sources_for((".cpp",)):
        variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch(branch.name, branch.source),
                          BranchRecord(case.name, "cpu", branch.name, str(branch.source)))
        resolve(variant, settings)
        assert variant.worker is not None, variant.setup_error
        found.append(variant)
    return found


def test_a_real_worker_leaves_out_held_inputs_and_verified_outputs_but_never_a_different_result(
        tmp_path: Path, cache: ReferenceCache, monkeypatch: pytest.MonkeyPatch) -> None:
    baseline, drops_tail = variants("xdist_merge", tmp_path)  # drops_tail is wrong when N % 4 != 0
    try:
        dims = {"N": 1001}
        spec = baseline.bind_spec(dims, 0)
        checked_call(baseline, dims, 0, "nodeid")  # compared, verified, inputs now held here
        assert baseline.worker is not None and drops_tail.worker is not None
        raw: Snapshot = baseline.worker.request("run", spec=spec, exchange=exchange_for(baseline))
        assert raw.verified and raw.outputs == {} and set(raw.omitted_inputs) == set(raw.input_digests) != set()
        assert np.array_equal(receive(raw).inputs["x"], receive(baseline.worker.request("run", spec=spec)).inputs["x"])
        # Another branch with other output bits at the same dims and inputs: sent in full and caught.
        other: Snapshot = drops_tail.worker.request("run", spec=drops_tail.bind_spec(dims, 0),
                                                    exchange=exchange_for(drops_tail))
        assert not other.verified and other.outputs and other.omitted_inputs
        with pytest.raises(AssertionError, match="values differ"):
            checked_call(drops_tail, dims, 0, "nodeid")
        # With the reference cache off, nothing counts as verified: every call is compared.
        off = ReferenceCache(0)
        monkeypatch.setattr(verify, "shared_reference_cache", lambda: off)
        assert exchange_for(baseline) == Exchange(exchange_for(baseline).known_inputs, frozenset(),
                                                  once_per_reply=False)
    finally:
        for variant in (baseline, drops_tail):
            assert variant.worker is not None
            variant.worker.close()


def test_a_timing_reply_sends_a_call_once_and_its_identical_repeat_by_token(
        tmp_path: Path, cache: ReferenceCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checked calls before the first and after the last timed call run on the same inputs: a deterministic
    kernel gives the same bits, sent and compared once per reply. With the reference cache off every call is sent."""
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    baseline, _ = variants("xdist_merge", tmp_path)
    quick = TimingPolicy(warmup_s=0.01, min_samples=3, min_time_s=0.0, max_time_s=0.05, side_figures=False)
    try:
        checks = measure(baseline, quick, 30)["checks"]
        before, new_inputs, after = (check["snapshot"] for check in checks)
        assert before.outputs and not before.verified and new_inputs.outputs and new_inputs.token != before.token
        assert after.token == before.token and after.verified and after.outputs == {}
        off = ReferenceCache(0)
        monkeypatch.setattr(verify, "shared_reference_cache", lambda: off)
        assert all(check["snapshot"].outputs for check in measure(baseline, quick, 30)["checks"])
    finally:
        assert baseline.worker is not None
        baseline.worker.close()
