"""What a run leaves: records, state.json, summary.md and the terminal table, plots.

Stable: `records` (`BranchRecord`), `state` (state.json: `build_state`, `find_case`; its schema is versioned),
`summary` (summary.md and the terminal table) and `columns` (`Column`: the branch tables' columns, and what a
`pytest_dcuopt_summary_columns` hook returns)."""

__all__ = ["records", "state", "summary", "columns"]  # the stable submodules; the others may change
