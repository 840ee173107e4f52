"""The evidence under docs/evidence stays small and every file of it is named in a doc.

A file counts as named when a Markdown file under docs/ (any depth) or the top-level README.md mentions its
path relative to docs/evidence (`h200/summary.json`) or to the repository root
(`docs/evidence/h200/summary.json`) as a whole path, not as part of a longer one.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "docs" / "evidence"
MAX_BYTES = 1_500_000  # 1.5 MB for everything under docs/evidence


def evidence_files() -> list[Path]:
    return sorted(p for p in EVIDENCE.rglob("*") if p.is_file())


def docs_text() -> str:
    docs = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
    return "\n".join(p.read_text(encoding="utf-8") for p in docs if p.is_file())


def named(relative: str, text: str) -> bool:
    # Not preceded by a path character (so `x/h200/a.json` does not name `h200/a.json`) unless the prefix is
    # docs/evidence/; not followed by more path (`a.json.gz` does not name `a.json`).
    pattern = rf"(?<![\w./-])(?:docs/evidence/)?{re.escape(relative)}(?![\w/-]|\.\w)"
    return re.search(pattern, text) is not None


def test_evidence_folder_exists() -> None:
    assert EVIDENCE.is_dir(), f"{EVIDENCE} is missing"
    assert evidence_files(), f"{EVIDENCE} holds no files"


def test_every_evidence_file_is_named_in_a_doc() -> None:
    text = docs_text()
    missing = [p.relative_to(EVIDENCE).as_posix() for p in evidence_files()
               if not named(p.relative_to(EVIDENCE).as_posix(), text)]
    assert not missing, (
        "files under docs/evidence that no doc names (by their path relative to docs/evidence or to the "
        f"repository root): {missing}; add them to docs/evidence/README.md or remove them")


def test_evidence_stays_small() -> None:
    sizes = {p.relative_to(EVIDENCE).as_posix(): p.stat().st_size for p in evidence_files()}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    assert total <= MAX_BYTES, f"docs/evidence holds {total} bytes (limit {MAX_BYTES}); largest: {largest}"


def test_the_name_check_matches_whole_paths_only() -> None:
    assert named("h200/raw.tar.xz", "see `h200/raw.tar.xz`.")
    assert named("h200/raw.tar.xz", "see docs/evidence/h200/raw.tar.xz")
    assert not named("h200/raw.tar.xz", "see h200/bracket-check/raw.tar.xz")
    assert not named("h200/summary.json", "see h200/first-call/summary.json and other/h200/summary.json")
    assert not named("h200/env.json", "h200/env.json.gz")
