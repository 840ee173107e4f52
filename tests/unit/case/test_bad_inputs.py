"""Every bad input is answered with a CaseError that names the problem, the value and the fix.

Each case is written to a temporary folder and read the way the build stage reads it: load_case (dims.json and
the branch folders), load_reference (ref.py and its declarations), the C signature of each kernel, the binding to
the reference, and the buffers at the default dims. The rows of docs/reliability.md's table name these tests;
tests/plugin/test_bad_inputs.py runs a selection through pytest to show the session going on.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from pytest_dcuopt.case.buffers import check_fits_in_memory, resolve_shapes
from pytest_dcuopt.case.cabi import Param, parse_solve_signature
from pytest_dcuopt.case.model import load_case
from pytest_dcuopt.case.parameter_binding import bind_parameters
from pytest_dcuopt.case.ref_loader import load_reference
from pytest_dcuopt.check.reference_outputs import reference_outputs
from pytest_dcuopt.errors import CaseError
from pytest_dcuopt.report.records import BranchRecord
from pytest_dcuopt.toolchains import make_toolchain
from pytest_dcuopt.toolchains.binding import Snapshot
from pytest_dcuopt.variant import Variant

REF = '''shapes = {"x": ("N",), "y": ("N",)}
dim_ranges = {"N": (1, 64)}

def reference(x, y, N):
    y.copy_(2 * x)
'''
KERNEL = 'extern "C" void solve(const float* x, float* y, int N) { for (int i = 0; i < N; ++i) y[i] = 2 * x[i]; }\n'


def write_case(root: Path, ref: str = REF, dims: str | bytes = '{"N": 100}', kernel: str | bytes = KERNEL) -> Path:
    (root / "branches" / "ok").mkdir(parents=True)
    (root / "ref.py").write_text(ref)
    (root / "dims.json").write_bytes(dims.encode() if isinstance(dims, str) else dims)
    for source in (root / "kernel.cpp", root / "branches" / "ok" / "kernel.cpp"):
        source.write_bytes(kernel.encode() if isinstance(kernel, str) else kernel)
    return root


def read_as_the_build_does(root: Path) -> dict[str, tuple[int, ...]]:
    """Everything the build stage reads before compiling, for every branch; the baseline's buffers are returned."""
    case = load_case(root)
    reference = load_reference(case.ref_path, case.dims)
    shapes: dict[str, tuple[int, ...]] = {}
    for branch in reversed(case.branches):
        parsed = parse_solve_signature(branch.source.read_text(errors="replace"), str(branch.source))
        binding = bind_parameters(parsed, reference.function, case.dims, list(reference.initial), str(branch.source))
        shapes = resolve_shapes(binding.params, reference.shapes, case.dims, str(branch.source))
    return shapes


def ref_with(extra: str = "", old: str = "", new: str = "") -> str:
    return (REF.replace(old, new) if old else REF) + extra


