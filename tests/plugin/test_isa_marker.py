"""The `isa` mark end to end (pytester): pass, fail with an actionable message, inconclusive, spills, records.

Fixture cases: tests/data/cases/isa_vector_add (scalar baseline vs float4 / simd, judged on AMDGCN
and x86), isa_vector_add_sass (the same on SASS) and isa_spill (a HIP kernel forced to spill).
No GPU is needed.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import CASES, KERNELS
from tests.context import (
    skip_if_no_cuobjdump,
    skip_if_no_gxx,
    skip_if_no_hipcc,
    skip_if_no_llvm_objdump,
    skip_if_no_nvcc,
)

VADD = CASES / "isa_vector_add"
ONLY_ISA = ("-k", "test_isa", "-rs")


def isa_report(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "run" / "isa_check.json").read_text())


def branch_state(pytester: pytest.Pytester, case: str, toolchain: str) -> dict:
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    return state["cases"][case]["toolchains"][toolchain]["branches"]


def case_with_marks(tmp_path: Path, marks: str, name: str = "marked") -> Path:
    """The x86 half of isa_vector_add with ref.py's marks replaced."""
    case = tmp_path / name
    (case / "branches" / "simd").mkdir(parents=True)
    shutil.copy(VADD / "kernel.cpp", case / "kernel.cpp")
    shutil.copy(VADD / "branches" / "simd" / "kernel.cpp", case / "branches" / "simd" / "kernel.cpp")
    shutil.copy(VADD / "dims.json", case / "dims.json")
    (case / "ref.py").write_text(f"import pytest\n\n{marks}\n\n\ndef reference(a, b, c, N):\n    c.copy_(a + b)\n")
    return case


@skip_if_no_hipcc
@skip_if_no_llvm_objdump
def test_amdgcn_float4_passes_and_the_scalar_baseline_fails_with_what_it_found(run_plugin, pytester) -> None:
    result = run_plugin(VADD, args=("--dcuopt-toolchain=hip", "--dcuopt-arch=gfx90a", *ONLY_ISA))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*ISA check FAILED: isa_vector_add/hip/baseline on gfx90a (amdgcn)*",
        "*why: a and b must be read with 16-byte (float4) global loads*",
        "*scope: vadd_scalar (1 function(s),*",
        r"*FAIL require /\bglobal_load_dwordx4\b/ x2: required at least 2, found 0*",
        "*closest: global_load_dword x2 (e.g. vadd_scalar:*`global_load_dword v*",
        "*FAIL method memory.vectorized_global_access*",
        "*fix: The loads are scalar (4 bytes per lane): load float2/float4*",
    ])
    report = isa_report(pytester)
    outcomes = {c["branch"]: c["outcome"] for c in report["checks"]}
    assert outcomes == {"baseline": "fail", "float4": "pass"}
    float4 = next(c for c in report["checks"] if c["branch"] == "float4")
    assert float4["dump"]["family"] == "amdgcn" and "llvm-objdump" in float4["dump"]["tool"]
    assert any("global_load_dwordx4" in text for text in float4["dump"]["text"].values())
    assert float4["dump"]["resources"]
    branches = branch_state(pytester, "isa_vector_add", "hip")
    assert branches["float4"]["isa"]["outcome"] == "pass" and branches["baseline"]["isa"]["outcome"] == "fail"
    assert branches["float4"]["isa"]["arch"] == "gfx90a"
    summary = (pytester.path / "run" / "summary.md").read_text()
    assert "- ISA **baseline**: fail (amdgcn, gfx90a)" in summary
    assert "- ISA **float4**: pass (amdgcn, gfx90a)" in summary


@skip_if_no_nvcc
@skip_if_no_cuobjdump
def test_the_same_marks_check_sass(run_plugin, pytester) -> None:
    result = run_plugin(CASES / "isa_vector_add_sass", args=("--dcuopt-toolchain=cuda", *ONLY_ISA))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ISA check FAILED: isa_vector_add_sass/cuda/baseline on sm_90 (sass)*",
                                 r"*FAIL require /\bLDG\.E\.128\b/ x2: required at least 2, found 0*",
                                 "*closest: LDG.E x2*"])
    assert {c["branch"]: c["outcome"] for c in isa_report(pytester)["checks"]} == {"baseline": "fail", "float4": "pass"}


