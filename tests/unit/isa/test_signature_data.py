"""The ISA signature registry has one copy: the package data the plugin reads (pytest_dcuopt/isa/data/, which a wheel
carries). references/ points at it instead of keeping a second copy that could drift, and nothing reads one there."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_dcuopt.isa import signature_registry as signatures

ROOT = Path(__file__).resolve().parents[3]
COPY_PATH = "references/" + "isa_signatures"  # split, so this file does not name the path it looks for


@pytest.mark.parametrize("name", [signatures.SIGNATURES_NAME, signatures.SCHEMA_NAME])
def test_the_registry_has_no_second_copy_in_references(name: str) -> None:
    assert (signatures.PACKAGED_DATA / name).is_file()
    assert not (ROOT / "references" / name).exists(), (
        f"references/{name} is a second copy of pytest_dcuopt/isa/data/{name}; edit the packaged file only")


def test_nothing_in_the_project_reads_a_copy_in_references() -> None:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    mentions = [f"{path}: {line.strip()}" for path in listed
                if path.endswith((".py", ".sh", ".toml", ".md", ".json", ".cfg")) and (ROOT / path).is_file()
                for line in (ROOT / path).read_text(errors="replace").splitlines()
                if COPY_PATH in line]
    assert mentions == []


def test_the_default_registry_is_the_packaged_one_not_a_checkout_path() -> None:
    package_dir = Path(signatures.__file__).resolve().parent
    assert signatures.DEFAULT_PATH.resolve() == package_dir / "data" / signatures.SIGNATURES_NAME
    assert signatures.SCHEMA_PATH.resolve() == package_dir / "data" / signatures.SCHEMA_NAME
    assert signatures.load(signatures.DEFAULT_PATH).methods  # it loads and validates against the packaged schema