# (id, how the case is written, what the error must say): each message names the value and the fix.
BAD_INPUTS: list[tuple[str, dict[str, str | bytes], str]] = [
    ("dims.json not JSON", {"dims": "{N: 100"}, r"dims.json is not valid JSON.*Write an object such as"),
    ("dims.json empty file", {"dims": ""}, r"dims.json is not valid JSON.*Write an object"),
    ("dims.json a list", {"dims": "[100]"}, r"must hold a non-empty JSON object of dims.*got \[100\]"),
    ("dims.json empty object", {"dims": "{}"}, r"non-empty JSON object.*got \{\}"),
    ("dims.json string value", {"dims": '{"N": "100"}'}, r"dim 'N' = '100' is not a number \(it is a str\)"),
    ("dims.json bool value", {"dims": '{"N": true}'}, r"dim 'N' = True is not a number \(it is a bool\)"),
    ("dims.json null value", {"dims": '{"N": null}'}, r"dim 'N' = None is not a number"),
    ("dims.json NaN", {"dims": '{"N": NaN}'}, r"dim 'N' = nan is not a finite number"),
    ("dims.json 1e400 (inf)", {"dims": '{"N": 1e400}'}, r"dim 'N' = inf is not a finite number"),
    ("dims.json beyond int64", {"dims": '{"N": 100000000000000000000000000000}'},
     r"does not fit a 64-bit integer.*Give the size you mean"),
    ("dims.json not UTF-8", {"dims": b'{"N": 100, "\xff": 1}'},
     r"dims.json is not UTF-8 text \(byte 0xff at offset 12\)"),
    ("dims.json negative size", {"dims": '{"N": -5}'}, r"N = -5 is negative, and a buffer cannot have a negative size"),
    ("dims.json zero size", {"dims": '{"N": 0}'}, r"is \(0,\) at the default dims \{'N': 0\}: an empty buffer"),
    ("dims.json fraction for an int parameter", {"dims": '{"N": 100.5}'},
     r"`int N` is an integer parameter, but its dim N = 100.5 is not a whole number"),
    ("dims.json above INT_MAX for `int N`", {"dims": '{"N": 3000000000}'},
     r"N = 3000000000 does not fit `int N` \(int32: -2147483648..2147483647\).*wider type"),
    ("dims.json beyond memory (int64_t N)",
     {"dims": '{"N": 100000000000000}',
      "kernel": KERNEL.replace("int N", "long long N").replace("int i", "long long i")},
     r"need about .* GiB .*more than this machine's .* of memory; nothing was allocated"),
    ("ref.py raises at import", {"ref": ref_with('raise RuntimeError("boom")\n')},
     r"importing .*ref.py raised RuntimeError: boom"),
    ("ref.py calls sys.exit at import", {"ref": ref_with("import sys\nsys.exit(3)\n")},
     r"called sys.exit\(3\), which would end the whole test session.*if __name__ == '__main__'"),
    ("ref.py syntax error", {"ref": ref_with("def broken(:\n")}, r"raised SyntaxError"),
    ("ref.py without reference", {"ref": ref_with(old="def reference", new="def not_reference")},
     r"defines no callable `reference\(\*\*kwargs\)`"),
    ("reference with other names", {"ref": ref_with(old="def reference(x, y, N)", new="def reference(a, b, c)")},
     r"`shapes` names \['x', 'y'\], which are not a parameter of reference\(a, b, c\)"),
    ("reference with too few parameters", {"ref": ref_with(old="shapes = {\"x\": (\"N\",), \"y\": (\"N\",)}",
                                                           new="shapes = {\"x\": (\"N\",)}").replace(
        "def reference(x, y, N)", "def reference(x, N)")},
     r"binding them by position does not fit.*solve has 3 parameters, reference 2"),
    ("shapes names an unknown dim", {"ref": ref_with(old='"x": ("N",)', new='"x": ("M",)')},
     r"shapes\['x'\]: `M` names 'M', which is not a dim \(dims: \['N'\]\)"),
    ("shapes expression with an unknown dim", {"ref": ref_with(old='"x": ("N",)', new='"x": ("N * K",)')},
     r"`N \* K` names 'K', which is not a dim"),
    ("shapes function raises", {"ref": ref_with(old='"x": ("N",)', new='"x": lambda N: (1 // 0,)')},
     r"`<lambda>\(N\)` raised ZeroDivisionError.*at dims \{'N': 100\}"),
    ("shapes names an unknown buffer", {"ref": ref_with('shapes["z"] = ("N",)\n')},
     r"`shapes` names \['z'\], which is not a parameter of reference\(x, y, N\)"),
    ("inputs: wrong arity", {"ref": ref_with('inputs = {"x": ("normal", 0)}\n')}, r"is not a value domain. Use"),
    ("inputs: unknown kind", {"ref": ref_with('inputs = {"x": ("gauss", 0, 1)}\n')}, r"is not a value domain"),
    ("inputs: uniform lo > hi", {"ref": ref_with('inputs = {"x": ("uniform", 1.0, 0.0)}\n')},
     r"is empty \(1 > 0\): lo must be <= hi"),
    ("inputs: int lo > hi", {"ref": ref_with('inputs = {"x": ("int", 5, 1)}\n')}, r"is empty \(5 > 1\)"),
    ("inputs: negative std", {"ref": ref_with('inputs = {"x": ("normal", 0.0, -1.0)}\n')},
     r"the standard deviation -1 is negative"),
    ("inputs: NaN bound", {"ref": ref_with('inputs = {"x": ("uniform", float("nan"), 1.0)}\n')},
     r"has a bound that is not a finite number"),
    ("inputs: infinite bound", {"ref": ref_with('inputs = {"x": ("uniform", 0.0, float("inf"))}\n')},
     r"has a bound that is not a finite number"),
    ("inputs: fractional int bounds", {"ref": ref_with('inputs = {"x": ("int", 0.5, 3.5)}\n')},
     r"draws integers, but the bounds \(0.5, 3.5\) are not whole numbers"),
    ("inputs: int bound beyond int64", {"ref": ref_with('inputs = {"x": ("int", 0, 10**30)}\n')},
     r"do not fit 64-bit integers"),
    ("inputs: unknown buffer", {"ref": ref_with('inputs = {"z": ("normal", 0.0, 1.0)}\n')},
     r"`inputs` names \['z'\], which is not a parameter of reference\(x, y, N\)"),
    ("dim_ranges multiple_of = 0", {"ref": ref_with(old="(1, 64)", new="(1, 64, 0)")},
     r"multiple_of = 0, but it must be an integer >= 1"),
    ("dim_ranges lo > hi", {"ref": ref_with(old="(1, 64)", new="(64, 1)")}, r"0 <= lo <= hi"),
    ("flops raises", {"ref": ref_with("def flops(N):\n    return 1 // 0\n")},
     r"`flops` raised ZeroDivisionError.*at dims \{'N': 100\}"),
    ("bytes_moved returns a string", {"ref": ref_with("def bytes_moved(N):\n    return 'many'\n")},
     r"`bytes_moved` returned 'many' at the default dims.*finite number >= 0"),
    ("shapes misses a pointer", {"ref": ref_with(old='"x": ("N",), ', new="")},
     r"`shapes` has no entry for pointer parameter 'x'.*Add e.g. shapes\['x'\] = \('N',\)"),
    ("shapes not a dict", {"ref": ref_with(old='shapes = {"x": ("N",), "y": ("N",)}', new='shapes = [("N",)]')},
     r"`shapes` must map pointer parameters to tuples.*got \[\('N',\)\]"),
    ("shapes entry a string, not a tuple", {"ref": ref_with(old='"x": ("N",)', new='"x": "N"')},
     r"`shapes` must map pointer parameters to tuples.*e.g. \{'x': \('N',\)\}"),
    ("shapes extent a float", {"ref": ref_with(old='"x": ("N",)', new='"x": (2.5,)')},
     r"shapes\['x'\]: 2.5 is a float; write an integer, a dim name"),
    ("shapes extent not an expression", {"ref": ref_with(old='"x": ("N",)', new='"x": ("N +",)')},
     r"shapes\['x'\]: `N \+` is not an expression"),
    ("inputs not a dict", {"ref": ref_with('inputs = [("normal", 0.0, 1.0)]\n')},
     r"`inputs` must be a dict parameter -> value domain"),
    ("inputs bound naming no dim", {"ref": ref_with('inputs = {"x": ("uniform", 0.0, "abc")}\n')},
     r"inputs\['x'\]: `abc` names 'abc', which is not a dim"),
    ("flops takes an unknown dim", {"ref": ref_with("def flops(M):\n    return 1.0\n")},
     r"`flops\(M\)` takes 'M', which is not in dims.json.*rename the parameter"),
    ("atol a string", {"ref": ref_with('atol = "1e-5"\n')}, r"`atol = '1e-5'` is a str.*e.g. `atol = 1e-5`"),
    ("relations the default dims break", {"ref": ref_with('relations = ["N % 64 == 0"]\n')},
     r"the default dims \{'N': 100\} break the declared relations.*Fix dims.json"),
    ("dim_ranges names an unknown dim", {"ref": ref_with(old='dim_ranges = {"N": (1, 64)}',
                                                          new='dim_ranges = {"M": (1, 64)}')},
     r"dim_ranges names \['M'\], which are not in dims.json"),
    ("dim_ranges float bound", {"ref": ref_with(old="(1, 64)", new="(1.5, 64)")},
     r"dim_ranges\['N'\]: 1.5 is a float; write an integer"),
    ("kernel without solve", {"kernel": 'extern "C" void other(const float* x, float* y, int N) {}\n'},
     r"no `solve\(` entry point found.*extern \"C\" void solve"),
    ("solve not extern C", {"kernel": "void solve(const float* x, float* y, int N) {}\n"},
     r"is not declared extern \"C\""),
    ("solve parameter list never closed", {"kernel": 'extern "C" void solve(const float* x, float* y, int N {}\n'},
     r"the parameter list of `solve\(` is never closed"),
    ("solve with an unknown type", {"kernel": 'extern "C" void solve(const float* x, float* y, Foo N) {}\n'},
     r"parameter 3 `Foo N` has type 'Foo', which the harness does not know"),
    ("solve with a pointer to pointer", {"kernel": 'extern "C" void solve(const float** x, float* y, int N) {}\n'},
     r"is a pointer to pointer; the harness passes flat buffers only"),
    ("solve with a C++ reference", {"kernel": 'extern "C" void solve(const float* x, float* y, int& N) {}\n'},
     r"is a C\+\+ reference"),
    ("solve with a non-UTF-8 byte in a name",
     {"kernel": b'extern "C" void solve(const float* x\xff, float* y, int N) {}'},
     r"cannot find the type and name of parameter 1"),
    ("solve with an unnamed parameter", {"kernel": 'extern "C" void solve(const float*, float* y, int N) {}\n'},
     r"parameter 1 `const float\*` has no name.*name every parameter"),
    ("dims.json beyond uint64", {"dims": '{"N": 100, "mask": 18446744073709551616}'},
     r"dim 'mask' = 18446744073709551616 does not fit a 64-bit integer"),
    ("kernel file of binary garbage", {"kernel": bytes(range(256)) * 4}, r"no `solve\(` entry point found"),
]


