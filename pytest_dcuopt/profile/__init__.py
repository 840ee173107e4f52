"""Profiling: tool-format parsers, normalized metrics, kernel-row selection, roofline and axis budget, the
method registry's validators, and the profilers (perf, ncu, hipprof, rocprof) behind the `profile`
marker (observe/profile.py). Pure functions over tool output and `external_tools.run_tool`; it sits in the `isa` layer
and imports nothing above it. See docs/profiling.md.

Stable: the modules in `__all__`.
"""

__all__ = ["spec", "metrics", "roofline", "methods"]  # the stable submodules; the others may change
