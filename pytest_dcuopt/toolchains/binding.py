"""What one kernel call is bound to, as values: the `BindSpec` the pytest process sends, the inputs drawn from it, their
rotations for timed calls, and the `Snapshot` a call hands back.

The functions that make input values (`draw_inputs`, `redrawn_inputs`, `draw_layout`, `roll_offsets`/`rolled`) are
pure and run in both processes: the worker fills its buffers with them (`cabi_binding.CAbiBinding`), and the pytest
process computes every checked call's inputs itself and never takes the worker's word for them.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..case.buffers import Domain, default_domain, numel, storage_dtype
from ..case.cabi import Param


@dataclass(frozen=True)
class BindSpec:
    """Everything needed to build the buffers of one call (sent from the pytest process)."""

    dims: Mapping[str, Any]
    seed: int
    shapes: Mapping[str, tuple[int, ...]]
    domains: Mapping[str, Domain] = field(default_factory=dict)
    # Every drawn input's starting values, as another worker drew them for the same `draw_key` (the pytest process
    # hands them over instead of letting this worker draw them again); empty: draw. Not part of the spec's identity.
    provided: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)


def draw_key(params: Sequence[Param], spec: BindSpec) -> tuple[Any, ...]:
    """Everything the starting values of a binding's inputs depend on (`draw_inputs` draws them in parameter order
    from one generator seeded with `spec.seed`): equal keys, bit-identical inputs."""
    return (tuple((p.name, p.dtype, p.pointer, p.const) for p in params), tuple(sorted(spec.dims.items())), spec.seed,
            tuple(sorted(spec.shapes.items())), tuple(sorted(spec.domains.items())))


def is_input(param: Param, spec: BindSpec) -> bool:
    """A buffer whose starting values are drawn: a const pointer, or a non-const one with a declared domain (in/out)."""
    return param.pointer and (param.const or param.name in spec.domains)


def draw_inputs(params: Sequence[Param], spec: BindSpec) -> dict[str, np.ndarray]:
    """Every input's starting values (storage type, flat, no guard), drawn in parameter order from one generator
    seeded with `spec.seed`. The worker and the pytest process call this alike: equal specs, bit-identical arrays."""
    return _inputs_from(params, spec, np.random.default_rng(spec.seed), redraw=False)


def redrawn_inputs(params: Sequence[Param], spec: BindSpec, seed: int) -> dict[str, np.ndarray]:
    """Other values for every input, drawn fast from the same domains with `seed` (`Domain.redraw_into`): the inputs
    of the checked call on new values in the same buffers."""
    return _inputs_from(params, spec, np.random.default_rng([seed, 0x1D5]), redraw=True)


def _inputs_from(params: Sequence[Param], spec: BindSpec, rng: np.random.Generator,
                 redraw: bool) -> dict[str, np.ndarray]:
    drawn: dict[str, np.ndarray] = {}
    for param in params:
        if is_input(param, spec):
            array = np.empty(numel(spec.shapes[param.name]), storage_dtype(param.dtype))
            domain = spec.domains.get(param.name, default_domain(param.dtype))
            (domain.redraw_into if redraw else domain.draw_into)(rng, array, param.dtype)
            drawn[param.name] = array
    return drawn


def draw_layout(layout: Mapping[str, tuple[str, tuple[int, ...]]], seed: int,
                domains: Mapping[str, Domain]) -> dict[str, np.ndarray]:
    """The inputs of a binding that lays out its own buffers: for each name in sorted order, its shape's elements in
    its storage type, drawn from its declared domain (the type's default without one) with one generator seeded with
    `seed`. The python toolchain's worker and the pytest process call this alike."""
    rng = np.random.default_rng([seed, 0x1A7])
    drawn: dict[str, np.ndarray] = {}
    for name in sorted(layout):
        dtype, shape = layout[name]
        array = np.empty(numel(shape), storage_dtype(dtype))
        domains.get(name, default_domain(dtype)).draw_into(rng, array, dtype)
        drawn[name] = array.reshape(shape)
    return drawn


def roll_offsets(sizes: Mapping[str, int], seed: int, call: int) -> dict[str, int]:
    """How far each input is rotated for timed call number `call` of a request seeded with `seed`: one offset per
    buffer, independent of the others (a result kept from earlier inputs cannot be rotated into the new one)."""
    rng = np.random.default_rng([seed, 0x7011, call])
    return {name: int(rng.integers(0, size)) if size > 1 else 0 for name, size in sorted(sizes.items())}


def rolled(array: np.ndarray, offset: int) -> np.ndarray:
    """`array` rotated left by `offset` elements in its flat order (a new array of its shape): the inputs a rotated
    timed call sees."""
    if not offset:
        return array
    flat = array.reshape(-1)
    return np.concatenate([flat[offset:], flat[:offset]]).reshape(array.shape)


def rolled_into(out: np.ndarray, array: np.ndarray, offset: int) -> None:
    """`out[:] = rolled(array, offset)` without a temporary: one pass over the buffer."""
    count = array.size
    out[:count - offset] = array[offset:]
    out[count - offset:count] = array[:offset]



@dataclass
class Snapshot:
    """What a call saw and produced: input values, output values, guard and input-integrity findings."""

    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    dtypes: dict[str, str]
    problems: list[str]  # found by the worker: they can only fail a call, never make one pass
    # Filled by the pytest process for the inputs it holds (check/checked_calls.py `with_inputs`); a worker sends none.
    input_digests: dict[str, str] = field(default_factory=dict)
    # A binding that lays out its own buffers (the python toolchain): each drawn input's declared type and shape, for
    # the pytest process to draw the same values itself (`draw_layout`).
    layout: dict[str, tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    # Set by the pytest process when the reply lacks an output it expects (then nothing is compared: the call fails).
    incomplete: bool = False
