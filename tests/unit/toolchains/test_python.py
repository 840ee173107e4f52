"""The python toolchain's outputs get guard zones like the C ABI toolchains' buffers (real torch, no mocks)."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from pytest_dcuopt.case.buffers import GUARD_ELEMENTS
from pytest_dcuopt.toolchains.binding import BindSpec
from pytest_dcuopt.toolchains.python import PythonBinding, TorchRuntime
from tests.conftest import CASES

torch = pytest.importorskip("torch", reason="the python toolchain needs torch: pip install torch==2.13.0")


def kernel_module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"guard_test_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def checked_call(binding: PythonBinding) -> list[str]:
    binding.reset()
    binding.launch()
    return binding.snapshot().problems


def test_a_write_one_past_the_output_is_reported_with_buffer_and_element() -> None:
    binding = PythonBinding(kernel_module(CASES / "python_overrun" / "kernel.py"), BindSpec({"N": 64}, 0, {}),
                            TorchRuntime())
    problems = checked_call(binding)
    assert problems == ["wrote past the end of buffer 'y' (64 elements): element 64 changed"]
    assert checked_call(binding) == problems  # reset() restored the guard, so the next call is judged afresh


def test_a_correct_kernel_has_no_problems_and_writes_into_a_guarded_allocation() -> None:
    binding = PythonBinding(kernel_module(CASES / "python_scale" / "kernel.py"), BindSpec({"N": 33}, 1, {}),
                            TorchRuntime())
    assert checked_call(binding) == []
    y = binding.inputs["y"]
    assert y.shape == (33,) and y.untyped_storage().nbytes() == (33 + GUARD_ELEMENTS) * y.element_size()
    assert (binding.snapshot().outputs["y"] == (3.0 * binding.inputs["x"]).numpy()).all()