@pytest.mark.parametrize(("files", "message"), [pytest.param(files, message, id=name)
                                                 for name, files, message in BAD_INPUTS])
def test_a_bad_input_gets_a_case_error_naming_it(tmp_path: Path, files: dict[str, str | bytes], message: str) -> None:
    root = write_case(tmp_path / "case", **files)  # type: ignore[arg-type]
    with pytest.raises(CaseError) as raised:
        read_as_the_build_does(root)
    assert re.search(message, str(raised.value), re.S), str(raised.value)


HANDLED: list[tuple[str, dict[str, str | bytes]]] = [
    ("a non-UTF-8 comment in the kernel", {"kernel": b"// caf\xe9\n" + KERNEL.encode()}),
    ("a non-UTF-8 comment in ref.py", {"ref": REF + "# caf\xe9\n"}),
    ("dims.json with a float scalar", {"dims": '{"N": 100, "alpha": 0.5}'}),
    ("dims.json with a whole float for an int", {"dims": '{"N": 100.0}'}),
    ("a prototype with unnamed parameters before the definition",
     {"kernel": 'extern "C" void solve(const float*, float*, int);\n' + KERNEL}),
    ("a C++ overload in a namespace before the extern C solve",
     {"kernel": "namespace impl { void solve(const double* a, int n) {} }\n" + KERNEL}),
    ("extern C block around solve", {"kernel": 'extern "C" {\n' + KERNEL.replace('extern "C" ', "") + "}\n"}),
]


