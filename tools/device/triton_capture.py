"""The model and helpers of tools/device/triton_capture.sh (the end-to-end run of `dcuopt triton` on one GPU).

    python3 tools/device/triton_capture.py              compile and run the model once (what `capture` runs)
    python3 tools/device/triton_capture.py pick CAPDIR [PROFILE.json]
                                                        print "<kernel> <capture folder>" of the hottest tuned kernel
    python3 tools/device/triton_capture.py shrink W OUT copy the small outputs of the run in W to OUT

`build()` is the model file contract of `dcuopt triton report --fallback` (model, inputs, the region to run
eagerly). The model is a LayerNorm -> Linear -> GELU -> Linear -> residual -> softmax block in fp16, the same
shape of work as the recorded H200 material in tests/data/triton_inductor_h200/, at half the width so that two
max-autotune compiles fit the script's time budget.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

WIDTH = 512
ROWS = 2048
REGION = "norm"  # the LayerNorm: a reduction Inductor fuses into generated Triton
SMALL_OUTPUTS = ("env.json", "autotune_summary.json", "autotune_summary.md", "isa_scan.json", "meta.json",
                 "run.json", "fallback.json", "report.md", "case.txt")


def build() -> dict[str, Any]:
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, width: int) -> None:
            super().__init__()
            self.norm = nn.LayerNorm(width)
            self.fc1 = nn.Linear(width, 4 * width)
            self.fc2 = nn.Linear(4 * width, width)

        def forward(self, x: Any) -> Any:
            hidden = torch.nn.functional.gelu(self.fc1(self.norm(x)))
            return torch.softmax(self.fc2(hidden) + x, dim=-1)

    torch.manual_seed(0)
    model = Block(WIDTH).cuda().half().eval()
    inputs = (torch.randn(ROWS, WIDTH, device="cuda", dtype=torch.half),)
    return {"model": model, "inputs": inputs, "region": REGION, "compile": {"mode": "max-autotune-no-cudagraphs"}}


def run_model() -> int:
    import torch

    spec = build()
    compiled = torch.compile(spec["model"], **spec["compile"])
    with torch.no_grad():
        out = compiled(*spec["inputs"])
        reference = spec["model"](*spec["inputs"])
        torch.cuda.synchronize()
    print(json.dumps({"max_abs_diff": float((out - reference).abs().max()), "torch": torch.__version__}))
    return 0


def profile_model() -> list[dict[str, Any]]:
    """The compiled model's kernels ranked by device time (torch.profiler, as `report --fallback` ranks them)."""
    import torch

    from pytest_dcuopt.toolchains.torch_device_timer import TorchDeviceTimer
    from pytest_dcuopt.triton_flow.fallback import kernel_shares

    spec = build()
    compiled = torch.compile(spec["model"], **spec["compile"])
    with torch.no_grad():
        compiled(*spec["inputs"])
        torch.cuda.synchronize()
        activities = TorchDeviceTimer(torch, torch.device("cuda", torch.cuda.current_device())).profile_activities(
            lambda: compiled(*spec["inputs"]))
    return kernel_shares(activities or [])


def pick(capture: Path, profile: list[dict[str, Any]] | None = None) -> tuple[str, Path, str]:
    """The tuned kernel with the largest device time in the compiled model's profile (`profile`: the "kernels" of a
    fallback.json / profile_model()), its capture folder, and how it was picked. Without a profile naming a captured
    kernel, the one whose best autotuning time is largest, said in the note: those times are Inductor's host-timed
    benchmark (~90 us for any kernel with a mutated in_out_ptr on the H200, whatever its size), a poor hot-spot
    measure."""
    records = [json.loads(line) for line in (capture / "autotune.jsonl").read_text().splitlines() if line.strip()]
    # `triton_` is the name Inductor benchmarks a kernel under while compiling the graph: not a kernel the model runs
    timed = [r for r in records if r.get("best") and r["kernel"] != "triton_"]
    if not timed:
        raise SystemExit(f"{capture}/autotune.jsonl holds no timed kernel")
    by_name = {r["kernel"]: r for r in timed}  # the last capture of a name: the one the model ran last
    ranked = [k for k in sorted(profile or [], key=lambda k: k["ms"], reverse=True) if k["kernel"] in by_name]
    if ranked:
        top = ranked[0]
        chosen = by_name[top["kernel"]]
        note = (f"largest device time in the compiled model's profile among the captured kernels: rank "
                f"{top.get('rank', '?')}, {top['ms']:.4f} ms, {top.get('share', 0.0):.1%}")
    else:
        chosen = max(timed, key=lambda r: r["best"]["ms"])
        note = ("slowest best autotuning time (no profile naming a captured kernel): that time is Inductor's "
                "host-timed benchmark, launch overhead included, so this may not be the hot spot")
    return chosen["kernel"], capture / chosen["folder"], note


def picked_profile(argv: list[str]) -> list[dict[str, Any]] | None:
    """The profile for `pick`: the "kernels" of PROFILE.json when given, else the compiled model's on the GPU."""
    if argv:
        return list(json.loads(Path(argv[0]).read_text()).get("kernels", []))
    try:
        return profile_model()
    except Exception as exc:  # said on stderr; pick then falls back to the autotuning times
        print(f"pick: no profile ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None


def shrink(work: Path, out: Path) -> list[str]:
    """Copy the small result files (and the capture records, without inputs.pt) from `work` to `out`."""
    copied = []
    for name in SMALL_OUTPUTS:
        if (work / name).is_file():
            shutil.copy2(work / name, out / name)
            copied.append(name)
    capture = work / "cap"
    for path in sorted(capture.glob("*")) if capture.is_dir() else []:
        if path.name in ("autotune.jsonl", "autotune.log", "capture-errors.log", "capture-run.json", "pick.json"):
            shutil.copy2(path, out / f"cap_{path.name}")
            copied.append(f"cap_{path.name}")
        elif path.is_dir() and (path / "capture.json").is_file():
            shutil.copy2(path / "capture.json", out / f"cap_{path.name}.json")
            copied.append(f"cap_{path.name}.json")
    return copied


def main(argv: list[str]) -> int:
    if not argv:
        return run_model()
    if argv[0] == "pick":
        kernel, folder, note = pick(Path(argv[1]), picked_profile(argv[2:]))
        (Path(argv[1]) / "pick.json").write_text(json.dumps({"kernel": kernel, "folder": str(folder),
                                                              "picked_by": note}, indent=2) + "\n")
        print(f"pick: {kernel}: {note}", file=sys.stderr)
        print(kernel, folder)
        return 0
    if argv[0] == "shrink":
        print(" ".join(shrink(Path(argv[1]), Path(argv[2]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
