"""The isolated worker process that loads and runs one kernel.

Started by `isolation.IsolatedKernel` as `python -m pytest_dcuopt.run.worker <response-fd>`.
Requests arrive on stdin, responses leave on a dedicated pipe; the kernel's own stdout is
redirected to stderr (a log file) so that a printf in a kernel cannot corrupt the protocol.
A segfault or abort kills only this process; faulthandler prints where it happened.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import struct
import sys
import time
import traceback
from dataclasses import replace
from typing import Any, BinaryIO, Callable

_HEADER = struct.Struct("<Q")


def read_frame(stream: BinaryIO) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = stream.read(size)
    return pickle.loads(payload)


def write_frame(stream: BinaryIO, message: Any) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


class WorkerState:
    def __init__(self) -> None:
        self.kernel: Any = None
        self.runtime: Any = None
        self.bindings: dict[Any, Any] = {}

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        from ..toolchains import make_toolchain

        toolchain = make_toolchain(request["toolchain"], request.get("arch"), request.get("flags", ()))
        self.runtime = toolchain.runtime()
        self.kernel = toolchain.load(request["artifact"], request["params"])
        return {"pid": os.getpid(), "device": self.runtime.describe()}

    def binding(self, spec: Any) -> Any:
        key = (tuple(sorted(spec.dims.items())), spec.seed)
        if key not in self.bindings:
            self.bindings.clear()  # keep one set of buffers alive; sizes may be large
            self.bindings[key] = self.kernel.bind(spec, self.runtime)
        return self.bindings[key]

    def run(self, request: dict[str, Any]) -> Any:
        binding = self.binding(request["spec"])
        binding.reset()
        binding.launch()
        return binding.snapshot()

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        binding = self.binding(request["spec"])
        binding.reset()
        started = time.perf_counter()
        # Device runtimes rotate over extra input sets when one set would sit in the cache.
        spec, working_set = request["spec"], binding.nbytes
        others = [self.kernel.bind(replace(spec, seed=spec.seed + index), self.runtime)
                  for index in range(1, self.runtime.rotation_sets(working_set))]
        samples = self.runtime.measure_sets([binding.launch, *(other.launch for other in others)], request["policy"],
                                            working_set)
        del others
        return {"samples": samples, "device": self.runtime.describe(), "measure_wall_s": time.perf_counter() - started}


def main() -> int:
    response_fd = int(sys.argv[1])
    faulthandler.enable(file=sys.stderr, all_threads=True)
    os.dup2(2, 1)  # kernel printf -> the log, never into the protocol
    requests = sys.stdin.buffer
    responses = os.fdopen(response_fd, "wb")
    state = WorkerState()
    handlers: dict[str, Callable[[dict[str, Any]], Any]] = {"load": state.load, "run": state.run, "time": state.time}
    while True:
        request = read_frame(requests)
        if request is None:
            return 0
        try:
            write_frame(responses, {"ok": True, "result": handlers[request["op"]](request)})
        except Exception as exc:  # report, keep serving
            write_frame(responses, {"ok": False, "error": f"{type(exc).__name__}: {exc}",
                                    "traceback": traceback.format_exc()})
            if getattr(exc, "fatal", False):  # e.g. a sticky GPU fault: this process's context is gone
                return 3


if __name__ == "__main__":
    sys.exit(main())
