"""`dcuopt`: the optimization loop's deterministic commands (env, setup, open-iter, close-iter, finalize).

Each command is a module of this package; `main.py` parses the command line. Every command re-reads the
run directory, can be run again with the same result, and measures through pytest in a subprocess (the
harness writes its own state.json under the iteration, never over the loop's). See docs/loop.md.

Stable: the `dcuopt` console script (`main`); each command's module is its implementation.
"""

__all__ = ["main"]  # the stable submodules; the others may change