@skip_if_no_gxx
def test_the_same_marks_check_x86(run_plugin, pytester) -> None:
    result = run_plugin(VADD, args=("--dcuopt-toolchain=cpu", *ONLY_ISA))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*ISA check FAILED: isa_vector_add/cpu/baseline on the build machine "
                                 "(arch not recorded) (x86)*",
                                 r"*FAIL require /\bv?addps\b/: required at least 1, found 0*",
                                 "*closest: *addss*"])


@skip_if_no_hipcc
@skip_if_no_llvm_objdump
def test_the_spill_check_catches_a_kernel_forced_to_spill(run_plugin, pytester) -> None:
    result = run_plugin(CASES / "isa_spill", args=("--dcuopt-toolchain=hip", "--dcuopt-arch=gfx90a", *ONLY_ISA))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ISA check FAILED: isa_spill/hip/baseline on gfx90a (amdgcn)*",
                                 "*FAIL forbid /@scratch_traffic/: allowed 0, found *",
                                 "*found: spill_kernel:* `buffer_store_dword v*, off, s[*",
                                 "*FAIL resource max_spills <= 0: spill_kernel: * spills*"])
    spill = isa_report(pytester)["checks"][0]["dump"]["resources"]
    assert next(iter(spill.values()))["spills"] > 0


@skip_if_no_hipcc
@skip_if_no_llvm_objdump
def test_the_real_hip_vector_add_example_passes_its_16_byte_load_mark(run_plugin, pytester) -> None:
    result = run_plugin(KERNELS / "vector_add", args=("--dcuopt-toolchain=hip", "--dcuopt-arch=gfx90a", "-k",
                                                      "test_isa", "-v"))
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_isa_hip?hip_float4? PASSED*", "*test_isa_hip?hip_scalar? PASSED*"])


@skip_if_no_hipcc
def test_without_an_arch_or_device_the_hip_checks_skip_with_the_fix(run_plugin, monkeypatch) -> None:
    monkeypatch.delenv("DCUOPT_HIP_COMPILE_ARCH", raising=False)  # the pytest subprocess inherits os.environ
    result = run_plugin(VADD, args=("--dcuopt-toolchain=hip", *ONLY_ISA))
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no --dcuopt-arch and no ROCm/DTK device; pass --dcuopt-arch=gfx90a*"])


@skip_if_no_gxx
def test_inconclusive_skips_unless_strict(run_plugin, pytester, tmp_path: Path) -> None:
    marks = ('pytestmark = [pytest.mark.isa(family="x86", methods=["memory.coalesced_access"])]\n'
             'branch_marks = {"simd": [pytest.mark.isa(family="x86", max_registers=8, strict=True)]}')
    result = run_plugin(case_with_marks(tmp_path, marks), args=("--dcuopt-toolchain=cpu", *ONLY_ISA))
    result.assert_outcomes(skipped=1, failed=1)
    result.stdout.fnmatch_lines(["*ISA check inconclusive (not verified):*",
                                 "*?? * method memory.coalesced_access: no x86 instruction signature*"])
    result.stdout.fnmatch_lines(["*ISA check INCONCLUSIVE: marked/cpu/simd*",
                                 "*max_registers <= 8: registers unknown for "
                                 "*(the toolchain reports no resource usage)*"])
    assert {c["branch"]: c["outcome"] for c in isa_report(pytester)["checks"]} == \
        {"baseline": "inconclusive", "simd": "inconclusive"}


@skip_if_no_gxx
def test_marks_not_for_this_isa_make_no_test(run_plugin, tmp_path: Path) -> None:
    marks = 'pytestmark = [pytest.mark.isa(family="sass", require=["LDG"])]'
    result = run_plugin(case_with_marks(tmp_path, marks), args=("--dcuopt-toolchain=cpu", "--collect-only", "-q"))
    assert "test_isa_cpu" not in result.stdout.str()


@skip_if_no_gxx
def test_a_bad_mark_fails_its_test_quoting_the_key(run_plugin, tmp_path: Path) -> None:
    marks = 'branch_marks = {"simd": [pytest.mark.isa(family="x86", requires=["addps"])]}'
    result = run_plugin(case_with_marks(tmp_path, marks), args=("--dcuopt-toolchain=cpu", *ONLY_ISA))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*isa mark (ref.py branch_marks) can't have 'requires' keyword argument; allowed: *"])


def test_branch_marks_naming_no_branch_fail_the_case(run_plugin, tmp_path: Path) -> None:
    marks = 'branch_marks = {"simd4": [pytest.mark.isa(require=["addps"])]}'
    result = run_plugin(case_with_marks(tmp_path, marks), args=("--dcuopt-toolchain=cpu",))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*branch_marks names ?'simd4'?, which are not branches of this case*"])


