from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
collect_ignore = ["data"]  # fixture cases, run only inside pytester tests

DATA = Path(__file__).parent / "data"
CASES = DATA / "cases"
KERNELS = Path(__file__).parent.parent / "kernels"

# Fast, still-real settings for plugin runs inside tests.
FAST = ("--dcuopt-max-time=0.2", "--dcuopt-min-samples=3", "--dcuopt-warmup=0.01", "--dcuopt-examples=20",
        "-p", "no:cacheprovider")


@pytest.fixture(scope="session")
def shared_build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build cache for every pytester run: each kernel is compiled once per test session."""
    return tmp_path_factory.mktemp("dcuopt-build-cache")


@pytest.fixture
def run_plugin(pytester: pytest.Pytester, shared_build_cache: Path, monkeypatch: pytest.MonkeyPatch):
    """Copy case directories into a pytester dir and run pytest on them in a subprocess."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        # When these tests run under `-n`, the subprocess would inherit them and take itself for an xdist worker.
        monkeypatch.delenv(name, raising=False)

    def run(*cases: Path, args: tuple[str, ...] = ()) -> pytest.RunResult:
        for case in cases:
            shutil.copytree(case, pytester.path / case.name)
        run_dir = pytester.path / "run"
        return pytester.runpytest_subprocess(
            *[c.name for c in cases], f"--dcuopt-cache-dir={shared_build_cache}", f"--dcuopt-run-dir={run_dir}",
            *FAST, *args,
        )

    return run


# ----- the fast lane: `./scripts/run-tests.sh -m "not e2e"` -------------------------------------
# Tests that run pytest in a subprocess (tests/plugin) or need a real toolchain or an installed
# package (tests/toolchains, tests/packaging) take tens of seconds each; they carry `e2e`. So does
# any test elsewhere that runs pytest through the `pytester` fixture, so the lane stays seconds long.
E2E_DIRS = tuple(Path(__file__).parent / name for name in ("plugin", "toolchains", "packaging"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "e2e: end-to-end test (pytester subprocess run, real toolchain or installed "
                                       "package); set by tests/conftest.py on tests/plugin, tests/toolchains, "
                                       "tests/packaging and every test using `pytester`. Skip them with "
                                       "`-m \"not e2e\"`.")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        in_e2e_dir = any(item.path.is_relative_to(folder) for folder in E2E_DIRS)
        if in_e2e_dir or "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)
