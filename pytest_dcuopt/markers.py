"""Every marker the plugin defines, declared once and documented in `pytest --markers`."""
from __future__ import annotations

import pytest

CASE_MARKER = "dcuopt"

MARKERS: dict[str, str] = {
    CASE_MARKER: "dcuopt(case, toolchain): set by pytest_dcuopt on every test it generates for a kernel case; "
                 "select them with `-m dcuopt`.",
}


def register(config: pytest.Config) -> None:
    for line in MARKERS.values():
        config.addinivalue_line("markers", line)
