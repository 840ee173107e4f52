"""The correctness stage.

Stable: `verify` (the correctness flow) and `compare` (tolerances, `compare`, `reproduce_command`)."""

__all__ = ["verify", "compare"]  # the stable submodules; the others may change
