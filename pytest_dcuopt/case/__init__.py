"""A kernel case: its directory, ref.py, dims and branches.

Stable: `model` (`load_case`, `Case`, `Branch`), `reference` (`load_reference`, `Reference`), `cabi`
(`parse_solve_signature`) and `buffers` (shapes, input domains, poison)."""

__all__ = ["model", "reference", "cabi", "buffers"]  # the stable submodules; the others may change
