"""`dcuopt pack` of a kernel case and `dcuopt ingest`'s checks, on hand-made results folders (the real run.sh
round trip of a loop iteration is tests/plugin/test_remote.py)."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from pytest_dcuopt.cli.main import main
from tests.conftest import CASES


def dcuopt(*argv: object) -> int:
    return main([str(a) for a in argv])


@pytest.fixture
def case(tmp_path: Path) -> Path:
    folder = tmp_path / "sized"
    shutil.copytree(CASES / "bench_sizes", folder)
    (folder / "notes.txt").write_text("not part of the case\n")
    (folder / "branches" / "unrolled4" / "kernel.o").write_bytes(b"\x7fELF build output")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "ref.cpython-311.pyc").write_bytes(b"cache")
    return folder


def pack(case: Path, tmp_path: Path) -> tuple[Path, dict]:
    archive = tmp_path / "sized.pack.tar.gz"
    assert dcuopt("pack", case, "--toolchain", "cpu", "--pytest-args", "-v --dcuopt-max-time=0.2", "-o", archive) == 0
    with tarfile.open(archive) as packed:
        manifest = json.loads(packed.extractfile("dcuopt-pack-sized/manifest.json").read())  # type: ignore[union-attr]
    return archive, manifest


def results_of(manifest: dict, where: Path, state: dict | None = None) -> Path:
    """A results/ folder as run.sh writes it: the manifest, the packed files' hashes there, the harness state."""
    results = where / "results"
    (results / "pytest").mkdir(parents=True)
    (results / "manifest.json").write_text(json.dumps(manifest))
    (results / "files.json").write_text(json.dumps({k: v["sha256"] for k, v in manifest["files"].items()}))
    (results / "exit_status").write_text("0\n")
    (results / "remote.json").write_text(json.dumps({"plugin_from_pack": True,
                                                     "plugin_sha256": manifest["plugin"]["sha256"]}))
    state = state or {"created_at": "2026-12-01T06:00:00+00:00", "finished_at": "2026-12-01T06:01:00+00:00"}
    (results / "pytest" / "state.json").write_text(json.dumps(state))
    return results


def test_a_case_pack_holds_the_case_files_a_manifest_and_run_sh(case: Path, tmp_path: Path) -> None:
    archive, manifest = pack(case, tmp_path)
    with tarfile.open(archive) as packed:
        members = {m.name.split("/", 1)[1]: m for m in packed.getmembers()}
    assert set(members) == {"manifest.json", "run.sh", "pytest.ini", "sized/ref.py", "sized/dims.json",
                            "sized/kernel.cpp", "sized/branches/unrolled4/kernel.cpp",
                            "sized/branches/wrong_past_64k/kernel.cpp",
                            manifest["plugin"]["file"]}  # no notes, build outputs or caches
    assert members["run.sh"].mode == 0o755
    assert manifest["pytest_args"] == ["sized", "--dcuopt-run-dir=results/pytest", "-p", "no:cacheprovider",
                                       "--dcuopt-toolchain=cpu", "-v", "--dcuopt-max-time=0.2"]
    assert manifest["kind"] == "case" and manifest["target"] == str(case.resolve())
    ref = manifest["files"]["sized/ref.py"]
    assert ref["sha256"] == ref["source_sha256"] == hashlib.sha256((case / "ref.py").read_bytes()).hexdigest()
    assert manifest["harness_version"] and len(manifest["pack_id"]) == 64


def test_case_results_are_ingested_into_the_named_run_dir(case: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, manifest = pack(case, tmp_path)
    results = results_of(manifest, tmp_path / "back")
    assert dcuopt("ingest", case, results) == 2
    assert "--into DIR" in capsys.readouterr().err
    assert dcuopt("ingest", case, results, "--into", tmp_path / "local_run") == 0
    assert json.loads((tmp_path / "local_run" / "state.json").read_text())["finished_at"].startswith("2026")
    assert json.loads((tmp_path / "local_run" / "ingested.json").read_text())["manifest"]["pack_id"] == manifest[
        "pack_id"]


def test_a_file_changed_there_is_named_and_refused(case: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, manifest = pack(case, tmp_path)
    results = results_of(manifest, tmp_path / "back")
    hashes = json.loads((results / "files.json").read_text())
    hashes["sized/branches/unrolled4/kernel.cpp"] = "0" * 64
    (results / "files.json").write_text(json.dumps(hashes))
    assert dcuopt("ingest", case, results, "--into", tmp_path / "local_run") == 2
    err = capsys.readouterr().err
    assert "sized/branches/unrolled4/kernel.cpp differed from the pack" in err
    assert not (tmp_path / "local_run").exists()


def test_results_of_another_target_are_refused(case: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, manifest = pack(case, tmp_path)
    results = results_of(manifest, tmp_path / "back")
    other = tmp_path / "other"
    shutil.copytree(case, other)
    assert dcuopt("ingest", other, results, "--into", tmp_path / "local_run") == 2
    assert f"are of a pack of {case.resolve()}" in capsys.readouterr().err


def test_an_archive_reaching_outside_its_folder_is_refused(case: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as packed:
        info = tarfile.TarInfo("results/../../escaped.txt")
        info.size = 2
        packed.addfile(info, io.BytesIO(b"hi"))
    assert dcuopt("ingest", case, archive, "--into", tmp_path / "local_run") == 2
    assert "not a plain file or folder inside the archive" in capsys.readouterr().err
    assert not (tmp_path.parent / "escaped.txt").exists()


def test_neither_run_dir_nor_case_is_refused_with_what_to_pass(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert dcuopt("pack", tmp_path) == 2
    assert "neither a run directory" in capsys.readouterr().err
