"""CI output of the gate: its Markdown table appended to $GITHUB_STEP_SUMMARY (GitHub Actions' job summary)."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..report.summary import gate_section

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def append_step_summary(state: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> Path | None:
    """Append the gate section to the file $GITHUB_STEP_SUMMARY names (other steps write there too: append, never
    replace). Returns the path, or None when the variable is unset or the run was not gated."""
    target = environ.get(STEP_SUMMARY_ENV)
    section = gate_section(state)
    if not target or not section:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n" + "\n".join(section).replace("## Gate vs baseline", "## pytest_dcuopt gate vs baseline", 1)
                     + "\n")
    return path
