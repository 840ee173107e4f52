"""Contract fixture: solve allocates a temporary with new[] and frees it with delete[] on every call.

Inclusive prefix sums through a scratch buffer. On the CPU such a solve just works (the CUDA version, with
cudaMalloc/cudaFree inside solve, is for the GPU run). `skips_last_copy` never copies the last element out of
the scratch buffer.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 600)}

atol = 1e-4
rtol = 1e-4


def reference(x, y, N):
    y.copy_(x.cumsum(dim=0))
