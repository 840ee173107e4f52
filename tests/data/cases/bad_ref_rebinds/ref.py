"""Fixture (bad input): the reference rebinds `y` instead of writing into it, so the harness's `y` stays as given."""

shapes = {"x": ("N",), "y": ("N",)}


def reference(x, y, N):
    y = 2.0 * x  # noqa: F841 (on purpose: a new tensor, not the output buffer)
