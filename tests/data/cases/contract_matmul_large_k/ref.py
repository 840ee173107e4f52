"""Contract fixture: a float32 matmul with a long reduction (K = 4096 at the default dims).

`reduction = "K"` turns on the float reduction error bound: each element may differ from the float64
reference by atol + rtol*|r| + 8*sqrt(K)*2^-24*(A| @ |B|) (the reference evaluated on |inputs|). The naive
baseline and `split_k_partials` (eight interleaved partial sums, another summation order) are correct;
`drops_last_k` skips the last term of every dot product and must fail.
"""

shapes = {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")}

dim_ranges = {"M": (1, 8), "N": (1, 8), "K": (1, 4096)}

reduction = "K"


def reference(A, B, C, M, N, K):
    C.copy_(A @ B)


def flops(M, N, K):
    return 2 * M * N * K
