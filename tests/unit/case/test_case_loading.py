"""Loading a case folder: its branches, dims.json's checks, ref.py's declarations validated, default ranges."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_dcuopt.case.model import load_case
from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.errors import CaseError


def write_case(root: Path, dims: object, ref: str = "def reference(x, y, N):\n    y.copy_(x)\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ref.py").write_text(ref)
    (root / "dims.json").write_text(json.dumps(dims) if not isinstance(dims, str) else dims)
    (root / "kernel.cpp").write_text("")
    return root


def test_case_discovers_baseline_and_branches(tmp_path: Path) -> None:
    root = write_case(tmp_path / "c", {"N": 8})
    for name in ("b2", "b1"):
        (root / "branches" / name).mkdir(parents=True)
        (root / "branches" / name / "kernel.cpp").write_text("")
    case = load_case(root)
    assert [b.name for b in case.branches] == ["baseline", "b1", "b2"]


@pytest.mark.parametrize(("dims", "message"), [
    ("[1, 2]", "non-empty JSON object"), ("{}", "non-empty JSON object"), ('{"N": true}', "is not a number"),
])
def test_dims_json_errors(tmp_path: Path, dims: str, message: str) -> None:
    with pytest.raises(CaseError, match=message):
        load_case(write_case(tmp_path / "c", dims))


@pytest.mark.parametrize(("extra", "message"), [
    ("dim_ranges = {'M': (1, 4)}", "not in dims.json"),
    ("dim_ranges = {'N': (5, 1)}", "0 <= lo <= hi"),
    ("inputs = {'x': ('gauss', 0, 1)}", "is not a value domain"),
    ("shapes = {'x': 'N'}", "must map pointer parameters"),
    ("atol = -1", "non-negative"),
    ("flops = 3", "must be a function of the dims"),
])
def test_reference_declarations_are_validated(tmp_path: Path, extra: str, message: str) -> None:
    root = write_case(tmp_path / "c", {"N": 8}, f"def reference(x, y, N):\n    pass\n{extra}\n")
    with pytest.raises(CaseError, match=message):
        load_reference(root / "ref.py", {"N": 8})


def test_default_dim_range_is_one_to_the_default(tmp_path: Path) -> None:
    root = write_case(tmp_path / "c", {"N": 64, "alpha": 0.5})
    assert load_reference(root / "ref.py", {"N": 64, "alpha": 0.5}).dim_ranges == {"N": (1, 64)}
