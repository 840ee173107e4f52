"""Fixture (bad input): reference() takes two parameters, solve() three."""


def reference(x, y):
    y.copy_(2.0 * x)
