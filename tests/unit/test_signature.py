from __future__ import annotations

import pytest

from pytest_dcuopt.case.cabi import parse_solve_signature
from pytest_dcuopt.errors import SignatureError


def names_and_kinds(source: str) -> list[tuple[str, str, bool, bool]]:
    return [(p.name, p.dtype, p.pointer, p.const) for p in parse_solve_signature(source)]


def test_the_seed_contract() -> None:
    src = 'extern "C" void solve(const float* x, float* y, int N) {}'
    assert names_and_kinds(src) == [("x", "float32", True, True), ("y", "float32", True, False),
                                    ("N", "int32", False, False)]


def test_forms_the_seed_regex_got_wrong() -> None:
    src = '''
    extern "C" void solve(const float* __restrict__ x,   /* input, restrict-qualified */
                          float *y,                     // pointer star next to the name
                          int constant_k,               // a name containing "const"
                          int64_t n, const __half* h, __hip_bfloat16* b, const double * __restrict d,
                          unsigned long long big, size_t count, float alpha)
    { }
    '''
    assert names_and_kinds(src) == [
        ("x", "float32", True, True), ("y", "float32", True, False), ("constant_k", "int32", False, False),
        ("n", "int64", False, False), ("h", "float16", True, True), ("b", "bfloat16", True, False),
        ("d", "float64", True, True), ("big", "uint64", False, False), ("count", "uint64", False, False),
        ("alpha", "float32", False, False),
    ]


def test_const_pointer_to_mutable_data_is_an_output() -> None:
    (param,) = parse_solve_signature('extern "C" void solve(float* const y) {}')
    assert param.pointer and not param.const


def test_extern_c_block_and_declaration_forms() -> None:
    src = 'extern "C" {\n__attribute__((visibility("default"))) void solve(const float* a, float* b, int n);\n}'
    assert [p.name for p in parse_solve_signature(src)] == ["a", "b", "n"]


@pytest.mark.parametrize(("source", "fragment"), [
    ('void solve(float* y, int n) {}', 'not declared extern "C"'),
    ('extern "C" void run(float* y) {}', "no `solve(` entry point"),
    ('extern "C" void solve(const float* x, std::complex<float>* y, int n) {}', "parameter 2"),
    ('extern "C" void solve(float** x, int n) {}', "pointer to pointer"),
    ('extern "C" void solve(float& x) {}', "C++ reference"),
    ('extern "C" void solve(const float* x, float* x) {}', "repeat"),
    ('extern "C" void solve(const float* x, int n = 3) {}', "default value"),
])
def test_errors_name_the_parameter_and_the_fix(source: str, fragment: str) -> None:
    with pytest.raises(SignatureError) as info:
        parse_solve_signature(source, "k.cpp")
    assert fragment in str(info.value)
    assert str(info.value).startswith("k.cpp")


def test_a_c_source_has_c_linkage_without_extern_c() -> None:
    """A `.c` file is compiled as C, which mangles no name; the same text in a C++ file needs `extern "C"`."""
    src = "void solve(const float* restrict a, float* restrict c, int N) {\n}\n"
    assert [(p.name, p.const) for p in parse_solve_signature(src, "kernel.c")] == [
        ("a", True), ("c", False), ("N", False)]
    with pytest.raises(SignatureError, match='not declared extern "C"'):
        parse_solve_signature(src, "kernel.cpp")
