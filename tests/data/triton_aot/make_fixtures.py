"""Regenerate the AOT fixtures in this folder (no GPU needed): `python tests/data/triton_aot/make_fixtures.py`
(or into another folder: `... make_fixtures.py OUT`).

Three small Triton kernels compiled ahead of time with `triton.compile` for hip:gfx90a, hip:gfx942 and
cuda:90. Pointer arguments carry the hints a launch on tensors under 2 GB would give them
(`tt.divisibility = 16`, and `tt.pointer_range = 32` on AMD, which is what turns on buffer ops).
Each kernel keeps its `.ttir`, `.ttgir` and `.amdgcn` (AMD) or `.sass` (NVIDIA).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

HERE = Path(__file__).resolve().parent
TARGETS = {"gfx90a": GPUTarget("hip", "gfx90a", 64), "gfx942": GPUTarget("hip", "gfx942", 64),
           "sm90": GPUTarget("cuda", 90, 32)}


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def hist_kernel(idx_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    bins = tl.load(idx_ptr + offsets, mask=mask, other=0)
    tl.atomic_add(out_ptr + bins, 1.0, mask=mask)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


KERNELS = {
    "add_kernel": (add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                "BLOCK": "constexpr"}, {"BLOCK": 1024}, 3),
    "hist_kernel": (hist_kernel, {"idx_ptr": "*i32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                    {"BLOCK": 256}, 2),
    "dot_kernel": (dot_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "BM": "constexpr",
                                "BN": "constexpr", "BK": "constexpr"}, {"BM": 64, "BN": 64, "BK": 32}, 3),
}


def portable(text: str) -> str:
    """The compilers write source locations as absolute paths; keep them relative to the repository."""
    return text.replace(f"{HERE.parents[2]}/", "")


def compile_one(name: str, label: str, target: GPUTarget, root: Path = HERE) -> None:
    fn, signature, constexprs, pointers = KERNELS[name]
    amd = target.backend == "hip"
    attrs = {(i,): [["tt.divisibility", 16]] + ([["tt.pointer_range", 32]] if amd else []) for i in range(pointers)}
    compiled = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs),
                              target=target, options={"num_warps": 4})
    stem = root / label / name
    stem.parent.mkdir(parents=True, exist_ok=True)
    for stage in ("ttir", "ttgir", "amdgcn"):
        if stage in compiled.asm:
            stem.with_suffix(f".{stage}").write_text(portable(compiled.asm[stage]))
    if "cubin" in compiled.asm:
        cubin = stem.with_suffix(".cubin")
        cubin.write_bytes(compiled.asm["cubin"])
        sass = subprocess.run([triton.knobs.nvidia.cuobjdump.path, "--dump-sass", str(cubin)], capture_output=True,
                              text=True, check=True, timeout=120).stdout
        stem.with_suffix(".sass").write_text(portable(sass))
        cubin.unlink()


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else HERE
    for label, target in TARGETS.items():
        for name in KERNELS:
            compile_one(name, label, target, root)
    print(f"triton {triton.__version__}: wrote {sorted(str(p.relative_to(root)) for p in root.rglob('*_kernel.*'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
