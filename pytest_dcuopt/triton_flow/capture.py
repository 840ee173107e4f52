"""Capture TorchInductor's autotuning: every tuned kernel's configs, timings, arguments and inputs.

Switched on explicitly, never by importing this module:
* `dcuopt triton capture --out DIR -- python model.py` (runs the script under `python -m
  pytest_dcuopt.triton_flow.capture DIR model.py ...`, which installs the hook first);
* `DCUOPT_TRITON_CAPTURE=DIR` for a process that calls `install_from_env()` (the plugin does, see below);
* pytest's `--dcuopt-triton-capture DIR` (the plugin sets the variable and installs the hook at configure time).

The hook wraps `CachingAutotuner.benchmark_all_configs`: before the original benchmarks the configs, the arguments
are described (shape, stride, dtype, storage offset; scalars by value) and copied to the host; after it, the timings
per config are recorded. `CachingAutotuner.coordinate_descent_tuning` is wrapped too: its trials and the config it
returns (the one Inductor then runs) are added to the kernel's capture.json. Each tuned kernel gets a folder
`DIR/<kernel>_<n>/` holding `kernel.py` (Inductor's generated module), `inputs.pt` (the arguments), `capture.json`
(the record) and `run.py` (re-runs the kernel on those inputs, timed by the harness: `python
DIR/<kernel>_<n>/run.py`). `DIR/autotune.jsonl` gets one line per kernel and `DIR/autotune.log` a readable table. A
failure while capturing is written to `DIR/capture-errors.log` and never reaches the model.

The times recorded are Inductor's autotuning benchmark (a `kernel_call` that clones the mutated arguments and
launches from Python between two events, GPU otherwise idle): they include host overhead (~90 us on an H200 for
any kernel with an in_out_ptr, 3-7 us of device time in the profiler), so they rank configs of one kernel but are
no device time: no bandwidth is derived from them (`dcuopt triton run` times the kernel on the device).

`inductor_choice()` is the one definition of "the config Inductor uses" for run, report and to-case: the
coordinate-descent winner when coordinate descent ran (recorded here, or found in the capture's Inductor log),
else the autotuning best.
"""
from __future__ import annotations

import json
import os
import runpy
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CAPTURE_ENV = "DCUOPT_TRITON_CAPTURE"
RECORDS = "autotune.jsonl"
READABLE_LOG = "autotune.log"
ERRORS = "capture-errors.log"
AUTOTUNE_TIMING = ("Inductor's autotuning benchmark (host-launched kernel_call, mutated arguments cloned, launch "
                   "overhead included): ranks configs of one kernel, not a device time")
NON_KWARGS = ("num_warps", "num_ctas", "num_stages", "maxnreg", "ir_override", "num_buffers_warp_spec",
              "num_consumer_groups", "reg_dec_producer", "reg_inc_consumer")
RUNNER = '''"""Re-run {kernel} on the inputs captured during autotuning, timed by pytest_dcuopt's device timing."""
import sys
from pathlib import Path

from pytest_dcuopt.triton_flow.replay import main

sys.exit(main([str(Path(__file__).resolve().parent), *sys.argv[1:]]))
'''


def describe_argument(name: str, value: Any) -> dict[str, Any]:
    if hasattr(value, "shape") and hasattr(value, "stride"):
        return {"name": name, "shape": list(value.shape), "stride": list(value.stride()), "dtype": str(value.dtype),
                "storage_offset": int(value.storage_offset()), "device": str(value.device),
                "bytes": int(value.numel() * value.element_size())}
    plain = isinstance(value, (int, float, bool, str)) or value is None
    return {"name": name, "value": value if plain else repr(value)}


def config_entry(launcher: Any, ms: float) -> dict[str, Any]:
    config = launcher.config
    return {"config": str(config), "kwargs": dict(config.kwargs), "num_warps": config.num_warps,
            "num_stages": config.num_stages, "ms": ms, "n_regs": getattr(launcher, "n_regs", None),
            "n_spills": getattr(launcher, "n_spills", None), "shared": getattr(launcher, "shared", None)}


