"""Contract fixture (`triton` toolchain, run in Triton's interpreter): launchers whose names are not the
reference's. The baseline says `solve(a, b, c, n)` for `reference(A, B, C, N)`: bound by position, like a C ABI
kernel. `drops_tail` is bound the same way and computes one element short (wrong); `one_short` takes three
parameters for the reference's four: refused, listing both signatures.
"""

shapes = {"A": ("N",), "B": ("N",), "C": ("N",)}
outputs = ["C"]
dim_ranges = {"N": (1, 300)}


def reference(A, B, C, N):
    C.copy_(A - 2.0 * B)
