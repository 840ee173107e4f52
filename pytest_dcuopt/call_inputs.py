"""The inputs of a call as the pytest process draws them, and the spec that hands them to the branch's worker.

The check and the benchmark stage send the same inputs (every branch at these dims and seed shares them) and judge
the worker's outputs against them: the worker's own copies of its inputs are never believed.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from .toolchains.binding import BindSpec, draw_inputs, draw_key
from .toolchains.exchange import held_inputs
from .variant import Variant


def handed(variant: Variant, spec: BindSpec, inputs: Mapping[str, np.ndarray]) -> BindSpec:
    """`spec` with `inputs` to hand to the worker, unless its buffers at these dims were last given these inputs
    (`variant.bound`: the last draw key asked per dims). Only saves work: the worker's buffers are never trusted."""
    key = draw_key(variant.params, spec) if variant.params else None
    if key is None or key in variant.bound:
        return spec
    variant.bound.difference_update({bound for bound in variant.bound if bound[1] == key[1]})
    variant.bound.add(key)
    return replace(spec, provided=inputs)


def spec_inputs(variant: Variant, spec: BindSpec) -> dict[str, np.ndarray]:
    """The starting values of every input of a call of `spec`, as this process draws them (kept: every branch at
    these dims and seed shares them); {} for a toolchain without a C signature (its binding makes its own)."""
    if not variant.params:
        return {}
    return held_inputs().get(draw_key(variant.params, spec), lambda: draw_inputs(variant.params, spec))