@pytest.mark.parametrize("files", [pytest.param(files, id=name) for name, files in HANDLED])
def test_inputs_that_are_fine_stay_fine(tmp_path: Path, files: dict[str, str | bytes]) -> None:
    root = write_case(tmp_path / "case", **files)  # type: ignore[arg-type]
    assert read_as_the_build_does(root) == {"x": (100,), "y": (100,)}


@pytest.mark.parametrize(("c_type", "message"), [("uint64_t", None), ("unsigned long long", None),
                                                 ("int64_t", r"does not fit `int64_t mask` \(int64: ")])
def test_a_64_bit_scalar_at_its_type_limit(tmp_path: Path, c_type: str, message: str | None) -> None:
    """2**64 - 1 is a uint64_t's greatest value (an all-ones mask): refused only where the parameter cannot hold it."""
    ref = ref_with(old="def reference(x, y, N)", new="def reference(x, y, N, mask)")
    kernel = KERNEL.replace("int N)", f"int N, {c_type} mask)")
    root = write_case(tmp_path / "case", ref=ref, dims='{"N": 100, "mask": 18446744073709551615}', kernel=kernel)
    if message is None:
        assert read_as_the_build_does(root) == {"x": (100,), "y": (100,)}
        return
    with pytest.raises(CaseError, match=message):
        read_as_the_build_does(root)


