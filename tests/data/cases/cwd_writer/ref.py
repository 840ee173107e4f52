"""Fixture: y = 2*x. The baseline is right, but on every call it also deletes `victim.txt` and writes
`kernel_was_here.txt` in its working directory, and appends that directory to the file named by
$DCUOPT_TEST_CWD_LOG. Run in a scratch working directory, it must leave the project (pytest's directory) untouched."""

shapes = {"x": ("N",), "y": ("N",)}

inputs = {"x": ("normal", 0.0, 1.0)}


def reference(x, y, N):
    y.copy_(2.0 * x)
