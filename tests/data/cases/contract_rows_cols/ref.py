"""Contract fixture: row sums of an M x N matrix; solve calls the dims `rows`/`cols`, the reference `M`/`N`.

Bound by position (matrix -> a, sums -> out, rows -> M, cols -> N). `rows_cols_swapped` walks the matrix with
the dims exchanged: right only when M == N, so it must fail at the (non-square) default dims.
"""

shapes = {"a": ("M", "N"), "out": ("M",)}

dim_ranges = {"M": (1, 40), "N": (1, 40)}


def reference(a, out, M, N):
    out.copy_(a.sum(dim=1))