# ----- branch folders -----------------------------------------------------------------------------------------------
LayoutMaker = Callable[[Path], object]
LAYOUTS: list[tuple[str, LayoutMaker, str, str]] = [
    ("a branch folder with no file", lambda b: (b / "empty").mkdir(), "empty", r"holds no kernel file \(it is empty\)"),
    ("a branch folder with only a README", lambda b: ((b / "docs").mkdir(), (b / "docs" / "README.md").write_text("")),
     "docs", r"holds no kernel file \(it holds README.md\)"),
    ("a misspelled kernel file", lambda b: ((b / "typo").mkdir(), (b / "typo" / "kernal.cpp").write_text(KERNEL)),
     "typo", r"holds no kernel file \(it holds kernal.cpp\).*add or rename its source"),
    ("kernel.cpp that is a folder", lambda b: (b / "dir" / "kernel.cpp").mkdir(parents=True), "dir",
     r"kernel.cpp is a folder, not a source file"),
    ("a dangling kernel symlink", lambda b: ((b / "gone").mkdir(), (b / "gone" / "kernel.cpp").symlink_to("/no/k.cpp")),
     "gone", r"kernel.cpp is a symlink to /no/k.cpp, which does not exist"),
    ("a branch link to its own folder", lambda b: (b / "loop").symlink_to("."), "loop",
     r"branches/loop is a symlink to \. \(.*/branches\), a folder that holds the link itself.*remove the link"),
    ("a branch link to the cases folder", lambda b: (b / "up").symlink_to("../.."), "up",
     r"branches/up is a symlink to \.\./\.\. .*a folder that holds the link itself"),
]


@pytest.mark.parametrize(("make", "branch", "message"), [pytest.param(make, branch, message, id=name)
                                                         for name, make, branch, message in LAYOUTS])
def test_a_branch_folder_without_a_kernel_is_named(tmp_path: Path, make: LayoutMaker, branch: str,
                                                   message: str) -> None:
    root = write_case(tmp_path / "case")
    make(root / "branches")
    case = load_case(root)
    assert re.search(message, case.layout_problems[branch]), case.layout_problems
    assert [b.name for b in case.branches] == ["baseline", "ok"]  # the rest of the case is read as before


def test_branches_that_is_a_file_is_named(tmp_path: Path) -> None:
    root = tmp_path / "case"
    root.mkdir()
    for name, text in (("ref.py", REF), ("dims.json", '{"N": 8}'), ("kernel.cpp", KERNEL), ("branches", "")):
        (root / name).write_text(text)
    assert "is not a folder, so no branch is read" in load_case(root).layout_problems["branches"]


def test_a_kernel_linked_from_outside_the_case_is_said(tmp_path: Path) -> None:
    outside = tmp_path / "shared.cpp"
    outside.write_text(KERNEL)
    root = write_case(tmp_path / "case")
    (root / "branches" / "linked").mkdir()
    (root / "branches" / "linked" / "kernel.cpp").symlink_to(outside)
    case = load_case(root)
    assert case.outside_links == {root / "branches" / "linked" / "kernel.cpp": outside}
    assert "linked" in [b.name for b in case.branches] and not case.layout_problems


def test_the_memory_estimate_counts_every_buffer_and_its_check_copy() -> None:
    params = [Param("x", "float32", True, True, "const float* x"), Param("y", "float64", True, False, "double* y")]
    shapes = {"x": (1000,), "y": (1000,)}
    needed = (1000 + 1024) * (4 + 8) + (1000 + 1024) * (8 + 8)
    check_fits_in_memory(params, shapes, {"N": 1000}, "k.cpp", available=needed)
    with pytest.raises(CaseError, match=r"k.cpp: the buffers at dims \{'N': 1000\} need about"):
        check_fits_in_memory(params, shapes, {"N": 1000}, "k.cpp", available=needed - 1)


