"""The model and helpers of tools/device/triton_capture.sh (issue 13's end-to-end run on one GPU).

    python3 tools/device/triton_capture.py              compile and run the model once (what `capture` runs)
    python3 tools/device/triton_capture.py pick CAPDIR  print "<kernel> <capture folder>" of the slowest tuned kernel
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


def pick(capture: Path) -> tuple[str, Path]:
    """The tuned kernel whose best config is slowest (the likeliest hot spot), and its capture folder."""
    records = [json.loads(line) for line in (capture / "autotune.jsonl").read_text().splitlines() if line.strip()]
    # `triton_` is the name Inductor benchmarks a kernel under while compiling the graph: not a kernel the model runs
    timed = [r for r in records if r.get("best") and r["kernel"] != "triton_"]
    if not timed:
        raise SystemExit(f"{capture}/autotune.jsonl holds no timed kernel")
    slowest = max(timed, key=lambda r: r["best"]["ms"])
    return slowest["kernel"], capture / slowest["folder"]


def shrink(work: Path, out: Path) -> list[str]:
    """Copy the small result files (and the capture records, without inputs.pt) from `work` to `out`."""
    copied = []
    for name in SMALL_OUTPUTS:
        if (work / name).is_file():
            shutil.copy2(work / name, out / name)
            copied.append(name)
    capture = work / "cap"
    for path in sorted(capture.glob("*")) if capture.is_dir() else []:
        if path.name in ("autotune.jsonl", "autotune.log", "capture-errors.log", "capture-run.json"):
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
        kernel, folder = pick(Path(argv[1]))
        print(kernel, folder)
        return 0
    if argv[0] == "shrink":
        print(" ".join(shrink(Path(argv[1]), Path(argv[2]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
