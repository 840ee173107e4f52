"""Every loader of user files and every parser of tool output, fuzzed (Hypothesis).

Only the project's own error types may escape (a `DcuOptError`, or another exception class defined in
pytest_dcuopt, such as the profile parsers' `PmcFormatError`); anything else (a KeyError, a UnicodeDecodeError, an
AttributeError on a list where a dict was expected) would reach the user as a raw traceback or an INTERNALERROR.
The gate's baseline loader answers a bad --dcuopt-compare file with pytest's UsageError, which is allowed there.

The number of examples comes from $DCUOPT_FUZZ_PROFILE (`ci`: 60 per test, `long`: 10,000;
`tests/fuzz_settings.py`). Inputs are random text or bytes, and recorded files cut, duplicated and garbled
line by line, so the parsers are reached past their first line.
"""
from __future__ import annotations

import json
import tempfile
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_dcuopt.case import marks, model, ref_loader
from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.cli.layout import RunLayout, load_state
from pytest_dcuopt.isa import signature_registry as signatures
from pytest_dcuopt.profile import hipprof, ncu, perf, rocprof
from tests.fuzz_settings import fuzz_settings
from tests.unit.profile.hipprof_stats import parse_stats_csv

DATA = Path(__file__).parents[1] / "data"
PROFILES = DATA / "profile"
CASES = DATA / "cases"
FUZZ = fuzz_settings()


def allowed(exc: BaseException, extra: tuple[type[BaseException], ...] = ()) -> bool:
    """The project's own error types (and `extra`) may escape a loader; nothing else."""
    return isinstance(exc, extra) or type(exc).__module__.split(".")[0] == "pytest_dcuopt"


def only_own_errors(call: Callable[[], Any], extra: tuple[type[BaseException], ...] = ()) -> Any:
    try:
        return call()
    except Exception as exc:
        if not allowed(exc, extra):
            raise AssertionError(f"{type(exc).__name__} escaped: {exc}") from exc
        assert str(exc), f"{type(exc).__name__} escaped without a message"
        return None


# ----- strategies -------------------------------------------------------------------------------------------------
@st.composite
def mangled(draw: st.DrawFn, samples: tuple[str, ...]) -> str:
    """A real sample cut at a random line, with random lines dropped, duplicated, garbled or cut short."""
    lines = draw(st.sampled_from(samples)).splitlines(keepends=True)
    lines = lines[: draw(st.integers(0, len(lines)))]
    for _ in range(draw(st.integers(0, 6))):
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "dup", "garble", "cut", "cell"]))
        if action == "drop":
            del lines[index]
        elif action == "dup":
            lines.insert(index, lines[index])
        elif action == "garble":
            lines[index] = draw(st.text(max_size=60)) + "\n"
        elif action == "cut":
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))]
        else:  # one comma-separated cell replaced: numbers become words, names become numbers
            cells = lines[index].split(",")
            cells[draw(st.integers(0, len(cells) - 1))] = draw(st.sampled_from(
                ["", "nan", "-1", "1e999", "abc", '"', "n/a", "<not supported>", "0x10", "\uff11"]))
            lines[index] = ",".join(cells)
    return "".join(lines)


def texts_like(*names: str) -> st.SearchStrategy[str]:
    samples = tuple((PROFILES / name).read_text() for name in names)
    return st.one_of(st.text(max_size=300), mangled(samples))


SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.sampled_from(["N", "M", "N*2", "N +", "x", "normal", "int", "uniform", "zeros",
                                                     "poison", "K // 0", "2**64"]))
JSON_SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                | st.text(max_size=12))


def nested(leaves: st.SearchStrategy[Any], tuples: bool = False) -> st.SearchStrategy[Any]:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        options = st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6) | st.sampled_from(
            ["N", "x", "y", "dims", "ref_file", "methods", "families", "pattern_sets"]), children, max_size=4)
        return options | st.lists(children, max_size=4).map(tuple) if tuples else options

    return st.recursive(leaves, extend, max_leaves=12)


JSON_VALUES = nested(JSON_SCALARS)


def json_bytes() -> st.SearchStrategy[bytes]:
    """Bytes a user might leave in a JSON file: random bytes, random JSON, JSON with a byte garbled."""
    documents = JSON_VALUES.map(lambda value: json.dumps(value).encode())

    @st.composite
    def garbled(draw: st.DrawFn) -> bytes:
        blob = bytearray(draw(documents))
        if blob:
            blob[draw(st.integers(0, len(blob) - 1))] = draw(st.integers(0, 255))
        return bytes(blob)

    return st.one_of(st.binary(max_size=200), documents, garbled(),
                     st.sampled_from([b"", b"{", b"[]", b"{}", b'{"N": NaN}', b'{"N": 1e400}', b"\xff\xfe{}"]))


@contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dcuopt-fuzz-") as folder:
        yield Path(folder)


# ----- parsers of tool output -------------------------------------------------------------------------------------
@FUZZ
@given(text=texts_like("hipprof_pmc_read_gfx936_recorded.txt", "rocprof_v1_copy_kernel.csv"),
       units=st.none() | st.integers(0, 256))
