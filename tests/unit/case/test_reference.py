"""ref.py declarations read by `load_reference`: float scalar ranges and the accepted precision."""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.case.reference import Reference
from pytest_dcuopt.errors import CaseError


def reference_of(folder: Path, body: str, dims: dict[str, object]) -> Reference:
    folder.mkdir(exist_ok=True)
    ref = folder / "ref.py"
    ref.write_text(body + "\ndef reference(x, y, alpha, eps, N):\n    y.copy_(alpha * x + eps)\n")
    return load_reference(ref, dims)


DIMS = {"N": 8, "alpha": 2.0, "eps": 1e-5}


def test_float_scalars_are_drawn_around_their_default_keeping_its_sign(tmp_path: Path) -> None:
    reference = reference_of(tmp_path, "", {**DIMS, "alpha": -2.0, "eps": 0.0})
    assert reference.scalar_ranges == {"alpha": (-8.0, -0.5), "eps": (-1.0, 1.0)}
    assert reference.dim_ranges == {"N": (1, 8)}


def test_a_declared_float_range_is_used_and_a_bad_one_refused(tmp_path: Path) -> None:
    reference = reference_of(tmp_path, "dim_ranges = {'alpha': (-3, 3.5)}", DIMS)
    assert reference.scalar_ranges["alpha"] == (-3.0, 3.5)
    for bad in ("(3.0, 4.0)", "(0.0, float('inf'))", "(0.0,)", "'wide'"):
        with pytest.raises(CaseError, match=r"alpha is a float scalar \(dims.json: 2.0\)"):
            reference_of(tmp_path / "sub", f"dim_ranges = {{'alpha': {bad}}}", DIMS)


def test_precision_names_an_arithmetic_coarser_outputs_are_judged_in(tmp_path: Path) -> None:
    reference = reference_of(tmp_path, "precision = 'tf32'", DIMS)
    assert reference.arithmetic("float32") == "tf32"
    assert reference.arithmetic("float16") == "float16"  # tf32 is finer
    assert reference.arithmetic("int32") == "int32"
    assert reference_of(tmp_path / "plain", "", DIMS).arithmetic("float32") == "float32"
    with pytest.raises(CaseError, match=r"precision = 'fp8' is not an arithmetic the harness knows"):
        reference_of(tmp_path / "fp8", "precision = 'fp8'", DIMS)


SETS = "inputs = {'x': ('normal', 0.0, 1.0)}\ninput_sets = {'large': {'x': ('normal', 0.0, 'N')}}\n"


def test_an_input_set_lays_its_domains_over_inputs_at_the_dims(tmp_path: Path) -> None:
    reference = reference_of(tmp_path, SETS, DIMS)
    assert reference.starting_domains(DIMS)["x"].to_json() == ["normal", 0.0, 1.0]
    assert reference.starting_domains({**DIMS, "N": 100}, "large")["x"].to_json() == ["normal", 0.0, 100.0]


@pytest.mark.parametrize(("declared", "message"), [
    ("{'default': {'x': ('normal', 0, 9)}}", r"'default' is the name of `inputs`"),
    ("{'has space': {'x': ('normal', 0, 9)}}", r"use letters, digits"),
    ("{'wide': {}}", r"give the inputs it draws otherwise"),
    ("{'wide': {'q': ('normal', 0, 9)}}", r"`input_sets\['wide'\]` names \['q'\], which is not a parameter"),
    ("{'wide': {'x': ('gauss', 0, 9)}}", r"input_sets\['wide'\]\['x'\] = .* is not a value domain"),
    ("[('wide', {})]", r"`input_sets` must be a dict"),
])
def test_bad_input_sets_are_refused_naming_the_fix(tmp_path: Path, declared: str, message: str) -> None:
    with pytest.raises(CaseError, match=message):
        reference_of(tmp_path, f"input_sets = {declared}", DIMS)


def test_a_whole_float_that_sizes_a_buffer_is_a_size_not_a_drawn_scalar(tmp_path: Path) -> None:
    reference = reference_of(tmp_path, "shapes = {'x': ('N',), 'y': ('N',)}", {**DIMS, "N": 100.0})
    assert set(reference.scalar_ranges) == {"alpha", "eps"}
