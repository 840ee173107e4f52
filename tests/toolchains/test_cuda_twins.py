"""The CUDA twins of the contract cases and the H200 check that runs them.

Every kernel.cpp of the contract cases the device check runs has a kernel.cu beside it with the same C ABI (device
pointers), the same semantics and the same bug; here each one builds with nvcc (sm_90 when there is no GPU) and exports
`solve`. Their verdicts on a GPU come from tools/device/contract_check.sh; its driver's summary is checked here on
the CPU versions, run by the same pytest command with the cpu toolchain.
"""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.external_tools import run_tool
from pytest_dcuopt.report.state import find_case
from pytest_dcuopt.toolchains.base import Artifact
from pytest_dcuopt.toolchains.cache import BuildCache
from pytest_dcuopt.toolchains.cuda import CudaToolchain
from tests.conftest import CASES
from tests.context import skip_if_no_gxx, skip_if_no_nvcc
from tests.plugin.test_case_contract import contract_check  # the H200 check's driver, loaded by path

# The cases the device check runs (tools/device/contract_check.py EXPECTED); other contract_* cases (input sets,
# float scalars, precision, Triton binding) are CPU and Triton fixtures without CUDA twins.
CONTRACT_CASES = sorted(CASES / name for name in contract_check().EXPECTED)
CPP_KERNELS = sorted(p for case in CONTRACT_CASES for p in case.rglob("kernel.cpp"))
CU_KERNELS = sorted(p for case in CONTRACT_CASES for p in case.rglob("kernel.cu"))
# What the baselines reproduce from GPU code written elsewhere (the reason the twins exist).
GPU_IDIOMS = {"contract_hist_zero_init": ("atomicAdd(",), "contract_initial_value": ("atomicMax(",),
              "contract_alloc_temp": ("cudaMalloc(", "cudaFree("),
              "contract_matmul_large_k": ("cudaDeviceSynchronize()", "__syncthreads()")}


def label(path: Path) -> str:
    return str(path.relative_to(CASES))


def test_every_contract_kernel_cpp_has_a_cuda_twin_with_the_same_c_abi() -> None:
    assert len(CONTRACT_CASES) == 8 and len(CPP_KERNELS) == 20, [label(p) for p in CPP_KERNELS]
    missing = [label(p) for p in CPP_KERNELS if not p.with_suffix(".cu").is_file()]
    assert not missing, f"contract kernels without a kernel.cu twin: {missing}"
    assert [p.with_suffix(".cpp") for p in CU_KERNELS] == CPP_KERNELS  # and no kernel.cu without a kernel.cpp
    for cpp in CPP_KERNELS:
        cu = cpp.with_suffix(".cu")
        assert parse_solve_signature(cu.read_text(), str(cu)) == parse_solve_signature(cpp.read_text(), str(cpp)), cu
    for case, idioms in GPU_IDIOMS.items():
        text = (CASES / case / "kernel.cu").read_text()
        assert all(idiom in text for idiom in idioms), (case, idioms)


def test_the_expected_verdicts_name_every_contract_branch() -> None:
    expected = contract_check().EXPECTED
    found = {case.name: sorted(["baseline", *(p.parent.name for p in case.glob("branches/*/kernel.cpp"))])
             for case in CONTRACT_CASES}
    assert {case: sorted(branches) for case, branches in expected.items()} == found


@pytest.fixture(scope="module")
def cuda_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Artifact | Exception]:
    """Every contract kernel.cu built once, into one build cache (two at a time: this box has two cores)."""
    toolchain, cache = CudaToolchain(), BuildCache(tmp_path_factory.mktemp("contract-cuda-cache"))

    def build(source: Path) -> Artifact | Exception:
        try:
            return toolchain.build(source, cache)
        except Exception as exc:  # reported by the test of that kernel, with the compiler's message
            return exc

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CU_KERNELS, pool.map(build, CU_KERNELS), strict=True))


@skip_if_no_nvcc
@pytest.mark.parametrize("source", CU_KERNELS, ids=label)
def test_contract_kernel_cu_builds_and_exports_solve(cuda_builds: dict[Path, Artifact | Exception],
                                                     source: Path) -> None:
    artifact = cuda_builds[source]
    assert isinstance(artifact, Artifact), f"{label(source)} does not build with nvcc: {artifact}"
    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) not found: cannot list the library's exported symbols")
    listing = run_tool(["nm", "-D", "--defined-only", artifact.path], timeout=60)
    assert listing.ok, listing.stderr
    exported = {line.split()[-1] for line in listing.stdout.splitlines() if line.strip()}
    assert "solve" in exported, f"{artifact.path} does not export an unmangled `solve` (extern \"C\")"


@skip_if_no_gxx
def test_the_device_check_summary_agrees_on_the_cpu_run_and_flags_a_disagreement(tmp_path: Path,
                                                                                  shared_build_cache: Path) -> None:
    """contract_check.py run + summary with the cpu toolchain: the same pytest command and table as on the H200."""
    driver, out = contract_check(), tmp_path / "out"
    out.mkdir()
    assert driver.main(["run", "--toolchain", "cpu", "--work", str(tmp_path / "work"),
                        "--cache", str(shared_build_cache)]) == 0
    state_path = tmp_path / "work" / "run" / "state.json"
    summary = ["summary", "--toolchain", "cpu", "--out", str(out / "contract.json"), "--md", str(out / "contract.md")]
    assert driver.main([*summary, "--state", str(state_path)]) == 0, (out / "contract.md").read_text()
    rows = json.loads((out / "contract.json").read_text())["rows"]
    assert len(rows) == 20 and all(row["agrees"] for row in rows)
    table = (out / "contract.md").read_text()
    assert "20 of 20 branches as expected" in table
    assert "| contract_positional_n | scalar_first | - | refused | refused | yes |" in table
    assert "| contract_matmul_large_k | split_k_partials | yes | correct | correct | yes |" in table
    assert "| contract_hist_zero_init | clears_one_past | no | wrong | wrong | yes | dims " in table

    # The same state with one verdict flipped and one branch gone: both rows say NO, and the exit status says so.
    state = json.loads(state_path.read_text())
    branches = find_case(state, "contract_rows_cols")["toolchains"]["cpu"]["branches"]  # type: ignore[index]
    branches["baseline"]["correct"] = False
    del find_case(state, "contract_alloc_temp")["toolchains"]["cpu"]["branches"]["skips_last_copy"]  # type: ignore[index]
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(state))
    assert driver.main([*summary, "--state", str(edited)]) == 1
    table = (out / "contract.md").read_text()
    assert "18 of 20 branches as expected" in table
    assert "| contract_rows_cols | baseline | no | correct | wrong | NO |" in table
    assert "| contract_alloc_temp | skips_last_copy | - | wrong | missing | NO | not in state.json |" in table
    assert driver.main([*summary, "--state", str(tmp_path / "absent.json")]) == 2
