"""Is the kernel slower while torch.profiler (CUPTI) records, or are CUPTI's durations longer than the kernel?
Events and CUPTI around the same calls, profiler off and on, at two sizes.

    python3 tools/device/sync_probe2.py --case tests/data/cases/sync_solve --cache DIR --out probe2.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SAMPLES = 120


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    import torch

    from pytest_dcuopt.case.buffers import resolve_shapes
    from pytest_dcuopt.case.cabi import parse_solve_signature
    from pytest_dcuopt.case.ref_loader import load_reference
    from pytest_dcuopt.toolchains.binding import BindSpec
    from pytest_dcuopt.toolchains.cache import BuildCache
    from pytest_dcuopt.toolchains.cuda import CudaToolchain
    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer

    toolchain = CudaToolchain()
    runtime = toolchain.runtime()
    device_timer = TorchDeviceTimer(torch, torch.device("cuda", 0), "read")
    cyc_us = 1980.0
    out: dict[str, object] = {"samples": SAMPLES}

    def hidden_sample(launch, events):  # noqa: ANN001, ANN202
        device_timer.flush()
        device_timer.sleep(int(300 * cyc_us))  # the host queues start, call, end while this runs
        s, e = device_timer.event(), device_timer.event()
        s.record(); launch(); e.record()
        events.append((s, e))

    def lead_sync_sample(launch, events):  # noqa: ANN001, ANN202
        device_timer.flush()
        device_timer.sleep(int(300 * cyc_us))
        s, e = device_timer.event(), device_timer.event()
        s.record(); launch(); e.record()  # a synchronizing call returns after its kernel: e lands late
        events.append((s, e))
        device_timer.synchronize()

    def idle_sample(launch, events):  # noqa: ANN001, ANN202
        device_timer.flush(); device_timer.synchronize()
        s, e = device_timer.event(), device_timer.event()
        s.record(); launch(); e.record()
        events.append((s, e))
        device_timer.synchronize()

    def measure(launch, how, profiled):  # noqa: ANN001, ANN202
        events: list = []

        def body() -> None:
            for _ in range(SAMPLES):
                how(launch, events)
        if profiled:
            acts = device_timer.profile_activities(body) or []
            kern = [a.seconds * 1e6 for a in acts if "affine" in a.name or "twice" in a.name]
        else:
            body(); device_timer.synchronize(); kern = []
        ev = [s.elapsed_time(e) * 1e3 for s, e in events]
        return {"event_us": round(statistics.median(ev), 3),
                "cupti_us": round(statistics.median(kern), 3) if kern else None}

    for n in (33554432, 8388608):
        dims = {"N": n}
        reference = load_reference(args.case / "ref.py", dims)
        for branch, src in (("baseline", args.case / "kernel.cu"),
                            ("device_sync", args.case / "branches/device_sync/kernel.cu")):
            params = parse_solve_signature(src.read_text(), str(src))
            kernel = toolchain.load(toolchain.build(src, BuildCache(args.cache)), params)
            spec = BindSpec(dims, 0, resolve_shapes(params, reference.shapes, dims, str(src)), reference.inputs)
            binding = kernel.bind(spec, runtime)
            for _ in range(10):
                binding.launch()
            device_timer.synchronize()
            hows = {"hidden": hidden_sample, "idle": idle_sample} if branch == "baseline" else \
                {"lead": lead_sync_sample, "idle": idle_sample}
            for name, how in hows.items():
                for profiled in (False, True, False):
                    key = f"N={n}/{branch}/{name}/profiler={'on' if profiled else 'off'}"
                    got = measure(binding.launch, how, profiled)
                    out.setdefault(key, []).append(got)  # type: ignore[union-attr]
                    print(key, got, flush=True)
            del binding
            torch.cuda.empty_cache()
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
