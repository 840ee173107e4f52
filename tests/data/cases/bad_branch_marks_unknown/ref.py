"""Fixture (bad input): branch_marks names a branch the case does not have."""

import pytest

shapes = {"x": ("N",), "y": ("N",)}

branch_marks = {"nope": [pytest.mark.skip(reason="no such branch")]}


def reference(x, y, N):
    y.copy_(2.0 * x)
