"""Fixture: a correct kernel whose signature exercises the parser.

``solve(float *y, const float* __restrict__ x, int constant_k, int64_t n)``
with comments inside the parameter list: y[i] = x[i] * constant_k.
The output comes first, the scalar dim ``constant_k`` is not a size, and ``n``
is 64-bit. Branch omp_simd spells the same signature differently (one line,
``float* __restrict__ y``, ``const float *__restrict__ x``, trailing comments).
"""

shapes = {"x": ("n",), "y": ("n",)}

dim_ranges = {"n": (1, 2000), "constant_k": (1, 13)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(y, x, constant_k, n):
    y.copy_(x * constant_k)


def flops(n, constant_k):
    return n  # one multiply per element


def bytes_moved(n, constant_k):
    return 2 * 4 * n  # read x, write y (float32)