class Recorder:
    """Writes one capture folder per tuned kernel under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        root.mkdir(parents=True, exist_ok=True)
        (root / RECORDS).touch()  # a capture in which nothing was autotuned is still a capture (of 0 kernels)

    def before(self, autotuner: Any, args: Sequence[Any]) -> dict[str, Any]:
        import torch

        names = list(getattr(autotuner.fn, "arg_names", [])) or [f"arg{i}" for i in range(len(args))]
        described = [describe_argument(n, v) for n, v in zip(names, args, strict=False)]
        # copy=True: a snapshot, even of a tensor already on the host (the benchmark may run in place)
        inputs = {n: v.detach().to("cpu", copy=True) for n, v in zip(names, args, strict=False)
                  if isinstance(v, torch.Tensor)}
        return {"names": names, "args": described, "inputs": inputs}

    def after(self, autotuner: Any, snapshot: dict[str, Any], timings: dict[Any, float], seconds: float) -> None:
        import torch

        kernel = autotuner.fn.__name__
        folder = self.new_folder(kernel)
        configs = [config_entry(launcher, float(ms)) for launcher, ms in timings.items()]
        best = min(configs, key=lambda c: c["ms"]) if configs else None
        mutated = list(getattr(autotuner, "mutated_arg_names", []) or [])
        footprint = sum(a.get("bytes", 0) * (2 if a["name"] in mutated else 1) for a in snapshot["args"])
        source = kernel_source_file(autotuner)
        shutil.copy2(source, folder / "kernel.py")
        torch.save(snapshot["inputs"], folder / "inputs.pt")
        record = {"kernel": kernel, "folder": folder.name, "source": str(source), "arg_names": snapshot["names"],
                  "args": snapshot["args"], "mutated_arg_names": mutated, "configs": configs, "best": best,
                  "autotune_seconds": round(seconds, 4), "footprint_bytes": footprint, "timing": AUTOTUNE_TIMING,
                  "torch": torch.__version__, "correctness": "not checked: a replay times the kernel; "
                                                            "correctness needs an independent reference (to-case)"}
        (folder / "capture.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
        (folder / "run.py").write_text(RUNNER.format(kernel=kernel))
        with (self.root / RECORDS).open("a") as handle:
            handle.write(json.dumps(record, default=str) + "\n")
        with (self.root / READABLE_LOG).open("a") as handle:
            handle.write(readable(record))
        autotuner.dcuopt_capture_folder = folder  # coordinate descent, later on this autotuner, is added there

    def coordesc(self, autotuner: Any, trials: list[dict[str, Any]], winner: Any) -> None:
        """Add coordinate descent's trials and winner to the kernel's capture.json (when it has one)."""
        folder = getattr(autotuner, "dcuopt_capture_folder", None)
        if folder is None or not (Path(folder) / "capture.json").is_file():
            return
        record = json.loads((Path(folder) / "capture.json").read_text())
        timed = [t["ms"] for t in trials if t["config"] == str(winner.config)]
        record["coordesc"] = trials
        record["coordesc_best"] = config_entry(winner, timed[-1] if timed else float("nan"))
        (Path(folder) / "capture.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
        with (self.root / READABLE_LOG).open("a") as handle:
            handle.write(f"== {record['kernel']} ({record['folder']}): coordinate descent, {len(trials)} trials -> "
                         f"{record['coordesc_best']['config']} (the config Inductor runs)\n")

    def new_folder(self, kernel: str) -> Path:
        """`<kernel>_<n>` with the first free n: several processes (xdist workers) may record into one root."""
        while True:
            self.count += 1
            folder = self.root / f"{kernel}_{self.count}"
            try:
                folder.mkdir(parents=True)
                return folder
            except FileExistsError:
                continue

    def failed(self, where: str) -> None:
        with (self.root / ERRORS).open("a") as handle:
            handle.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {where}\n{traceback.format_exc()}\n")


def kernel_source_file(autotuner: Any) -> Path:
    """The generated module that defines the autotuner's kernel.

    Inductor passes the module's path to the autotuner (`filename`); its JIT function's own `fn` is dropped
    (None) when the kernel was compiled in Inductor's subprocess pool and sent back pickled, which is the usual
    case with torch >= 2.6, so the code object is only the fallback.
    """
    candidates = [getattr(autotuner, "filename", None)]
    function = getattr(getattr(autotuner, "fn", None), "fn", None)
    candidates.append(getattr(getattr(function, "__code__", None), "co_filename", None))
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    name = getattr(getattr(autotuner, "fn", None), "__name__", "?")
    raise FileNotFoundError(f"the module of kernel {name} was not found (autotuner filename {candidates[0]!r}, "
                            f"code object {candidates[1]!r}); this torch version keeps it elsewhere: report the "
                            "torch version with capture-errors.log")


def readable(record: dict[str, Any]) -> str:
    lines = [f"== {record['kernel']} ({record['folder']}): {len(record['configs'])} configs, "
             f"autotune {record['autotune_seconds']} s"]
    lines += [f"  {a['name']:<16} shape={a['shape']} stride={a['stride']} dtype={a['dtype']}" if "shape" in a
              else f"  {a['name']:<16} = {a['value']}" for a in record["args"]]
    best = record["best"] or {}
    lines += [f"  {c['ms']:10.4f} ms  {c['config']}" + ("  BEST" if c is best or c == best else "")
              for c in record["configs"]]
    lines.append(f"  footprint {record['footprint_bytes'] / 1e6:.2f} MB of tensor arguments; times: {AUTOTUNE_TIMING} "
                 "(no bandwidth derived; `dcuopt triton run` times it on the device)")
    return "\n".join(lines) + "\n"


def parse_config(text: str) -> dict[str, Any]:
    """str(triton.Config) ("XBLOCK: 16, num_warps: 8, num_ctas: 1, num_stages: 1, maxnreg: None") as a config
    entry's kwargs / num_warps / num_stages (the Inductor log gives coordinate descent's configs only as text)."""
    kwargs: dict[str, Any] = {}
    others: dict[str, Any] = {}
    for part in text.split(", "):
        key, _, value = part.partition(": ")
        parsed: Any = int(value) if value.lstrip("-").isdigit() else (None if value == "None" else value)
        (others if key in NON_KWARGS else kwargs)[key] = parsed
    return {"config": text, "kwargs": kwargs, "num_warps": others.get("num_warps"),
            "num_stages": others.get("num_stages")}


def same_config(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two config entries (or parsed config texts) name the same launch: block sizes, warps and stages."""
    left = a if "kwargs" in a else parse_config(a["config"])
    right = b if "kwargs" in b else parse_config(b["config"])
    return all(left.get(k) == right.get(k) for k in ("kwargs", "num_warps", "num_stages"))


