"""ref.py settings easy to get wrong: tolerances that are not finite, throughput functions and their dims."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.errors import CaseError

DIMS = {"N": 1000, "alpha": 2.0}


def reference_with(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "ref.py"
    path.write_text(f"def reference(x, y, alpha, N):\n    y.copy_(alpha * x)\n\n{extra}\n")
    return path


@pytest.mark.parametrize(("setting", "shown", "why"), [
    ('atol = float("nan")', "atol = nan", "fails every comparison"),
    ('rtol = float("inf")', "rtol = inf", "lets every value pass"),
    ('atol = -float("inf")', "atol = -inf", "fails every comparison"),
    ("atol = -1e-3", "atol = -0.001", "negative"),
    ('rtol = "1e-3"', "rtol = '1e-3'", "str"),
    ("atol = True", "atol = True", "bool"),
])
def test_a_tolerance_must_be_a_finite_non_negative_number(tmp_path: Path, setting: str, shown: str, why: str) -> None:
    with pytest.raises(CaseError) as raised:
        load_reference(reference_with(tmp_path, setting), DIMS)
    assert shown in str(raised.value) and why in str(raised.value), str(raised.value)


def test_finite_tolerances_load(tmp_path: Path) -> None:
    loaded = load_reference(reference_with(tmp_path, "atol = 0\nrtol = 1e-4"), DIMS)
    assert (loaded.atol, loaded.rtol) == (0.0, 1e-4)


def test_throughput_functions_get_only_the_dims_they_declare(tmp_path: Path) -> None:
    functions = "def flops(N):\n    return N\n\ndef bytes_moved(**dims):\n    return 8 * dims['N'] * dims['alpha']"
    loaded = load_reference(reference_with(tmp_path, functions), DIMS)
    found = loaded.throughput(DIMS, median_ms=1.0)  # 1 ms
    assert found["gflops"] == pytest.approx(1000 / 1e-3 / 1e9)
    assert found["gbps"] == pytest.approx(16000 / 1e-3 / 1e9)  # **kwargs received alpha too


def test_a_throughput_parameter_that_is_not_a_dim_is_refused_at_load(tmp_path: Path) -> None:
    expected = r"`flops\(N, M\)` takes 'M', which is not in dims.json \(dims: \['N', 'alpha'\]\)"
    with pytest.raises(CaseError, match=expected):
        load_reference(reference_with(tmp_path, "def flops(N, M):\n    return N * M"), DIMS)
