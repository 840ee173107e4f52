"""Figures a machine cannot reach: a branch whose median implies more bandwidth or FLOP/s than the machine has is
`implausible` (its record says why); it is never champion and never beats noise unless the user allows it
(--dcuopt-allow-implausible).

The ceilings, once per pytest process (`host_ceilings`, `device_ceilings`):
- host kernels: the copy bandwidth this process measures (numpy copies over one thread per core, 4x the last-level
  cache, read + written bytes counted, as `bytes_moved` counts them) and the FLOP/s of a float32 matrix product
  (numpy's BLAS, every core);
- GPU kernels: the device's declared peaks (profile/data/peaks.json: the theoretical bandwidth, the largest FLOP/s
  of any precision), found by the device name or arch the record holds.
A figure is implausible above `MARGIN` x the ceiling (measured ceilings sit below the true peak: a busy machine, one
BLAS). Where the working set fits in the last-level cache and samples are hot, bandwidth is not judged: caches are
faster than memory. An optional speedup bound (--dcuopt-max-speedup, off by default) flags larger speedups too.
"""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MARGIN = 4.0


@dataclass(frozen=True)
class Ceilings:
    bandwidth_bps: float | None
    flops: float | None
    cache_bytes: int | None  # the last-level cache: a working set under it is not judged on bandwidth when hot
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"bandwidth_gbps": _g(self.bandwidth_bps), "gflops": _g(self.flops), "cache_bytes": self.cache_bytes,
                "source": self.source, "margin": MARGIN}


def _g(value: float | None) -> float | None:
    return round(value / 1e9, 3) if value else None


@lru_cache(maxsize=1)
def host_ceilings() -> Ceilings:
    """Measure this machine's copy bandwidth and float32 matmul FLOP/s (best of a few tries, about 0.5 s)."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from ..timing.host import last_level_cache_bytes

    cache = last_level_cache_bytes()
    threads = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    count = max(1 << 20, 2 * cache // 4 // threads)  # float32 elements per thread: 2x the cache in all
    sources = [np.ones(count, dtype=np.float32) for _ in range(threads)]
    targets = [np.empty_like(source) for source in sources]
    best = float("inf")
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for _ in range(3):
            began = time.perf_counter()
            list(pool.map(lambda pair: np.copyto(pair[1], pair[0]), zip(sources, targets, strict=True)))
            best = min(best, time.perf_counter() - began)
    bandwidth = 2 * 4 * count * threads / best
    size = 768
    a = np.ones((size, size), dtype=np.float32)
    fastest = float("inf")
    for _ in range(4):
        began = time.perf_counter()
        a @ a
        fastest = min(fastest, time.perf_counter() - began)
    return Ceilings(bandwidth, 2 * size ** 3 / fastest, cache,
                    f"measured here: numpy copy over {threads} thread(s), float32 matmul {size}^3")


def device_ceilings(device: Mapping[str, Any]) -> Ceilings | None:
    """The declared peaks of the GPU the record names; None when peaks.json has no entry for it."""
    from ..profile.roofline import find_device

    entry, found = find_device(device.get("arch"), device.get("device") or device.get("name"))
    if entry is None:
        return None
    bandwidth = entry.get("bandwidth_gbs", {}).get("theoretical")
    flops = max((v for v in entry.get("flops_tflops", {}).values() if v), default=None)
    return Ceilings(bandwidth * 1e9 if bandwidth else None, flops * 1e12 if flops else None,
                    entry.get("l2_bytes") or device.get("l2_bytes"), f"declared: {found}")


def implausible(throughput: Mapping[str, float], ceilings: Ceilings, working_set: float | None,
                hot: bool) -> str | None:
    """Why the figures exceed what the machine can do, or None."""
    gbps, gflops = throughput.get("gbps"), throughput.get("gflops")
    fits = hot and ceilings.cache_bytes is not None and working_set is not None and working_set <= ceilings.cache_bytes
    if gbps and ceilings.bandwidth_bps and not fits and gbps * 1e9 > MARGIN * ceilings.bandwidth_bps:
        return (f"{gbps:.4g} GB/s implied by its median and bytes_moved, over {MARGIN:g}x the "
                f"{ceilings.bandwidth_bps / 1e9:.4g} GB/s this machine copies ({ceilings.source})")
    if gflops and ceilings.flops and gflops * 1e9 > MARGIN * ceilings.flops:
        return (f"{gflops:.4g} GFLOP/s implied by its median and flops, over {MARGIN:g}x the "
                f"{ceilings.flops / 1e9:.4g} GFLOP/s peak ({ceilings.source})")
    return None


def over_speedup(speedup: float | None, bound: float | None) -> str | None:
    if bound is None or speedup is None or speedup <= bound:
        return None
    return f"a speedup of {speedup:.3g}x over the baseline, above --dcuopt-max-speedup {bound:g}"


def _reason(throughput: Mapping[str, float], timing: Mapping[str, Any] | None, device: Mapping[str, Any],
            max_speedup: float | None, host: Ceilings | None) -> str | None:
    if not timing:
        return None
    # A GPU's declared peaks where peaks.json knows it (by name: also a Python branch's torch on a GPU); a GPU it
    # does not know is not judged; a host kernel gets the measured ceilings.
    ceilings = device_ceilings(device) or (None if device.get("api") else (host or host_ceilings()))
    found = None
    if ceilings is not None:
        median_s = float(timing.get("median_ms") or 0.0) / 1e3
        working_set = throughput.get("gbps", 0.0) * 1e9 * median_s if throughput.get("gbps") else None
        found = implausible(throughput, ceilings, working_set, timing.get("mode") == "hot")
    interleaved = timing.get("interleaved") or {}
    return found or over_speedup(interleaved.get("speedup"), max_speedup)


def flag_records(records: Any, allowed: bool = False, max_speedup: float | None = None,
                 host: Ceilings | None = None) -> None:
    """Set `implausible` on every record whose figures (at its default dims or any benchmark size) exceed what the
    machine can do: {"reason", "allowed"}; an allowed one may still rank (--dcuopt-allow-implausible). `host`: the
    host's ceilings (None: measured here, once per process)."""
    for record in records:
        reasons = []
        main = _reason(record.throughput, record.timing, record.device, max_speedup, host)
        if main:
            reasons.append(main)
        for size, entry in sorted(record.sizes.items()):
            found = _reason(entry.get("throughput") or {}, entry.get("timing"), entry.get("device") or {},
                            max_speedup, host)
            if found:
                reasons.append(f"at size {size}: {found}")
        if reasons:
            record.implausible = {"reason": "; ".join(reasons), "allowed": allowed}
