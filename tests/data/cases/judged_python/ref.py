"""Fixture for the `python` toolchain: c = a + b. Four branches cheat, one is an honest look-alike:

- zeroes_b: its setup() makes b all zeros and run_kernel computes c = a; the harness draws the inputs itself.
- forges_its_snapshot: monkey-patches the worker's snapshot to hand back no outputs.
- computes_once: keeps the result per output tensor and hands it back on every later call.
- computes_when_watched: computes only when c does not hold what it last wrote (a timed call checked at random
  catches it).
- in_chunks: computes c in slices (honest).
"""

dim_ranges = {"N": (1, 4096)}


def reference(a, b, c, N):
    c.copy_(a + b)
