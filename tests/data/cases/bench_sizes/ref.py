"""Fixture: c = a + b timed at two benchmark sizes (ref.py `bench_sizes`). Branch wrong_past_64k adds 1 to every
element from index 65536 on: right at every correctness dim (N <= 2000), wrong only at the `large` size, where the
checked calls among its timed ones must catch it."""

shapes = {"a": ("N",), "b": ("N",), "c": ("N",)}

dim_ranges = {"N": (1, 2000)}

bench_sizes = {"small": {"N": 4096}, "large": {"N": 131072}}


def reference(a, b, c, N):
    c.copy_(a + b)


def bytes_moved(N):
    return 3 * 4 * N
