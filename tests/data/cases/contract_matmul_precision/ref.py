"""Contract fixture: a float32 matmul with a long reduction (K = 4096 to 8192) that must be computed in float32.

`reduction = "K"` turns on the float reduction bound, 8 * u * (|A| @ |B| + sqrt(K) * |A @ B|) with u = 2^-24:
the naive baseline, `blocked_pairwise` (k in blocks of 64, the block sums added as a tree) and
`openmp_reduction` (k split across threads by an OpenMP reduction) are other float32 summation orders and pass;
`tf32_inputs` rounds A and B to tf32's 10-bit mantissa first (what a tensor-core TF32 matmul does) and fails.
A copy of this case that declares `precision = "tf32"` accepts it.
"""

shapes = {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")}

dim_ranges = {"M": (1, 8), "N": (1, 8), "K": (4096, 8192)}  # long reductions only: where the bound matters

reduction = "K"


def reference(A, B, C, M, N, K):
    C.copy_(A @ B)
