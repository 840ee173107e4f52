"""A branch's worker is handed the inputs another branch's worker drew for the
same parameters, dims and seed (from the pytest process's input store) instead of drawing them again.

Every branch binds the same boundary and default dims with seed 0; at 16-20M elements each such draw costs more
than sending the values through the pipe. The hand-over must give bit for bit the inputs the worker would draw.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_dcuopt.case.buffers import Domain
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.case.model import Branch, load_case
from pytest_dcuopt.check import reference_cache
from pytest_dcuopt.check.checked_calls import checked_call
from pytest_dcuopt.check.reference_cache import ReferenceCache
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.run.devices import LOCK_DIR_ENV
from pytest_dcuopt.toolchains import exchange, make_toolchain
from pytest_dcuopt.toolchains.binding import BindSpec, draw_inputs, draw_key
from pytest_dcuopt.toolchains.cabi_binding import CAbiBinding
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.host_runtime import HostRuntime
from pytest_dcuopt.variant import BuildSettings, Variant, resolve
from tests.conftest import CASES

SIGNATURE = 'extern "C" void solve(const float* x, const double* w, float* y, int N) {}'
COUNT = 5000


def bind(provided: dict[str, np.ndarray] | None = None) -> CAbiBinding:
    params = parse_solve_signature(SIGNATURE)
    spec = BindSpec({"N": COUNT}, 0, {"x": (COUNT,), "w": (COUNT,), "y": (COUNT,)},
                    {"x": Domain("normal", 0.0, 1.0)}, provided or {})
    return CAbiBinding(params, spec, HostRuntime(), lambda *args: None)


def test_handed_over_inputs_are_used_as_they_are_and_equal_a_fresh_draw() -> None:
    drawn = bind()
    inputs = {name: drawn._host[name][:COUNT].copy() for name in ("x", "w")}
    handed = bind(inputs)
    for name in ("x", "w", "y"):  # inputs, the output's poison and every guard: bit for bit
        assert drawn._host[name].tobytes() == handed._host[name].tobytes(), name
    zeros = bind({"x": np.zeros(COUNT, np.float32), "w": np.zeros(COUNT, np.float64)})
    assert not zeros._host["x"][:COUNT].any() and not zeros._host["w"][:COUNT].any()  # taken, not drawn


@pytest.mark.parametrize("provided", [
    {"x": np.zeros(COUNT, np.float32)},  # not every input: the generator's order would shift
    {"x": np.zeros(COUNT, np.float32), "w": np.zeros(COUNT, np.float32)},  # w in the wrong storage type
    {"x": np.zeros(COUNT - 1, np.float32), "w": np.zeros(COUNT, np.float64)},  # a wrong size
], ids=["partial", "wrong-type", "wrong-size"])
def test_an_unusable_hand_over_is_ignored_and_every_input_drawn(provided: dict[str, np.ndarray]) -> None:
    assert bind(provided)._host["x"].tobytes() == bind()._host["x"].tobytes()


def test_the_draw_key_names_everything_the_draw_depends_on() -> None:
    params = parse_solve_signature(SIGNATURE)
    spec = BindSpec({"N": COUNT}, 0, {"x": (COUNT,), "w": (COUNT,), "y": (COUNT,)}, {"x": Domain("normal", 0.0, 1.0)})
    key = draw_key(params, spec)
    assert draw_key(params, replace(spec, provided={"x": np.zeros(1)})) == key  # the hand-over is no part of it
    others = [replace(spec, seed=1), replace(spec, dims={"N": 7}), replace(spec, domains={"x": Domain("normal", 0, 2)}),
              replace(spec, shapes={"x": (COUNT, 1), "w": (COUNT,), "y": (COUNT,)})]
    reordered = parse_solve_signature('extern "C" void solve(const double* w, const float* x, float* y, int N) {}')
    assert all(draw_key(params, other) != key for other in others)
    assert draw_key(reordered, spec) != key  # another order of the parameters: another draw


@pytest.fixture
def two_branches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Variant]]:
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    fresh = ReferenceCache(64 * 2**20, min_seconds=0.0)
    monkeypatch.setattr(reference_cache, "shared_reference_cache", lambda: fresh)
    monkeypatch.setattr(exchange, "_HELD", exchange.HeldInputs(64 << 20))
    case = load_case(CASES / "xdist_merge")
    found = []
    for name, source in (("baseline", case.root / "kernel.cpp"),
                         ("drops_tail", case.root / "branches" / "drops_tail" / "kernel.cpp")):
        variant = Variant(case.for_toolchain("cpu"), make_toolchain("cpu"), Branch(name, source),
                          BranchRecord(case.name, "cpu", name, str(source)))
        resolve(variant, BuildSettings(BuildCache(tmp_path / "cache"), None, (), tmp_path / "logs", 60.0))
        assert variant.worker is not None, variant.setup_error
        found.append(variant)
    yield found
    for variant in found:
        assert variant.worker is not None
        variant.worker.close()


def test_the_second_branch_is_handed_the_first_branchs_inputs(two_branches: list[Variant]) -> None:
    first, second = two_branches
    sent: list[Any] = []
    request = second.worker.request  # type: ignore[union-attr]

    def recording(op: str, timeout_s: float | None = None, **payload: Any) -> Any:
        sent.append(payload.get("spec"))
        return request(op, timeout_s, **payload)

    second.worker.request = recording  # type: ignore[union-attr,method-assign]
    checked_call(first, {"N": 1000}, 0, "test")
    checked_call(second, {"N": 1000}, 0, "test")  # drops_tail is right at N = 1000
    checked_call(second, {"N": 1000}, 0, "test")  # its worker holds these inputs already: nothing handed
    handed, again = sent
    assert set(handed.provided) == {"x"} and handed.provided["x"].size == 1000
    assert again.provided == {}
    spec = first.bind_spec({"N": 1000}, exchange.draw_seed(0))
    assert draw_inputs(first.params, spec)["x"].tobytes() == handed.provided["x"].tobytes()  # drawn here, once
