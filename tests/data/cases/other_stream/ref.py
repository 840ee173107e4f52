"""Fixture (CUDA): y = 2*x + 1 after a ~2 ms busy wait on the GPU (so the work is long enough to see). The baseline
runs on the default stream. nonblocking_stream launches the same work on a cudaStreamNonBlocking stream of its own
and returns: its values are right (the harness synchronizes the whole device before reading outputs), but the timing
events on the default stream see none of the work, so it would time ~100x faster. The device timing must say "work
left running" and the branch must never be crowned. blocking_stream uses a plain cudaStreamCreate stream, which the
legacy default stream waits for: its work lies inside the events, and it is timed right (the control)."""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 1 << 16)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)
