"""The ISA signature registry the plugin reads is package data; references/ holds a copy for people.

pytest_dcuopt/isa/data/ is the source of truth (a wheel carries it); references/ must stay byte-for-byte equal,
so an edit to one without the other fails here instead of silently changing nothing.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_dcuopt.isa import signatures

REFERENCES = Path(__file__).resolve().parents[3] / "references"


@pytest.mark.parametrize("name", [signatures.SIGNATURES_NAME, signatures.SCHEMA_NAME])
def test_references_keeps_a_byte_for_byte_copy_of_the_packaged_registry(name: str) -> None:
    packaged = signatures.PACKAGED_DATA / name
    copy = REFERENCES / name
    assert copy.read_bytes() == packaged.read_bytes(), (
        f"references/{name} differs from pytest_dcuopt/isa/data/{name} (the copy the plugin reads). Edit the "
        f"packaged file and copy it: cp pytest_dcuopt/isa/data/{name} references/{name}")


def test_the_default_registry_is_the_packaged_one_not_a_checkout_path() -> None:
    package_dir = Path(signatures.__file__).resolve().parent
    assert signatures.DEFAULT_PATH.resolve() == package_dir / "data" / signatures.SIGNATURES_NAME
    assert signatures.SCHEMA_PATH.resolve() == package_dir / "data" / signatures.SCHEMA_NAME
    assert signatures.load(signatures.DEFAULT_PATH).methods  # it loads and validates against the packaged schema
