"""docs/reliability.md's figures are the tables' own counts, and every test the doc names exists.

The "Done when" table states how many inputs were tried and how each was answered; these tests count the rows of
the input tables and compare, check that no row is left "not fixed" or crashing, and that every test named in the
tables (by its function name, `test_...`) is defined somewhere under tests/.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
INPUTS_START, INPUTS_END = "## The inputs tried", "## The build cache heals"
FIGURES_START = "## Done when: the figures"


def section(text: str, start: str, end: str | None = None) -> str:
    begin = text.index(start)
    return text[begin:text.index(end, begin) if end else len(text)]


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def input_rows(text: str) -> list[list[str]]:
    """Every row of the input tables: input, what the user sees, status, before, test."""
    rows = [cells(line) for line in section(text, INPUTS_START, INPUTS_END).splitlines() if line.startswith("| ")]
    return [row for row in rows if row and row[0] != "input" and not set(row[0]) <= {"-"}]


def figures(text: str) -> dict[str, str]:
    found = {}
    for line in section(text, FIGURES_START).splitlines():
        if line.startswith("| ") and not line.startswith("| figure"):
            row = cells(line)
            if row and not set(row[0]) <= {"-"}:
                found[row[0]] = row[1]
    return found


def status_counts(rows: list[list[str]]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for row in rows:
        status = row[2].lower()
        kind = ("not fixed" if "not fixed" in status else "clear error" if status.startswith("clear error")
                else "handled" if status.startswith("handled") else "other")
        counts[kind] += 1
        if "tried by hand" in row[4]:
            counts["by hand"] += 1
    return counts


def leading_number(value: str) -> int:
    found = re.match(r"\**(\d+)", value)
    assert found, f"no number at the start of {value!r}"
    return int(found.group(1))


def test_the_figures_are_the_counts_of_the_input_tables() -> None:
    text = DOC.read_text()
    rows = input_rows(text)
    counts = status_counts(rows)
    stated = figures(text)
    assert len(rows) >= 75
    assert leading_number(stated["inputs tried"]) == len(rows)
    assert leading_number(stated["clear errors"]) == counts["clear error"]
    assert leading_number(stated["handled (not an error, and it works)"]) == counts["handled"]
    assert leading_number(stated["rows checked by hand only"]) == counts["by hand"]
    assert counts["other"] == 0, [row[:3] for row in rows if not row[2].lower().startswith(("clear", "handled"))]
    for zero in ("internal crashes", "silently wrong verdicts", "escapes", "results lost", "not fixed"):
        assert leading_number(stated[zero]) == 0, zero
    assert counts["not fixed"] == 0


def test_no_row_is_left_as_a_crash_or_a_silent_pass() -> None:
    """A row whose user-visible outcome is still a traceback, an INTERNALERROR or silence would not be answered."""
    for row in input_rows(DOC.read_text()):
        now = row[1].lower()
        assert "internalerror" not in now and "traceback" not in now and "silently" not in now, row[:2]


def test_every_test_the_doc_names_exists() -> None:
    """A test function under tests/, a test module (`test_x.py`), or a test the plugin generates for every case."""
    text = DOC.read_text()
    named = set(re.findall(r"`(test_\w+)\b(?!\.py)", text))
    modules = {path.stem for path in (ROOT / "tests").rglob("test_*.py")}
    defined = {match for path in (ROOT / "tests").rglob("test_*.py")
               for match in re.findall(r"^(?:async )?def (test_\w+)", path.read_text(), re.M)}
    plugin = (ROOT / "pytest_dcuopt" / "collect.py").read_text()
    generated = {name for pair in re.findall(r'def (test_\w+)|_failing\("(test_\w+)"', plugin) for name in pair if name}
    assert named, "the doc names no test"
    assert sorted(named - defined - modules - generated) == []
