"""Fixture: y = 2*x + 1. Branch every_fourth_call writes NaN into y[0] on every 4th call (a static call
counter): a sometimes-wrong kernel, which must fail as nondeterministic and never be timed or crowned.
"""

shapes = {"x": ("N",), "y": ("N",)}

dim_ranges = {"N": (1, 300)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x + 1.0)


def bytes_moved(N):
    return 2 * 4 * N
