"""Fixture: y = 2*x + 1. Branch writes_4096_past_end is right inside y but also stores into y[N + 4096],
beyond a fixed 1024-element guard: must fail naming element N + 4096."""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 2000)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)
