"""A kernel case: its directory, ref.py, dims and branches.

Stable: `model` (`load_case`, `Case`, `Branch`), `reference` (`Reference`), `ref_loader` (`load_reference`), `cabi`
(`parse_solve_signature`) and `buffers` (shapes, input domains, poison)."""

__all__ = ["model", "reference", "ref_loader", "cabi", "buffers"]  # the stable submodules; the others may change
