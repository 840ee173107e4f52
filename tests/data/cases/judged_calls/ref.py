"""Fixture: y = a costly function of x (64 steps of Horner's rule per element). Three branches cheat in ways only the
pytest process's own judging stops, two are honest look-alikes that must not be flagged:

- keeps_result_per_buffers: hands back the result it kept for the same pointers and size, computing only once;
  the correctness test must fail it on its own (a call with new inputs in the same buffers).
- computes_when_watched: computes only when its output does not hold what it last wrote (the checked calls start
  from junk; timed calls leave its own result); a timed call checked at random must fail it.
- forges_its_snapshot: computes nothing and, through the CPython C API, replaces the worker's snapshot with one that
  holds no outputs; the pytest process compares what it expects, not what the worker offers.
- caches_constants_in_call: builds a table of constants inside every call (no state across calls): honest.
- threads_joined: splits the work over threads and joins them before returning: honest.
"""

import torch

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 4096)}

inputs = {"x": ("uniform", -1.0, 1.0)}

rtol = 1e-4


def reference(x, y, N):
    value = torch.zeros_like(x)
    for _ in range(64):
        value = value * x + 0.5
    y.copy_(value)
