"""A wheel install (`pip install .`, not `-e`) must work outside this checkout.

The wheel is built from a copy of the package sources, installed into a fresh venv, and used from another folder
as a user would: the README's ISA example (`kernels/vector_add`, the x86 `isa` mark of `restrict_simd`), a `.cu`
kernel's ISA test where nvcc exists (the build force-includes a header that ships with the package), `dcuopt env`
and `dcuopt setup`. Every file the package reads at run time must be package data: the wheel must hold every
non-Python file of the package's source tree.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTOR_ADD = REPO / "kernels" / "vector_add"
# Enough for each step on a loaded 2-core box (the whole test takes ~10 s there).
STEP_TIMEOUT_S = 120

pytestmark = pytest.mark.slow


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    assert done.returncode == 0, (f"{' '.join(command)} exited {done.returncode}:\n"
                                  f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def clean_env() -> dict[str, str]:
    """No variable that could point the fresh venv back at this checkout or change the registry it reads."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "DCUOPT_ISA_SIGNATURES")
    return {k: v for k, v in os.environ.items() if k not in dropped}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel from a copy of what a source distribution holds (no build/ or egg-info in the checkout)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "pytest_dcuopt", source / "pytest_dcuopt",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    built = run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
                 "-w", str(root / "dist"), str(source)], cwd=root)
    # The SPDX `license = "MIT"` string, not the deprecated table, so no install prints deprecation warnings.
    assert "deprecat" not in (built.stdout + built.stderr).lower(), built.stdout[-4000:] + built.stderr[-4000:]
    (found,) = (root / "dist").glob("pytest_dcuopt-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; the other requirements come from this interpreter's site-packages.

    `venv --system-site-packages` would not do: a venv made from a venv's python inherits the *base* Python's
    site-packages, not the project venv's (where pytest, numpy, torch live). A .pth line appends the project
    venv's site-packages after the fresh venv's own, without running its .pth files, so the editable install's
    finder (which maps pytest_dcuopt to this checkout) is not active there.
    """
    venv = tmp_path_factory.mktemp("venv") / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=venv.parent)
    python = venv / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                       cwd=venv.parent, env=clean_env()).stdout.strip())
    (purelib / "dcuopt_project_requirements.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        cwd=venv.parent)
    return venv


def package_data_files() -> list[str]:
    """Every non-Python file of the package source (what the code opens at run time: schemas, registries, the
    CUDA shim and sync-hook header, py.typed), as wheel member names."""
    package = REPO / "pytest_dcuopt"
    return sorted(path.relative_to(REPO).as_posix() for path in package.rglob("*")
                  if path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in path.parts)


def test_the_wheel_ships_every_data_file_of_the_package(wheel: Path) -> None:
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    expected = package_data_files()
    assert "pytest_dcuopt/toolchains/cuda_sync_hooks.h" in expected  # the walk sees what the code opens
    missing = [name for name in expected if name not in names]
    assert not missing, f"not in {wheel.name} (add them to [tool.setuptools.package-data]): {missing}"


def test_the_wheel_ships_the_isa_signature_registry(wheel: Path) -> None:
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    for data in ("pytest_dcuopt/isa/data/isa_signatures.json", "pytest_dcuopt/isa/data/isa_signatures.schema.json",
                 "pytest_dcuopt/report/schema/state.schema.json"):
        assert data in names, f"{data} is not in {wheel.name}"


def test_an_isa_mark_passes_with_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    python = str(installed / "bin" / "python")
    work = tmp_path / "project"
    shutil.copytree(VECTOR_ADD, work / "vector_add")
    env = clean_env()
    where = run([python, "-c", "import pytest_dcuopt, pytest_dcuopt.isa.signature_registry as s; "
                 "print(pytest_dcuopt.__file__); print(s.DEFAULT_PATH)"], cwd=work, env=env).stdout.split()
    for path in where:  # the wheel's copy, not this checkout's
        assert Path(path).resolve().is_relative_to(installed.resolve()), (path, installed)

    result = subprocess.run([python, "-m", "pytest", "vector_add", "-k", "test_isa_cpu", "--dcuopt-toolchain=cpu",
                             "-p", "no:cacheprovider", f"--dcuopt-cache-dir={tmp_path / 'cache'}",
                             f"--dcuopt-run-dir={tmp_path / 'run'}", "-v"],
                            cwd=work, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    output = result.stdout[-6000:] + result.stderr[-3000:]
    assert result.returncode == 0, output
    assert "vector_add/ref.py::test_isa_cpu[restrict_simd] PASSED" in result.stdout, output
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    isa = state["cases"]["vector_add"]["toolchains"]["cpu"]["branches"]["restrict_simd"]["isa"]
    assert isa["outcome"] == "pass", isa


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed: no .cu kernel can be built here")
def test_a_cu_isa_mark_passes_with_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    """The cuda toolchain force-includes the package's sync-hook header into every `.cu` build."""
    python = str(installed / "bin" / "python")
    work = tmp_path / "project"
    shutil.copytree(VECTOR_ADD, work / "vector_add")
    result = subprocess.run([python, "-m", "pytest", "vector_add", "-k", "test_isa_cuda and float4",
                             "--dcuopt-toolchain=cuda", "-p", "no:cacheprovider",
                             f"--dcuopt-cache-dir={tmp_path / 'cache'}", f"--dcuopt-run-dir={tmp_path / 'run'}", "-v"],
                            cwd=work, env=clean_env(), capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    output = result.stdout[-6000:] + result.stderr[-3000:]
    assert result.returncode == 0, output
    assert "vector_add/ref.py::test_isa_cuda[float4] PASSED" in result.stdout, output


def test_dcuopt_env_and_setup_work_with_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    dcuopt = str(installed / "bin" / "dcuopt")
    work = tmp_path / "project"
    shutil.copytree(VECTOR_ADD, work / "vector_add")
    env = clean_env()
    run([dcuopt, "env", "--json", str(tmp_path / "env.json")], cwd=work, env=env)
    probed = json.loads((tmp_path / "env.json").read_text())
    assert set(probed["toolchains"]) >= {"cpu", "cuda"}, probed["toolchains"]

    run([dcuopt, "setup", "vector_add", "--toolchain", "cpu", "--pytest-args",
         f"--dcuopt-cache-dir={tmp_path / 'cache'} --dcuopt-examples=5"], cwd=work, env=env)
    (run_dir,) = (work / "vector_add").glob("run_*")
    state = json.loads((run_dir / "state.json").read_text())
    assert state["toolchain"] == "cpu" and (run_dir / "env.json").is_file()
