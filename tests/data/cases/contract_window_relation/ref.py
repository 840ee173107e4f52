"""Contract fixture: moving sums over every full window, with dims that constrain each other.

`relations` keeps window <= length in every drawn and boundary example (both ranges alone would allow
window > length, where the output would have a negative size); the output's shape is an expression string
and the tolerance grows with the window. `caps_window_at_8` sums at most 8 elements per window (a fixed local
buffer): right for the default window, wrong as soon as window > 8.
"""

shapes = {"x": ("length",), "sums": ("length - window + 1",)}

dim_ranges = {"length": (1, 400), "window": (1, 64)}

relations = ["window <= length"]

atol = lambda window: 1e-5 * window  # noqa: E731 - a tolerance may be a function of the dims


def reference(x, sums, length, window):
    sums.copy_(x.unfold(0, window, 1).sum(dim=1))