def log_entries(folder: Path) -> list[dict[str, Any]]:
    """The kernel entries of the capture's Inductor log (`inductor.log` beside the kernel folders), if any."""
    from .summarize import read_inductor_log

    for log in (folder / "inductor.log", folder.parent / "inductor.log"):
        if log.is_file():
            with log.open(errors="replace") as handle:
                return list(read_inductor_log(handle)["kernels"])
    return []


def inductor_choice(record: dict[str, Any], logged: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The config Inductor runs for a kernel record (capture.json, or a summary entry): the coordinate-descent
    winner when coordinate descent ran, else the autotuning best. Coordinate descent comes from the record itself
    (a capture with the coordinate-descent hook), else from the Inductor log entries of the same kernel with the
    same autotuned configs. Returns {"entry", "source", "coordesc" (the trials), "note"}."""
    trials, winner = list(record.get("coordesc") or []), record.get("coordesc_best")
    origin, note = "the capture", ""
    if not trials:
        own = [c["config"] for c in record.get("configs", [])]
        matches = [e for e in logged if e.get("kernel") == record.get("kernel") and e.get("coordesc")
                   and [c["config"] for c in e.get("configs", [])] == own]
        winners = {(e.get("coordesc_best") or {}).get("config") for e in matches}
        if len(winners) == 1:
            trials, winner, origin = list(matches[-1]["coordesc"]), matches[-1]["coordesc_best"], "the Inductor log"
        elif matches:
            note = (f"the Inductor log has {len(matches)} coordinate-descent runs of {record.get('kernel')} with "
                    "different winners; which one this capture's kernel ran is unknown")
    best = record.get("best")
    if trials and winner:
        entry = {**parse_config(winner["config"]), **{k: v for k, v in winner.items() if k != "config"}}
        entry["config"] = winner["config"]
        return {"entry": entry, "source": f"coordinate descent ({len(trials)} trials, from {origin})",
                "coordesc": trials, "note": note}
    if trials:
        return {"entry": best, "source": f"the autotuning best, kept by coordinate descent ({len(trials)} trials, "
                                         f"from {origin})", "coordesc": trials, "note": note}
    return {"entry": best, "source": "the autotuning best (no coordinate descent recorded)", "coordesc": [],
            "note": note}


def install(root: Path) -> Callable[[], None]:
    """Wrap CachingAutotuner.benchmark_all_configs to record into `root`; returns the function that undoes it."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    original: Any = CachingAutotuner.benchmark_all_configs
    if getattr(original, "dcuopt_capture", None) is not None:
        return lambda: None
    recorder = Recorder(root.resolve())

    def benchmark_all_configs(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            snapshot = recorder.before(self, args)
        except Exception:
            recorder.failed(f"describing the arguments of {getattr(self.fn, '__name__', '?')}")
            snapshot = None
        start = time.perf_counter()
        timings = original(self, *args, **kwargs)
        if snapshot is not None:
            try:
                recorder.after(self, snapshot, timings, time.perf_counter() - start)
            except Exception:
                recorder.failed(f"recording {getattr(self.fn, '__name__', '?')}")
        return timings

    benchmark_all_configs.dcuopt_capture = recorder  # type: ignore[attr-defined]
    tuning: Any = getattr(CachingAutotuner, "coordinate_descent_tuning", None)

    def coordinate_descent_tuning(self: Any, launcher: Any, *args: Any, **kwargs: Any) -> Any:
        trials: list[dict[str, Any]] = []
        own = self.__dict__.get("bench")  # normally none: bench is the class's method
        bench = self.bench

        def recorded_bench(trial: Any, *bench_args: Any, **bench_kwargs: Any) -> Any:
            ms = bench(trial, *bench_args, **bench_kwargs)
            try:
                trials.append(config_entry(trial, float(ms)))
            except Exception:
                recorder.failed(f"recording a coordinate-descent trial of {getattr(self.fn, '__name__', '?')}")
            return ms

        self.bench = recorded_bench
        try:
            winner = tuning(self, launcher, *args, **kwargs)
        finally:
            if own is None:
                del self.bench
            else:
                self.bench = own
        if winner is not launcher or trials:
            try:
                recorder.coordesc(self, trials, winner)
            except Exception:
                recorder.failed(f"recording coordinate descent of {getattr(self.fn, '__name__', '?')}")
        return winner

    def uninstall() -> None:
        CachingAutotuner.benchmark_all_configs = original  # type: ignore[method-assign]
        if tuning is not None:
            CachingAutotuner.coordinate_descent_tuning = tuning  # type: ignore[method-assign]

    CachingAutotuner.benchmark_all_configs = benchmark_all_configs  # type: ignore[method-assign]
    if tuning is not None:
        CachingAutotuner.coordinate_descent_tuning = coordinate_descent_tuning  # type: ignore[method-assign]
    return uninstall


def install_from_env() -> Callable[[], None] | None:
    folder = os.environ.get(CAPTURE_ENV, "").strip()
    return install(Path(folder)) if folder else None


def main(argv: Sequence[str]) -> int:
    """`python -m pytest_dcuopt.triton_flow.capture DIR script.py [args...]`: run the script with capture on."""
    if len(argv) < 2:
        print("usage: python -m pytest_dcuopt.triton_flow.capture DIR script.py [args...]", file=sys.stderr)
        return 2
    root, script = Path(argv[0]), argv[1]
    os.environ[CAPTURE_ENV] = str(root.resolve())  # child processes (compile workers) see it too
    install(root)
    sys.argv = [script, *argv[2:]]
    sys.path.insert(0, str(Path(script).resolve().parent))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