def test_an_isa_mark_outside_a_kernel_case_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.isa(require=["v_add"])
        def test_plain():
            pass
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the isa mark applies to kernel cases only*"])


# A toolchain that is no part of pytest_dcuopt: C kernels built with `cc`, x86 code. It declares its ISA family and
# nothing about reading ISA; the family decides how its artifacts are read and which signatures they meet.
OUTSIDE_TOOLCHAIN = '''
import shutil, subprocess

from pytest_dcuopt.toolchains import Availability, Capability, Toolchain
from pytest_dcuopt.toolchains.cabi_binding import load_solve
from pytest_dcuopt.toolchains.build import Compiled, build_cached, run_compiler
from pytest_dcuopt.toolchains.cpu import CAbiLoaded
from pytest_dcuopt.toolchains.host_runtime import HostRuntime

FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC")


class CcToolchain(Toolchain):
    name = "cc"
    extensions = (".c",)
    isa_family = "x86"

    def availability(self):
        found = shutil.which("cc")
        if found is None:
            return Availability(Capability.UNAVAILABLE, "no cc on PATH")
        return Availability(Capability.RUN, found)

    def identity(self):
        return subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]

    def build(self, source, cache):
        flags = (*FLAGS, *self.extra_flags)
        key = cache.key(source, self.name, self.identity(), None, (*flags, "records:command.txt"))

        def compile_into(staging):
            result = run_compiler(["cc", *flags, "-o", staging / "kernel.so", source], source, timeout=300)
            return Compiled(result.command_line, result.stderr)

        return build_cached(self.name, source, cache, key, None, compile_into)

    def load(self, artifact, params):
        return CAbiLoaded(params, load_solve(artifact.path, params)[1])

    def runtime(self):
        return HostRuntime()
'''
SCALAR_C = ('__attribute__((optimize("no-tree-vectorize"))) void solve(const float* a, const float* b, float* c, '
            'int N) {\n    for (int i = 0; i < N; ++i) c[i] = a[i] + b[i];\n}\n')
PACKED_C = ("void solve(const float* restrict a, const float* restrict b, float* restrict c, int N) {\n"
            "#pragma omp simd\n    for (int i = 0; i < N; ++i) c[i] = a[i] + b[i];\n}\n")


def install_outside_toolchain(folder: Path) -> None:
    """`cc_toolchain.py` and a distribution's entry point naming it, on the path of the run (its working folder)."""
    (folder / "cc_toolchain.py").write_text(OUTSIDE_TOOLCHAIN)
    info = folder / "cc_toolchain-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cc-toolchain\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest_dcuopt.toolchains]\ncc = cc_toolchain:CcToolchain\n")


@skip_if_no_gxx
def test_a_toolchain_installed_from_outside_gets_its_isa_familys_checks(run_plugin, pytester, tmp_path) -> None:
    """An x86 toolchain the package has never heard of: its kernels are read as x86 and meet the x86 signatures."""
    install_outside_toolchain(pytester.path)
    case = tmp_path / "vadd_c"
    (case / "branches" / "simd").mkdir(parents=True)
    (case / "kernel.c").write_text(SCALAR_C)
    (case / "branches" / "simd" / "kernel.c").write_text(PACKED_C)
    shutil.copy(VADD / "dims.json", case / "dims.json")
    (case / "ref.py").write_text(
        "import pytest\n\npytestmark = [pytest.mark.isa(family='x86', require=[r'\\bv?addps\\b'], "
        "methods=['memory.vectorized_global_access'])]\n\n\ndef reference(a, b, c, N):\n    c.copy_(a + b)\n")
    result = run_plugin(case, args=("--dcuopt-toolchain=cc", "-k", "test_isa or test_correctness", "-rs"))
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*ISA check FAILED: vadd_c/cc/baseline on the build machine (arch not recorded) "
                                 "(x86)*",
                                 r"*FAIL require /\bv?addps\b/: required at least 1, found 0*",
                                 "*FAIL method memory.vectorized_global_access*"])
    checks = {c["branch"]: c for c in isa_report(pytester)["checks"]}
    assert {branch: c["outcome"] for branch, c in checks.items()} == {"baseline": "fail", "simd": "pass"}
    assert checks["simd"]["dump"]["family"] == "x86"
    assert any("addps" in text for text in checks["simd"]["dump"]["text"].values())
    assert "solve" in checks["simd"]["dump"]["text"] and "_init" not in checks["simd"]["dump"]["text"]