def test_ref_py_is_imported_without_writing_into_the_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bytecode caching on (as for most users): still nothing is written into a case directory."""
    monkeypatch.setattr("sys.dont_write_bytecode", False)
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    root = write_case(tmp_path / "case", ref=REF + "# unique: bytecode test\n")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    read_as_the_build_does(root)
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


def test_every_message_names_the_file(tmp_path: Path) -> None:
    """The whole-case errors carry the file's path, so a run over many cases says which one is broken."""
    for index, (name, files, _) in enumerate(BAD_INPUTS[:11]):
        root = write_case(tmp_path / f"case{index}", **files)  # type: ignore[arg-type]
        with pytest.raises(CaseError) as raised:
            read_as_the_build_does(root)
        assert str(root) in str(raised.value), (name, str(raised.value))


# ----- a seed run's state.json names the ref.py that collection imports -------------------------------------------
def seed_run(root: Path, ref_file: object) -> Path:
    """A case folder holding ref.py and a seed run `run_.../` whose state.json names `ref_file`."""
    (root / "ref.py").write_text(REF)
    run = root / "run_20260101_000000"
    (run / "baseline").mkdir(parents=True)
    (run / "baseline" / "kernel.cpp").write_text(KERNEL)
    (run / "state.json").write_text(json.dumps({"ref_file": ref_file, "dims": {"N": 100}}))
    return run


