"""Comparing kernel outputs with the reference: the tolerances, the comparison itself (`compare`, chunk by chunk),
and the command that re-runs one example (`reproduce_command`)."""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..case.buffers import POISON_BITS, decode, is_float

# Per-dtype defaults (atol, rtol). float32 keeps the seed workflow's 1e-4 / 1e-3.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-8, 1e-7),
    "float32": (1e-4, 1e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
    "tf32": (1e-3, 2e-3),  # an arithmetic, not a storage type: float32 with inputs rounded to a 10-bit mantissa
}
# Relative L2 error allowed, as a multiple of rtol, on top of the elementwise test: an
# all-zero output must not pass against a small-valued reference just because atol is large.
SCALE_GUARD_FACTOR = 10.0
SCALE_GUARD_FLOOR = 1e-2


def tolerances(dtype: str, atol: float | None, rtol: float | None,
               arithmetic: str | None = None) -> tuple[float, float]:
    """(atol, rtol) for an output of `dtype`: the declared ones, else the defaults of `arithmetic` (what the case
    accepts it is computed in: ref.py `precision`; the dtype itself by default)."""
    default_atol, default_rtol = DEFAULT_TOLERANCES.get(arithmetic or dtype, DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0)))
    if not is_float(dtype):
        return (0.0, 0.0) if atol is None else (atol, rtol or 0.0)
    return (default_atol if atol is None else atol, default_rtol if rtol is None else rtol)


@dataclass(frozen=True)
class Mismatch:
    output: str
    dtype: str
    reason: str
    bad: int
    total: int
    unwritten: int  # NaN/sentinel where the reference has a value
    max_abs_err: float
    worst: tuple[dict[str, Any], ...]
    atol: float
    rtol: float
    bound: str = ""  # a per-element allowance on top of atol + rtol*|r| (a float reduction's error bound)

    def describe(self) -> str:
        extra = f" + {self.bound}" if self.bound else ""
        lines = [f"output {self.output!r} ({self.dtype}): {self.reason}; {self.bad} of {self.total} elements outside "
                 f"|k - r| <= {self.atol:g} + {self.rtol:g}*|r|{extra} ({self.unwritten} never written / NaN); "
                 f"max |k - r| = {self.max_abs_err:.6g}"]
        lines += [f"    at {w['index']}: kernel={w['kernel']!r} reference={w['reference']!r} |diff|={w['abs_err']!r}"
                  for w in self.worst]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["worst"] = list(self.worst)
        data["max_abs_err"] = _num(self.max_abs_err)  # inf -> "inf": state.json stays strict JSON
        return data


COMPARE_CHUNK = 1 << 20  # elements per pass: the float64 temporaries stay in cache (32M-element outputs compared
# in one piece made a dozen 256 MB temporaries, ~2-3 s per output on a busy host)


def compare(output: str, kernel: np.ndarray, reference: np.ndarray, dtype: str, shape: Sequence[int],
            atol: float, rtol: float, worst_count: int = 5, bound: np.ndarray | None = None,
            bound_rule: str = "") -> Mismatch | None:
    """Elementwise tolerance test plus a scale-aware guard; None when the output matches.

    `bound`: a per-element allowance added to atol + rtol*|r| (`bound_rule` says in words what it is).
    Computed in chunks of COMPARE_CHUNK elements; the result is the same as one pass over the whole output.
    """
    k_all, r_all = kernel.ravel(), reference.ravel()
    b_all = None if bound is None else np.broadcast_to(np.asarray(bound, dtype=np.float64).ravel(), r_all.shape)
    bad = unwritten = 0
    max_err = 0.0
    sum_r2 = sum_d2 = 0.0
    candidates: list[tuple[float, int]] = []
    for begin in range(0, max(k_all.size, 1), COMPARE_CHUNK):
        k = k_all[begin:begin + COMPARE_CHUNK].astype(np.float64)
        r = r_all[begin:begin + COMPARE_CHUNK].astype(np.float64, copy=False)
        if not k.size:
            break
        with np.errstate(over="ignore", invalid="ignore"):
            diff = np.subtract(k, r)
            np.abs(diff, out=diff)
            sum_r2 += float(np.dot(r, r))
            sum_d2 += float(np.dot(diff, diff))  # |k - r| squared is (k - r) squared
            allowed = np.abs(r)
            allowed *= rtol
            allowed += atol
            if b_all is not None:
                allowed += b_all[begin:begin + COMPARE_CHUNK]
            bad_mask = ~(diff <= allowed)  # NaN differences are not <=: bad unless both are NaN (below)
        largest = float(np.max(diff))
        max_err = max(max_err, largest if math.isfinite(largest) else math.inf)  # NaN or inf: inf
        if not bad_mask.any():  # the common case: no element of the chunk is outside its tolerance
            continue
        bad_mask &= ~(np.isnan(k) & np.isnan(r))
        bad += int(np.count_nonzero(bad_mask))
        unwritten += int(np.count_nonzero(~np.isfinite(k) & np.isfinite(r)))  # such an element is always bad
        where = np.flatnonzero(bad_mask)
        candidates += _worst_in_chunk(_finite_or_inf(diff[where]), where + begin, worst_count)
    if bad:
        reason = "values differ"
    else:
        guard = _scale_guard_from_sums(sum_r2, sum_d2, rtol, 0.0 if bound is None else float(np.linalg.norm(bound)))
        if guard is None:
            return None
        reason = guard
        candidates = []  # every element is "within tolerance": show the largest errors
        for begin in range(0, k_all.size, COMPARE_CHUNK):
            diff = np.abs(k_all[begin:begin + COMPARE_CHUNK].astype(np.float64)
                          - r_all[begin:begin + COMPARE_CHUNK].astype(np.float64))
            candidates += _worst_in_chunk(_finite_or_inf(diff), np.arange(begin, begin + diff.size), worst_count)
    order = [index for value, index in sorted(candidates, key=lambda c: (-c[0], c[1]))[:worst_count] if value >= 0]
    worst = tuple(
        {"index": _index(i, shape), "kernel": _num(k_all[i]), "reference": _num(r_all[i]),
         "abs_err": _num(abs(float(k_all[i]) - float(r_all[i])))}
        for i in order
    )
    return Mismatch(output, dtype, reason, bad, int(k_all.size), unwritten, max_err, worst, atol, rtol,
                    bound_rule if bound is not None else "")


