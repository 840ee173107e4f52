"""Fixture: the reference never returns in time (it sleeps for ten minutes)."""
import time

shapes = {"x": ("N",), "y": ("N",)}


def reference(x, y, N):
    time.sleep(600)
    y.copy_(2.0 * x)