@pytest.mark.parametrize("where", ["absolute path elsewhere", "relative path climbing out", "symlink in the run"])
def test_a_seed_run_naming_a_ref_file_outside_the_run_is_refused_not_imported(tmp_path: Path, where: str) -> None:
    """Collecting a seed run imports the ref_file its state.json names: code outside the run must not be run."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = elsewhere / "ref.py"
    planted.write_text("raise SystemExit('planted code ran')\n")
    case = tmp_path / "case"
    case.mkdir()
    named: object = {"absolute path elsewhere": str(planted), "relative path climbing out": "../../elsewhere/ref.py",
                     "symlink in the run": "linked_ref.py"}[where]
    run = seed_run(case, named)
    if where == "symlink in the run":
        (run / "linked_ref.py").symlink_to(planted)
    with pytest.raises(CaseError, match=r"outside the run.*copy it into the run or to .*ref\.py") as caught:
        load_case(run)
    assert str(planted) in str(caught.value)


@pytest.mark.parametrize("named", ["ref.py in the run", "ref.py beside the run", None, 42])
def test_a_seed_run_reads_its_own_ref_file(tmp_path: Path, named: object) -> None:
    run = seed_run(tmp_path, {"ref.py in the run": "ref.py", "ref.py beside the run": str(tmp_path / "ref.py")}.get(
        str(named), named))
    (run / "ref.py").write_text(REF)
    if named == 42:
        with pytest.raises(CaseError, match="ref_file = 42 is not a path"):
            load_case(run)
        return
    case = load_case(run)
    expected = run / "ref.py" if named == "ref.py in the run" else tmp_path / "ref.py"
    assert case.ref_path.resolve() == expected.resolve()
    assert [b.name for b in case.branches] == ["baseline"]


def test_a_reference_that_returns_its_result_instead_of_writing_it_is_named(tmp_path: Path) -> None:
    """Before, the branch failed with "values differ ... reference=0.0", blamed on the kernel."""
    root = write_case(tmp_path / "case", ref=REF.replace("    y.copy_(2 * x)", "    return 2 * x"))
    case = load_case(root).for_toolchain("cpu")
    baseline = case.branches[0]
    variant = Variant(case, make_toolchain("cpu"), baseline, BranchRecord(case.name, "cpu", "baseline",
                                                                         str(baseline.source)))
    variant.reference = load_reference(root / "ref.py", case.dims)
    variant.params = parse_solve_signature(KERNEL)
    x = np.arange(1, 5, dtype=np.float32)
    snapshot = Snapshot({"x": x, "N": np.asarray(4)}, {"y": np.full(4, np.nan, np.float32)},
                        {"x": "float32", "y": "float32", "N": "int32"}, [])
    with pytest.raises(CaseError, match=r"returned a value \(Tensor\) and wrote nothing into its outputs \['y'\]"):
        reference_outputs(variant, snapshot, {"N": 4}, {"x": (4,), "y": (4,)})


# ----- what the reference writes -------------------------------------------------------------------------------------
def variant_for(root: Path) -> Variant:
    case = load_case(root).for_toolchain("cpu")
    baseline = case.branches[0]
    variant = Variant(case, make_toolchain("cpu"), baseline, BranchRecord(case.name, "cpu", "baseline",
                                                                         str(baseline.source)))
    variant.reference = load_reference(root / "ref.py", case.dims)
    variant.params = parse_solve_signature(KERNEL)
    return variant


def snapshot_of(x: np.ndarray, y: np.ndarray) -> Snapshot:
    return Snapshot({"x": x, "N": np.asarray(x.size)}, {"y": y}, {"x": "float32", "y": "float32", "N": "int32"}, [])


def test_a_reference_that_rebinds_its_output_is_named(tmp_path: Path) -> None:
    """`y = 2 * x` leaves the harness's `y` as given: before, the correct kernel was blamed (reference=0.0) and a
    kernel writing zeros passed."""
    root = write_case(tmp_path / "case", ref=REF.replace("    y.copy_(2 * x)", "    y = 2 * x"))
    x = np.arange(1, 5, dtype=np.float32)
    with pytest.raises(CaseError, match=r"reference wrote nothing to `y`: .*write in place \(`y.copy_\(...\)` or "
                                        r"`y\[:\] = ...`\)"):
        reference_outputs(variant_for(root), snapshot_of(x, np.full(4, np.nan, np.float32)), {"N": 4},
                          {"x": (4,), "y": (4,)})


@pytest.mark.parametrize("body", ["    y.zero_()", "    y.copy_(0 * x)", "    y[:2] = x[:2] * 0",
                                  "    if False:\n        y.copy_(x)\n    y.mul_(0)"])
def test_a_reference_whose_result_is_zeros_is_taken_as_written(tmp_path: Path, body: str) -> None:
    """Zeros written (or a result that is zero everywhere) are a result: no false alarm, and the zeros are
    what the kernel is compared with."""
    root = write_case(tmp_path / "case", ref=REF.replace("    y.copy_(2 * x)", body))
    x = np.arange(1, 5, dtype=np.float32)
    found = reference_outputs(variant_for(root), snapshot_of(x, np.full(4, np.nan, np.float32)), {"N": 4},
                              {"x": (4,), "y": (4,)})
    assert found["y"].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_an_in_out_buffer_the_reference_leaves_unchanged_is_not_an_alarm(tmp_path: Path) -> None:
    """An in/out buffer (declared in `inputs`) starts from its values: leaving it as it is can be the result."""
    ref = REF.replace("    y.copy_(2 * x)", "    pass") + 'inputs = {"y": ("uniform", 0.0, 0.0)}\n'
    root = write_case(tmp_path / "case", ref=ref)
    x, y = np.arange(1, 5, dtype=np.float32), np.zeros(4, np.float32)
    snapshot = Snapshot({"x": x, "y": y, "N": np.asarray(4)}, {"y": y.copy()},
                        {"x": "float32", "y": "float32", "N": "int32"}, [])
    assert reference_outputs(variant_for(root), snapshot, {"N": 4}, {"x": (4,), "y": (4,)})["y"].tolist() == [0] * 4


def test_zeros_under_an_empty_mask_are_a_result_once_the_reference_was_seen_writing(tmp_path: Path) -> None:
    """`y[x > 2] = x[x > 2]` into the zeros it is given: where no x exceeds 2 it writes nothing, and that is its
    result, since it wrote `y` at other inputs."""
    root = write_case(tmp_path / "case", ref=REF.replace("    y.copy_(2 * x)", "    y[x > 2] = x[x > 2]"))
    variant = variant_for(root)
    shapes = {"x": (4,), "y": (4,)}
    wrote = reference_outputs(variant, snapshot_of(np.arange(1, 5, dtype=np.float32), np.zeros(4, np.float32)),
                              {"N": 4}, shapes)
    assert wrote["y"].tolist() == [0, 0, 3, 4]
    empty = reference_outputs(variant, snapshot_of(np.ones(4, np.float32), np.zeros(4, np.float32)), {"N": 4}, shapes)
    assert empty["y"].tolist() == [0, 0, 0, 0]
