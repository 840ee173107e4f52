"""What the pytest process holds to judge a call without taking its worker's word: the run's secret seed, the inputs
it computed itself, and the outputs it already compared.

The kernel runs inside its worker, and anything that process says can be forged by the kernel (a C++ kernel can take
the GIL through the CPython C API; a Python one can monkey-patch). So the pytest process never believes what a worker
says about a call's inputs or outputs:

* **Inputs.** The pytest process draws every checked call's inputs itself (`binding.draw_inputs` and the other pure
  functions, from seeds it chose) and keeps them (`HeldInputs`); it hands them to a worker that does not hold them
  yet, and the worker sends none back. A worker that changed its inputs (a kernel writing into the worker's copies)
  only makes its own outputs wrong for the inputs the pytest process compares against.
* **Outputs** arrive as bytes and are compared here. Where a call's outputs are bit-identical to ones already compared
  for the same case, dims and inputs, the comparison is skipped (`ComparedOutputs`), on digests this process computed
  from the bytes it received.
* **Findings** the worker reports (writes past a buffer's end, writes into a const input) can only fail a call: they
  are believed, since forging one only fails the kernel.
* **Seeds.** The inputs come from a seed drawn per run from os.urandom (`--dcuopt-run-seed` fixes it), mixed with the
  example's seed (`draw_seed`); each timing request's preparation and checked calls from another mix (`plan_seed`).
  Neither the run seed nor a way to derive it reaches a worker.
"""
from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import xxhash

INPUT_STORE_ENV = "DCUOPT_INPUT_STORE_MB"  # 0: nothing kept, inputs drawn again for every call
DEFAULT_INPUT_STORE_MB = 2048


def buffer_digest(name: str, dtype: str, array: np.ndarray) -> str:
    """A buffer's name, declared type, storage type, shape and bytes. XXH3-128: 8.3 GB/s on the H200's host against
    SHA-256's 1.25 GB/s (35 and 2 GB/s on the CPU box). Only the pytest process computes digests, from bytes it holds,
    to tell apart outputs it compared; a kernel cannot choose what is hashed, so a non-cryptographic hash is enough."""
    contiguous = np.ascontiguousarray(array)
    digest = xxhash.xxh3_128(f"{name}:{dtype}:{contiguous.dtype.str}:{contiguous.shape};".encode())
    digest.update(contiguous.reshape(-1).view(np.uint8).data)
    return digest.hexdigest()


