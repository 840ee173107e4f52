"""Project-level pytest configuration, shared by the example suite (kernels/) and the tests (tests/).

The plugin itself is loaded through its `pytest11` entry point (`pip install -e .`); a user's
repository needs no conftest at all: a directory with ref.py, dims.json and kernel files is collected.
"""
from __future__ import annotations

# Run directories, build caches and the virtual environment are outputs, never test sources.
collect_ignore_glob = [".dcuopt/*", ".venv/*", "build/*"]