def test_hipprof_pmc_csv(text: str, units: int | None) -> None:
    rows = only_own_errors(lambda: hipprof.parse_pmc_csv(text, "fuzz.csv"))
    if rows:
        only_own_errors(lambda: hipprof.normalize(rows, units))
        only_own_errors(lambda: hipprof.join_by_dispatch({"a": rows, "b": rows[::-1]}))


@FUZZ
@given(text=texts_like("hipprof_gfx936.hipkernel.csv"))
def test_hipprof_stats_csv(text: str) -> None:
    only_own_errors(lambda: parse_stats_csv(text))


@FUZZ
@given(text=texts_like("rocprofv3_counter_collection.csv"))
def test_rocprofv3_counter_collection_csv(text: str) -> None:
    rows = only_own_errors(lambda: rocprof.parse_counter_collection(text, "fuzz.csv"))
    if rows:
        only_own_errors(lambda: hipprof.normalize(rows, 80))


@FUZZ
@given(text=texts_like("ncu_details_h200_vadd4.csv"))
def test_ncu_csv(text: str) -> None:
    rows = only_own_errors(lambda: ncu.parse_ncu_csv(text, "fuzz.csv"))
    if rows:
        only_own_errors(lambda: ncu.normalize(rows))


@FUZZ
@given(text=texts_like("perf_stat_vm_no_pmu.csv"), wall=st.none() | st.floats(allow_nan=True))
def test_perf_stat_csv(text: str, wall: float | None) -> None:
    stat = only_own_errors(lambda: perf.parse_perf_stat(text))
    if stat is not None:
        only_own_errors(lambda: perf.normalize(stat, wall))
        only_own_errors(lambda: perf.as_row(stat))


# ----- loaders of user files --------------------------------------------------------------------------------------
KERNELS = tuple(path.read_text(errors="replace") for path in sorted(CASES.glob("*/kernel.cpp"))[:12])
SIGNATURE_PIECES = st.sampled_from(['extern "C"', "void", "solve", "(", ")", ",", "const", "float*", "float *",
                                    "double", "int", "N", "x", "y", "__restrict__", "&", "**", "/*", "*/", "//",
                                    "\n", "{", "}", "template<int B>", "unsigned long long", "int64_t", "Foo", " "])


@FUZZ
@given(source=st.one_of(st.text(max_size=200), mangled(KERNELS),
                        st.lists(SIGNATURE_PIECES, max_size=30).map(" ".join)))
def test_c_signatures(source: str) -> None:
    only_own_errors(lambda: parse_solve_signature(source, "fuzz.cpp"))


@FUZZ
@given(blob=json_bytes())
def test_dims_json(blob: bytes) -> None:
    with scratch() as folder:
        (folder / "dims.json").write_bytes(blob)
        (folder / "dims.cpu.json").write_bytes(blob[::-1])
        dims = only_own_errors(lambda: model.load_dims(folder / "dims.json"))
        if dims is not None:
            only_own_errors(lambda: model.load_toolchain_dims(folder, dims))


# ref.py's declarations: a module holding drawn values (and a few callables) is what `import_ref_module` returns.
DECLARATIONS = ("shapes", "dim_ranges", "inputs", "initial", "atol", "rtol", "relations", "reduction", "rtol_scale",
                "flops", "bytes_moved")