class HeldInputs:
    """Input arrays the pytest process computed, by key (e.g. `binding.draw_key`), least recently used first out,
    within `max_bytes`; read-only (every call of every branch with that key shares them), each with its digest."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._arrays: OrderedDict[Hashable, dict[str, np.ndarray]] = OrderedDict()
        self._digests: dict[int, str] = {}  # by id() of an array held here

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for arrays in self._arrays.values() for array in arrays.values())

    def get(self, key: Hashable, compute: Any) -> dict[str, np.ndarray]:
        """The arrays kept under `key`, else `compute()` (kept when they fit)."""
        found = self._arrays.get(key)
        if found is not None:
            self._arrays.move_to_end(key)
            return dict(found)
        arrays: dict[str, np.ndarray] = compute()
        for array in arrays.values():
            array.flags.writeable = False
        if sum(array.nbytes for array in arrays.values()) <= self.max_bytes:
            self._arrays[key] = arrays
            while self.nbytes > self.max_bytes:
                _, dropped = self._arrays.popitem(last=False)
                for array in dropped.values():
                    self._digests.pop(id(array), None)
        return dict(arrays)

    def digest(self, name: str, dtype: str, array: np.ndarray) -> str:
        """`buffer_digest` of an array, computed once for an array held here."""
        held = any(array is kept for arrays in self._arrays.values() for kept in arrays.values())
        if not held:
            return buffer_digest(name, dtype, array)
        found = self._digests.get(id(array))
        if found is None:
            found = self._digests[id(array)] = buffer_digest(name, dtype, array)
        return found


class ComparedOutputs:
    """Calls whose outputs matched the reference, per case: (the inputs' key, the outputs' digests) as the pytest
    process computed them. A later call with the same key and digests has the same verdict."""

    def __init__(self) -> None:
        self._calls: dict[str, set[tuple[str, str]]] = {}

    def seen(self, case: str, inputs: str, outputs: str) -> bool:
        return (inputs, outputs) in self._calls.get(case, ())

    def add(self, case: str, inputs: str, outputs: str) -> None:
        self._calls.setdefault(case, set()).add((inputs, outputs))

    def count(self, case: str) -> int:
        return len(self._calls.get(case, ()))


def outputs_digest(outputs: Mapping[str, np.ndarray], dtypes: Mapping[str, str]) -> str:
    return hashlib.sha256("\n".join(f"{name}={buffer_digest(name, dtypes[name], outputs[name])}"
                                    for name in sorted(outputs)).encode()).hexdigest()[:32]


def input_store_bytes(environ: Mapping[str, str]) -> int:
    raw = environ.get(INPUT_STORE_ENV, "").strip()
    if not raw:
        return DEFAULT_INPUT_STORE_MB << 20
    try:
        megabytes = float(raw)
    except ValueError:
        raise ValueError(f"{INPUT_STORE_ENV}={raw!r} is not a number of MB; give e.g. 2048, or 0 to keep no inputs "
                         "(each call's are drawn again)") from None
    if megabytes < 0:
        raise ValueError(f"{INPUT_STORE_ENV}={raw!r} is negative; give a size in MB, or 0 to keep no inputs")
    return int(megabytes * (1 << 20))


_HELD: HeldInputs | None = None


def held_inputs() -> HeldInputs:
    """The pytest process's inputs (size from $DCUOPT_INPUT_STORE_MB, default 2048)."""
    global _HELD
    if _HELD is None:
        _HELD = HeldInputs(input_store_bytes(os.environ))
    return _HELD


RUN_SEED_BITS = 63


def new_run_seed() -> int:
    """A run's secret seed, from os.urandom: the inputs of one run are not those of another."""
    return int.from_bytes(os.urandom(8), "little") >> (64 - RUN_SEED_BITS)


_RUN_SEED: list[int] = []


def set_run_seed(seed: int) -> None:
    """The seed of this run (the session sets it at configure time; xdist workers get the controller's)."""
    _RUN_SEED[:] = [int(seed)]


def run_seed() -> int:
    if not _RUN_SEED:
        set_run_seed(new_run_seed())  # outside a session (a direct caller of the check API): a fresh secret
    return _RUN_SEED[0]


def draw_seed(seed: int) -> int:
    """The seed the inputs of an example with seed `seed` are drawn from in this run."""
    return _mix("draw", seed)


def plan_seed(purpose: str, dims: Mapping[str, Any], index: int = 0) -> int:
    """A seed for one timing request's preparation and checks: the same for every branch of the run at these dims
    (their references are shared), another per request (`purpose`: the branch's own timing, an A/B round; `index`)."""
    return _mix(purpose, index, *sorted((str(k), repr(v)) for k, v in dims.items()))


def _mix(*parts: Any) -> int:
    digest = hashlib.blake2b(repr((run_seed(), *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - RUN_SEED_BITS)


def checked_call_numbers(seed: int, min_samples: int, guaranteed: int = 4) -> tuple[int, ...]:
    """Which timed calls of a request come back checked (numbered from the first warm-up call): one among the first
    `guaranteed` calls (one warm-up call and three samples are always made), one among the first warm-up call plus
    `min_samples` samples."""
    rng = np.random.default_rng([seed, 0xC4EC])
    first = int(rng.integers(0, guaranteed))
    second = int(rng.integers(0, max(guaranteed, 1 + min_samples)))
    return tuple(sorted({first, second}))
