"""What a run leaves: records, state.json, summary.md and the terminal table, plots.

Stable: `records` (`BranchRecord`), `state` (state.json: `build_state`, `find_case`; its schema is versioned) and
`summary` (summary.md and the terminal table)."""

__all__ = ["records", "state", "summary"]  # the stable submodules; the others may change
