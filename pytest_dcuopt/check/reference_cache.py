"""The process's cache of reference outputs (`ReferenceCache`), the key they are kept under (`reference_key`), and
the calls whose outputs already matched them (`ComparedOutputs`, under `reference_outputs.case_key`)."""
from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CaseError
from ..toolchains.binding import Snapshot
from ..toolchains.exchange import ComparedOutputs, buffer_digest
from ..variant import Variant


def reference_key(variant: Variant, snapshot: Snapshot, dims: Mapping[str, Any],
                  shapes: Mapping[str, tuple[int, ...]], absolute: bool) -> tuple[Hashable, ...]:
    """Everything the reference's outputs depend on: the ref.py (path and modification time), the dims, the
    buffers' shapes and names, and the content of every input (in/out buffers' starting values and scalars
    included). The seed is covered by the inputs' content: it only draws them."""
    assert variant.reference is not None
    digest = hashlib.blake2b(digest_size=16)
    for name in sorted(snapshot.inputs):
        # the digest this process computed for an input it holds (the same function: equal keys either way)
        named = snapshot.input_digests.get(name) or buffer_digest(name, snapshot.dtypes[name], snapshot.inputs[name])
        digest.update(f"{name}={named};".encode())
    path = variant.reference.path
    outputs = tuple((name, snapshot.dtypes[name], snapshot.outputs[name].shape) for name in sorted(snapshot.outputs))
    return (str(path.resolve()), path.stat().st_mtime_ns, tuple(sorted((k, repr(v)) for k, v in dims.items())),
            tuple(sorted((k, tuple(v)) for k, v in shapes.items())), tuple(p.name for p in variant.params),
            variant.reference.shapes is not None, outputs, absolute, digest.hexdigest())


REFERENCE_CACHE_ENV = "DCUOPT_REFERENCE_CACHE_MB"  # 0 turns the cache off
DEFAULT_REFERENCE_CACHE_MB = 1024
REFERENCE_CACHE_ENTRIES = 32
# Only references that took this long are kept: cheap ones (Hypothesis' small draws) are recomputed, so a stream of
# them cannot push the costly default-dims reference out.
REFERENCE_CACHE_MIN_S = 0.002


@dataclass
class _Cached:
    outputs: dict[str, np.ndarray]
    seconds: float  # what computing it cost
    priority: float  # GreedyDual: the cache's age when last used + `seconds`
    used: int  # when last used (ties go least recently used first)

    @property
    def nbytes(self) -> int:
        return sum(array.nbytes for array in self.outputs.values())


class ReferenceCache:
    """Reference outputs by `reference_key`, within `max_entries` and `max_bytes`; a result larger than
    `max_bytes`, or computed in under `min_seconds`, is not kept.

    Eviction is cost-aware least-recently-used (GreedyDual): the entry with the lowest priority goes first, where
    priority = the cache's age at its last use + what computing it cost, and the age rises to each evicted entry's
    priority. So the costly default-dims reference, used by every branch, outlives the boundary examples between its
    uses (each branch checks ~20 of them at dims near the defaults), while an entry nobody asks for again ages out;
    among equally costly entries the least recently used goes first.
    """

    def __init__(self, max_bytes: int, max_entries: int = REFERENCE_CACHE_ENTRIES,
                 min_seconds: float = REFERENCE_CACHE_MIN_S) -> None:
        self.max_bytes, self.max_entries, self.min_seconds = max_bytes, max_entries, min_seconds
        self._entries: dict[Hashable, _Cached] = {}
        self._bytes = 0
        self._age = 0.0
        self._uses = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        # Calls whose outputs matched (toolchains/exchange.py): bit-identical outputs are not compared again.
        self.compared = ComparedOutputs()

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> dict[str, np.ndarray] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._uses += 1
            found.priority, found.used = self._age + found.seconds, self._uses
            self.hits += 1
            return dict(found.outputs)

    def put(self, key: Hashable, outputs: dict[str, np.ndarray], seconds: float) -> None:
        entry = _Cached(dict(outputs), seconds, 0.0, 0)
        if seconds < self.min_seconds or entry.nbytes > self.max_bytes:
            return
        with self._lock:
            if key in self._entries:
                return
            self._uses += 1
            entry.priority, entry.used = self._age + seconds, self._uses
            self._entries[key] = entry
            self._bytes += entry.nbytes
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                victim = min(self._entries, key=lambda k: (self._entries[k].priority, self._entries[k].used))
                dropped = self._entries.pop(victim)
                self._age = max(self._age, dropped.priority)
                self._bytes -= dropped.nbytes


_SHARED: list[ReferenceCache] = []


def shared_reference_cache() -> ReferenceCache:
    """The process's reference cache, sized by $DCUOPT_REFERENCE_CACHE_MB (default 1024; 0 turns it off)."""
    if not _SHARED:
        _SHARED.append(ReferenceCache(reference_cache_bytes(os.environ)))
    return _SHARED[0]


def reference_cache_bytes(environ: Mapping[str, str]) -> int:
    text = environ.get(REFERENCE_CACHE_ENV, "").strip()
    if not text:
        return DEFAULT_REFERENCE_CACHE_MB * 2**20
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if megabytes < 0:
        raise CaseError(f"${REFERENCE_CACHE_ENV}={text!r} is not a size: give megabytes of reference outputs to keep "
                        f"(default {DEFAULT_REFERENCE_CACHE_MB}), or 0 to compute the reference on every call")
    return int(megabytes * 2**20)

