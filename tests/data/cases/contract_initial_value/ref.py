"""Contract fixture: the last index that hit each bucket, into a buffer the caller fills with -1.

`initial = {"last": -1}`: every call starts with -1 in each bucket (a bucket no key hits stays -1). Keys are
drawn from more buckets than N can fill, so some stay empty. `resets_to_zero` zeroes the buffer first, so an
empty bucket says 0 instead of -1: wrong.
"""
import torch

shapes = {"keys": ("N",), "last": ("buckets",)}

dim_ranges = {"N": (1, 200), "buckets": (1, 300)}

inputs = {"keys": ("int", 0, "buckets - 1")}

initial = {"last": -1}


def reference(keys, last, N, buckets):
    index = torch.arange(N, dtype=last.dtype)
    last.scatter_reduce_(0, keys.long(), index, reduce="amax", include_self=True)
