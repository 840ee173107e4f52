"""C = A @ B in float32 (A is M x K, B is K x N), normal(0, 1) entries."""

shapes = {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")}

dim_ranges = {"M": (1, 192), "N": (1, 192), "K": (1, 192)}

inputs = {"A": ("normal", 0.0, 1.0), "B": ("normal", 0.0, 1.0)}


def reference(A, B, C, M, N, K):
    C.copy_(A @ B)


def flops(M, N, K):
    return 2 * M * N * K


def bytes_moved(M, N, K):
    return 4 * (M * K + K * N + M * N)