def _worst_in_chunk(scores: np.ndarray, indices: np.ndarray, count: int) -> list[tuple[float, int]]:
    """The `count` highest scores (ties: the lower index first) as (score, global index); `indices` are the global
    indices of `scores`, ascending. A partition first: a full sort of a million-element chunk took longer than the
    whole tolerance test."""
    if scores.size > count:
        kth = np.partition(scores, scores.size - count)[scores.size - count]  # the count-th highest score
        keep = np.flatnonzero(scores >= kth)  # ties at kth may be more than needed: the stable sort keeps the lowest
        scores, indices = scores[keep], indices[keep]
    top = np.argsort(-scores, kind="stable")[:count]
    return [(float(scores[i]), int(indices[i])) for i in top]


def _finite_or_inf(values: np.ndarray) -> np.ndarray:
    """NaN and infinite errors rank as the largest."""
    return np.where(np.isfinite(values), values, np.inf)


def _scale_guard_from_sums(sum_r2: float, sum_d2: float, rtol: float, bound_norm: float = 0.0) -> str | None:
    """The relative L2 error against max(10 * rtol, 1e-2), from the sums of squares of the reference and of the
    error; a declared error bound (its L2 norm) is allowed on top."""
    norm = math.sqrt(sum_r2) if sum_r2 >= 0 else float("nan")
    if norm == 0.0 or not math.isfinite(norm):
        return None
    error = math.sqrt(sum_d2) if sum_d2 >= 0 else float("nan")
    rel = error / norm
    limit = max(SCALE_GUARD_FACTOR * rtol, SCALE_GUARD_FLOOR)
    if error > limit * norm + bound_norm:
        return (f"relative L2 error {rel:.3g} exceeds {limit:.3g} although every element is within atol "
                "(the outputs are tiny compared with atol: the scale-aware guard caught it)")
    return None


def never_written_under_nan(output: str, stored: np.ndarray, reference: np.ndarray, dtype: str, shape: Sequence[int],
                            atol: float, rtol: float, worst_count: int = 5) -> Mismatch | None:
    """Elements that still hold the NaN poison where the reference is NaN (`log(x)` at x < 0): `compare` takes two
    NaNs as equal, so only the bits tell that the kernel never wrote them. None for a non-float output, a
    reference without NaN, or an output written everywhere."""
    if dtype not in POISON_BITS or stored.dtype.itemsize not in (2, 4, 8):
        return None
    expected = reference.ravel()
    nan_at = np.isnan(expected)
    if not nan_at.any():
        return None
    bits = np.ascontiguousarray(stored).ravel().view(f"uint{8 * stored.dtype.itemsize}")
    found = np.flatnonzero((bits == POISON_BITS[dtype]) & nan_at)
    if not found.size:
        return None
    worst = tuple({"index": _index(int(i), shape), "kernel": "never written", "reference": "nan", "abs_err": "nan"}
                  for i in found[:worst_count])
    reason = (f"never written where the reference is NaN: {found.size} elements still hold the harness's NaN poison, "
              "which a NaN reference cannot tell from a result, so they were compared by their bits. Write every "
              "element of the output (NaN where the result is NaN)")
    return Mismatch(output, dtype, reason, int(found.size), int(stored.size), int(found.size), math.inf, worst, atol,
                    rtol)


def _index(flat: int, shape: Sequence[int]) -> Any:
    if len(shape) <= 1:
        return flat
    return list(int(v) for v in np.unravel_index(flat, tuple(shape)))


def _num(value: Any) -> Any:
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return value


def decode_all(arrays: Mapping[str, np.ndarray], dtypes: Mapping[str, str]) -> dict[str, np.ndarray]:
    return {name: decode(array, dtypes[name]) for name, array in arrays.items()}


def reproduce_command(nodeid: str, dims: Mapping[str, Any] | None = None, seed: int | None = None,
                      extra: Sequence[str] = ()) -> str:
    """A shell command that re-runs one test, with this interpreter (works without an activated venv).

    Every value is single-quoted (`extra` arguments too), so the command runs as printed whatever the node id
    holds: spaces, quotes, `$(...)`, backticks, newlines. It is meant to be run from pytest's rootdir.
    """
    parts = [_single_quoted(sys.executable), "-m", "pytest", _single_quoted(nodeid)]
    if dims is not None:
        parts.append("--dcuopt-dims=" + _single_quoted(json.dumps(dict(dims), separators=(",", ":"))))
    if seed is not None:
        parts.append(f"--dcuopt-seed={int(seed)}")
    return " ".join([*parts, *(_single_quoted(argument) for argument in extra)])


def _single_quoted(text: str) -> str:
    """`text` in POSIX single quotes (always quoted, so the command reads the same for every node id)."""
    return "'" + text.replace("'", "'\"'\"'") + "'"
