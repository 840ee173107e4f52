"""Fixture: y = alpha * x with a float scalar `alpha` in dims.json. flops/bytes_moved declare only N:
the throughput must be computed by passing each function just the dims it takes. Correct.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 300)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, alpha, N):
    y.copy_(alpha * x)


def flops(N):
    return N  # one multiply per element


def bytes_moved(N):
    return 2 * 4 * N  # read x, write y (float32)