CALLABLES = st.sampled_from([lambda N: N * 2.0, lambda N: "many", lambda N: 1 / 0, lambda M: M, lambda: 1.0,
                             lambda N: float("nan"), lambda *args: -1, lambda N: (N,), lambda N: N // 0])
DECLARED = nested(SCALARS | CALLABLES, tuples=True)
DIMS = st.dictionaries(st.sampled_from(["N", "M", "K"]), st.integers(-4, 5000) | st.floats(0.5, 10.0),
                       min_size=1, max_size=3)


def reference_module(values: dict[str, Any]) -> types.ModuleType:
    module = types.ModuleType("fuzzed_ref")

    def reference_function(x: Any, y: Any, N: Any) -> None:
        """The case's reference (never called at load)."""

    module.reference = reference_function  # type: ignore[attr-defined]
    for name, value in values.items():
        setattr(module, name, value)
    return module


@contextmanager
def ref_file_holding(module: types.ModuleType, text: str = "# fuzzed declarations\n") -> Iterator[Path]:
    """A ref.py on disk whose import yields `module` (the import cache is keyed by path and modification time)."""
    with scratch() as folder:
        path = folder / "ref.py"
        path.write_text(text)
        key = (path.resolve(), path.stat().st_mtime_ns)
        ref_loader._REF_MODULES[key] = module
        try:
            yield path
        finally:
            ref_loader._REF_MODULES.pop(key, None)


@FUZZ
@given(values=st.dictionaries(st.sampled_from(DECLARATIONS), DECLARED, max_size=5), dims=DIMS)
def test_ref_py_declarations(values: dict[str, Any], dims: dict[str, Any]) -> None:
    with ref_file_holding(reference_module(values)) as path:
        only_own_errors(lambda: ref_loader.load_reference(path, dims))


MARK_VALUES = nested(SCALARS | st.sampled_from([pytest.mark.slow, pytest.mark.isa(require=["x"]),
                                                pytest.mark.skip(reason="r"), pytest.mark.xfail]), tuples=True)


@FUZZ
@given(pytestmark=st.none() | MARK_VALUES, branch_marks=st.none() | MARK_VALUES
       | st.dictionaries(st.sampled_from(["baseline", "b1", "nope", ""]), MARK_VALUES, max_size=3))
def test_marks(pytestmark: Any, branch_marks: Any) -> None:
    values = {"pytestmark": pytestmark, "branch_marks": branch_marks}
    module = reference_module({k: v for k, v in values.items() if v is not None})
    with ref_file_holding(module, "pytestmark = branch_marks = None\n") as path:
        only_own_errors(lambda: marks.read_case_marks(path, ["baseline", "b1"]))


REGISTRY = json.loads(signatures.DEFAULT_PATH.read_text())


@st.composite
def registry_documents(draw: st.DrawFn) -> bytes:
    """The shipped registry with one entry replaced by a drawn value, or any JSON, or bytes."""
    kind = draw(st.integers(0, 2))
    if kind == 0:
        return draw(json_bytes())
    document = json.loads(json.dumps(REGISTRY))
    node: Any = document
    for _ in range(draw(st.integers(1, 4))):
        if not isinstance(node, (dict, list)) or not node:
            break
        keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()) or not isinstance(node[key], (dict, list)):
            node[key] = draw(JSON_VALUES | st.sampled_from(["(", "[a-", "\\", "(?P<x", "*"]))
            break
        node = node[key]
    return json.dumps(document).encode()


@FUZZ
@given(blob=registry_documents())
def test_the_signature_registry(blob: bytes) -> None:
    with scratch() as folder:
        path = folder / signatures.SIGNATURES_NAME
        path.write_bytes(blob)
        only_own_errors(lambda: signatures.load(path))


SEED_STATE = {"ref_file": "ref.py", "dims": {"N": 64}}


@st.composite
def seed_runs(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """A seed run's state.json (the usual keys with drawn values, or any JSON or bytes) and the paths in its tree."""
    if draw(st.booleans()):
        state = {**SEED_STATE, **draw(st.dictionaries(st.sampled_from(["ref_file", "dims", "best_file"]),
                                                      JSON_VALUES | st.sampled_from(["/etc/passwd", "../ref.py", ""]),
                                                      max_size=2))}
        blob = json.dumps(state).encode()
    else:
        blob = draw(json_bytes())
    names = st.sampled_from(["baseline/kernel.cpp", "baseline/x.cu", "baseline/notes.txt",
                             "iterv1/branches/b1/kernel.cpp", "iterv/branches/b1/kernel.cpp",
                             "iterv2x/branches/b/kernel.cc", "iterv1/branches/b2/kernel.so", "iterv1/branches",
                             "ref.py"])
    return blob, draw(st.lists(names, max_size=5))


@FUZZ
@given(run=seed_runs())
def test_seed_run_layouts(run: tuple[bytes, list[str]]) -> None:
    blob, paths = run
    with scratch() as folder:
        (folder / "ref.py").write_text("def reference(x, y, N):\n    y.copy_(x)\n")
        directory = folder / "run_20260101_000000"
        (directory / "baseline").mkdir(parents=True)
        (directory / "state.json").write_bytes(blob)
        for relative in paths:  # a path below one that is already a file is left out
            target = directory / relative
            if not any(parent.is_file() for parent in target.parents) and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text('extern "C" void solve(const float* x, float* y, int N) {}\n')
        case = only_own_errors(lambda: model.load_case(directory))
        if case is not None:
            assert case.ref_path.resolve().is_relative_to(folder.resolve())


@FUZZ
@given(blob=json_bytes() | JSON_VALUES.map(lambda v: json.dumps({"layout_version": 1, "x": v}).encode()))
def test_loop_state_files(blob: bytes) -> None:
    with scratch() as folder:
        (folder / "state.json").write_bytes(blob)
        only_own_errors(lambda: load_state(RunLayout(folder)))


@FUZZ
@given(blob=json_bytes() | JSON_VALUES.map(lambda v: json.dumps({"schema_version": 1, "cases": v}).encode()))
def test_baseline_state_files_for_the_gate(blob: bytes) -> None:
    from pytest_dcuopt.gate.baseline import Baseline

    with scratch() as folder:
        (folder / "state.json").write_bytes(blob)
        only_own_errors(lambda: Baseline.load(folder / "state.json"), extra=(pytest.UsageError,))


def test_the_fuzz_profiles_are_the_documented_sizes() -> None:
    from tests.fuzz_settings import FUZZ_EXAMPLES

    assert FUZZ_EXAMPLES == {"ci": 60, "long": 10_000}
    assert FUZZ.max_examples in FUZZ_EXAMPLES.values()
