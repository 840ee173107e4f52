"""Fixture: c[M, N] = a[M, K] @ b[K, N]. Branch assumes_square uses N as the
row stride of a, which is only right when N == K.

The default dims are square (M = N = K = 16), so the default-dims check passes
and the bug only shows for non-square dims drawn by Hypothesis.
"""

shapes = {"a": ("M", "K"), "b": ("K", "N"), "c": ("M", "N")}

dim_ranges = {"M": (1, 24), "N": (1, 24), "K": (1, 24)}

inputs = {
    "a": ("normal", 0.0, 1.0),
    "b": ("normal", 0.0, 1.0),
}


def reference(a, b, c, M, N, K):
    c.copy_(a @ b)


def flops(M, N, K):
    return 2 * M * N * K


def bytes_moved(M, N, K):
    return 4 * (M * K + K * N + M * N)
