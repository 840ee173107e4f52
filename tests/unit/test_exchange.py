"""What the pytest process holds to judge a call (toolchains/exchange.py): its own inputs, digests it computed,
the run's seed."""
from __future__ import annotations

import numpy as np
import pytest

from pytest_dcuopt.toolchains.exchange import HeldInputs, buffer_digest, input_store_bytes


def test_a_digest_names_content_type_and_shape() -> None:
    a = np.arange(6, dtype=np.float32)
    assert buffer_digest("x", "float32", a) == buffer_digest("x", "float32", a.copy())
    assert buffer_digest("x", "float32", a) != buffer_digest("y", "float32", a)
    assert buffer_digest("x", "float32", a) != buffer_digest("x", "float32", a.reshape(2, 3))
    b = a.copy()
    b[5] = np.nextafter(b[5], np.float32(10))  # one bit
    assert buffer_digest("x", "float32", a) != buffer_digest("x", "float32", b)


def test_held_inputs_are_computed_once_read_only_and_kept_within_their_size() -> None:
    held = HeldInputs(max_bytes=100)
    made: list[str] = []

    def compute(name: str, value: float) -> dict[str, np.ndarray]:
        made.append(name)
        return {"x": np.full(10, value, dtype=np.float32)}  # 40 bytes

    first = held.get("a", lambda: compute("a", 1.0))
    assert held.get("a", lambda: compute("a", 2.0))["x"][0] == 1.0 and made == ["a"]
    assert not first["x"].flags.writeable  # shared by every call with that key
    assert held.digest("x", "float32", first["x"]) == buffer_digest("x", "float32", first["x"])
    for key in "bcd":  # 3 x 40 bytes more: the oldest goes
        held.get(key, lambda key=key: compute(key, 3.0))
    assert held.nbytes <= 100
    held.get("a", lambda: compute("a", 4.0))
    assert made[-1] == "a"  # dropped, so computed again


def test_the_store_size_option_is_checked() -> None:
    assert input_store_bytes({}) == 2048 << 20
    assert input_store_bytes({"DCUOPT_INPUT_STORE_MB": "0"}) == 0
    with pytest.raises(ValueError, match="DCUOPT_INPUT_STORE_MB='lots' is not a number of MB"):
        input_store_bytes({"DCUOPT_INPUT_STORE_MB": "lots"})
