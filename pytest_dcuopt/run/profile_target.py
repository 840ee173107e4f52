"""The program a profiler runs: `python -m pytest_dcuopt.run.profile_target <request file>`.

The request file is a pickle written by the `profile` observer (observe/profile.py): the toolchain name,
arch and flags, the built `Artifact`, the C ABI `params`, a `BindSpec` (the case's dims, fresh inputs), the
profiled-range kind and, optionally, the size of a copy that measures the memory ceiling. The target loads the
artifact through the toolchain registry, binds the buffers, makes ONE warm-up call, restores the inputs,
flushes the cache where the runtime can (outside the range), then makes exactly ONE profiled `solve` call
inside the range:

* `perf-fifo`: `perf stat -D -1 --control fifo:ctl,ack` counters are enabled just around the call;
* `profiler-api`: cudaProfilerStart/Stop (hipProfilerStart/Stop on ROCm) through torch, for
  `ncu --profile-from-start off`;
* `none`: no range (hipprof, rocprof record the whole process); the observer keeps the rows whose kernel
  names match the artifact and, of those, the profiled call's half (the warm-up call made the other half).

It writes `<request file>.result.json`: the calls made, the range, the wall time of the range and the device.
"""
from __future__ import annotations

import json
import os
import pickle
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

RANGES: dict[str, Callable[[dict[str, Any], Any], Any]] = {}


def _range(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        RANGES[name] = factory
        return factory
    return register


@_range("none")
@contextmanager
def _no_range(request: dict[str, Any], runtime: Any) -> Iterator[None]:
    yield


@_range("perf-fifo")
@contextmanager
def _perf_range(request: dict[str, Any], runtime: Any) -> Iterator[None]:
    control = os.open(request["perf_ctl"], os.O_WRONLY)
    ack = os.open(request["perf_ack"], os.O_RDONLY)

    def say(command: bytes) -> None:
        os.write(control, command + b"\n")
        os.read(ack, 16)  # perf answers "ack" once the counters are switched

    try:
        say(b"enable")
        yield
    finally:
        say(b"disable")
        os.close(control)
        os.close(ack)


@_range("profiler-api")
@contextmanager
def _profiler_api_range(request: dict[str, Any], runtime: Any) -> Iterator[None]:
    import torch

    torch.cuda.profiler.start()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        torch.cuda.profiler.stop()  # type: ignore[no-untyped-call]


def flush_caches(runtime: Any) -> str:
    """The device runtime's own L2 flush (the timer's), outside the range; what was done, for the record."""
    device_timer = getattr(runtime, "device_timer", None)
    if callable(device_timer):
        device = device_timer()
        device.flush()
        runtime.synchronize()
        return f"L2 flush: {device.flush_info()['how']}"
    return "no flush (host runtime: the caches hold what the warm-up call left)"


def measure_copy(runtime: Any, nbytes: int) -> dict[str, Any] | None:
    """Bytes read + written per second of one large copy: the memory ceiling measured on this machine."""
    if nbytes <= 0:
        return None
    torch = getattr(runtime, "torch", None)
    if torch is not None:
        source = torch.empty(nbytes // 4, dtype=torch.float32, device=runtime.device)
        target = torch.empty_like(source)
        target.copy_(source)
        runtime.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        best = float("inf")
        for _ in range(5):
            start.record()
            target.copy_(source)
            end.record()
            end.synchronize()
            best = min(best, start.elapsed_time(end) * 1e-3)
        how = f"device copy of {nbytes} bytes (torch, cuda/hip events, best of 5)"
    else:
        best, how = _host_copy(nbytes)
    return {"bytes_per_s": 2 * nbytes / best, "seconds": best, "how": how}


def _host_copy(nbytes: int) -> tuple[float, str]:
    """A STREAM-like copy on every core (numpy releases the GIL while copying), best of 5."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    threads = os.cpu_count() or 1
    source, target = np.ones(nbytes // 8, dtype=np.float64), np.empty(nbytes // 8, dtype=np.float64)
    parts = [slice(i * source.size // threads, (i + 1) * source.size // threads) for i in range(threads)]
    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(5):
            began = time.perf_counter()
            list(pool.map(lambda part: np.copyto(target[part], source[part]), parts))
            best = min(best, time.perf_counter() - began)
    return best, f"host copy of {nbytes} bytes (numpy.copyto on {threads} threads, best of 5): a STREAM-like copy"


def run(request: dict[str, Any]) -> dict[str, Any]:
    from ..toolchains import make_toolchain

    toolchain = make_toolchain(request["toolchain"], request.get("arch"), request.get("flags", ()))
    runtime = toolchain.runtime()
    copy = measure_copy(runtime, int(request.get("measure_copy_bytes", 0)))  # before anything is profiled
    kernel = toolchain.load(request["artifact"], request["params"])
    binding = kernel.bind(request["spec"], runtime)
    binding.reset()
    binding.launch()  # warm-up: code loaded, pages touched, caches as a second call finds them
    runtime.synchronize()
    binding.reset()  # fresh inputs and poisoned outputs again
    flushed = flush_caches(runtime)
    with RANGES[request["range"]](request, runtime):
        began = time.perf_counter()
        binding.launch()
        runtime.synchronize()
        wall = time.perf_counter() - began
    return {"calls": 2, "warmup_calls": 1, "profiled_calls": 1, "range": request["range"], "range_wall_s": wall,
            "flush": flushed, "device": runtime.describe(), "copy": copy, "pid": os.getpid()}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m pytest_dcuopt.run.profile_target <request file>", file=sys.stderr)
        return 2
    path = Path(argv[1])
    with path.open("rb") as handle:
        request = pickle.load(handle)  # written by observe/profile.py for this run only
    if request.get("range") not in RANGES:
        print(f"unknown profiled range {request.get('range')!r}; known: {sorted(RANGES)}", file=sys.stderr)
        return 2
    result = run(request)
    Path(f"{path}.result.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
