"""Fixture: y = 2*x. Each branch ends its worker in its own way (crashes.md rows of docs/reliability.md)."""

shapes = {"x": ("N",), "y": ("N",)}


def reference(x, y, N):
    y.copy_(2.0 * x)
