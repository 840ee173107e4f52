"""Fixture (bad input): a correct baseline and branch folders that are not all branches.

branches/no_solve: a kernel without `solve`; branches/unparsable: `solve(const float** x, ...)`;
branches/no_kernel: a folder with only a README; branches/two: kernel.cpp and kernel.cc (which is the branch?);
branches/latin1: a correct kernel with a Latin-1 (not UTF-8) comment, which is fine.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 64)}


def reference(x, y, N):
    y.copy_(2.0 * x)
