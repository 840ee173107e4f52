"""c = a + b, with two broken CUDA branches: one faults (illegal address), one cannot launch."""

shapes = {"a": ("N",), "b": ("N",), "c": ("N",)}
dim_ranges = {"N": (1, 2000)}


def reference(a, b, c, N):
    c.copy_(a + b)
