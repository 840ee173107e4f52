"""Every bad input is answered, and the session goes on.

Black-box like test_correctness_checks.py: pytest runs in a subprocess on the fixture cases tests/data/cases/bad_* (each
broken in one way, see docs/reliability.md) beside a correct case, and the tests look at what it leaves: the
failing tests and their messages, the exit status, state.json and summary.md. No plugin crash (INTERNALERROR),
no raw traceback, the correct case still passes, and state.json names every broken case.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CASES, FAST

BAD_CASES = sorted(p for p in CASES.iterdir() if p.name.startswith("bad_"))
# test id -> what its failure must say (the problem, the value, the fix).
EXPECTED = {
    "bad_dims_not_json/ref.py::test_case_contract":
        r"bad_dims_not_json/dims.json is not valid JSON: .*Write an object such as",
    "bad_dims_non_utf8/ref.py::test_case_contract":
        r"bad_dims_non_utf8/dims.json is not UTF-8 text \(byte 0xff at offset 11\).*Save it as UTF-8",
    "bad_dims_negative/ref.py::test_correctness_cpu[baseline]":
        r"N = -5 is negative, and a buffer cannot have a negative size. Give dims.json",
    "bad_dims_over_int_max/ref.py::test_correctness_cpu[baseline]":
        r"N = 3000000000 does not fit `int N` \(int32: .*\).*wider type",
    "bad_ref_sys_exit/ref.py::test_correctness_cpu[baseline]":
        r"bad_ref_sys_exit/ref.py called sys.exit\(3\), which would end the whole test session",
    "bad_ref_signature/ref.py::test_correctness_cpu[baseline]":
        r"solve has 3 parameters, reference 2.*rename the parameters",
    "bad_shapes_unknown_dim/ref.py::test_correctness_cpu[baseline]":
        r"shapes\['x'\]: `M` names 'M', which is not a dim \(dims: \['N'\]\)",
    "bad_inputs_domain/ref.py::test_correctness_cpu[baseline]":
        r"inputs\['x'\] = \('normal', 0.0, -1.0\): the standard deviation -1 is negative",
    "bad_branches/ref.py::test_correctness_cpu[no_solve]": r"no_solve/kernel.cpp: no `solve\(` entry point found",
    "bad_branches/ref.py::test_correctness_cpu[unparsable]": r"`const float\*\* x` is a pointer to pointer",
    "bad_branches/ref.py::test_case_layout[no_kernel]":
        r"branches/no_kernel holds no kernel file \(it holds README.md\).*add or rename its source",
    "bad_branches/ref.py::test_case_layout[two]":
        r"branch 'two' has 2 source files for the cpu toolchain \(branches/two/kernel.cc, branches/two/kernel.cpp\)",
    "bad_dims_folder/ref.py::test_case_contract":
        r"bad_dims_folder/dims.json is a folder, not a file. Every case needs its default dims",
    "bad_dims_toolchain_undeclared/ref.py::test_case_contract":
        r"dims.cpu.json sets \['M'\], which dims.json does not declare \(\['N'\]\).*only change the defaults",
    "bad_dims_toolchain_not_json/ref.py::test_case_contract":
        r"bad_dims_toolchain_not_json/dims.cpu.json is not valid JSON: .*Write an object such as",
    "bad_ref_positional_only/ref.py::test_correctness_cpu[baseline]":
        r"reference\(\*\*kwargs\) raised TypeError: .*positional-only arguments passed as keyword arguments.*"
        r"It must accept the kernel's parameter names",
    "bad_ref_rebinds/ref.py::test_correctness_cpu[baseline]":
        r"bad_ref_rebinds/ref.py: reference wrote nothing to `y`: .*write in place "
        r"\(`y.copy_\(...\)` or `y\[:\] = ...`\)",
    "bad_ref_rebinds/ref.py::test_correctness_cpu[zeros]": r"bad_ref_rebinds/ref.py: reference wrote nothing to `y`",
    "bad_ref_raises/ref.py::test_correctness_cpu[baseline]":
        r"bad_ref_raises/ref.py: reference\(\*\*kwargs\) raised ValueError: nope \(kwargs: \['N', 'x', 'y'\], "
        r"dims \{'N': 64\}\)",
    "bad_shapes_too_small/ref.py::test_correctness_cpu[baseline]":
        r"reference\(\*\*kwargs\) raised RuntimeError: The size of tensor a \(90\) must match the size of tensor b "
        r"\(100\).*dims \{'N': 100\}",
    "bad_dim_ranges_huge/ref.py::test_correctness_cpu[baseline]":
        r"N = 1000000000000000 does not fit `int N` \(int32: .*\).*Lower the dim \(dims.json, dim_ranges\)",
    "bad_dim_ranges_huge/ref.py::test_correctness_cpu[wide]":
        r"the buffers at dims \{'N': 1000000000000000\} need about .* GiB .*more than this machine's .* of memory; "
        r"nothing was allocated.*upper bounds in `dim_ranges`",
    "bad_branch_marks_unknown/ref.py::test_case_contract":
        r"bad_branch_marks_unknown/ref.py: branch_marks names \['nope'\], which are not branches of this case "
        r"\(branches: \['baseline'\]\)",
    "bad_pytestmark_string/ref.py::test_case_contract":
        r"bad_pytestmark_string/ref.py: pytestmark: 'isa' is not a pytest mark; write e.g. \[pytest.mark.isa",
    "bad_kernel_files/ref.py::test_correctness_cpu[compile_error]":
        r"compiling .*branches/compile_error/kernel.cpp failed \(exit 1\).\ncommand: .*kernel.cpp\n"
        r".*error: expected primary-expression",
    "bad_kernel_files/ref.py::test_case_layout[rust_only]":
        r"bad_kernel_files: branch 'rust_only' has no source that a registered toolchain builds \(found kernel.rs;.*"
        r"Rename the file to its toolchain's suffix",
}


def failure_text(result: pytest.RunResult, test_id: str) -> str:
    """What pytest printed under the test's header in FAILURES (its name without the path)."""
    name = test_id.split("::")[1]
    lines = result.stdout.lines
    starts = [i for i, line in enumerate(lines) if line.startswith("_") and f" {name} " in line]
    sections = []
    for start in starts:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("___", "==="))), len(lines))
        sections.append("\n".join(lines[start + 1:end]))
    return "\n".join(sections)


def run_in(pytester: pytest.Pytester, cache: Path, *names: str, args: tuple[str, ...] = ()) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*names, f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, *args)


def state_of(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "run" / "state.json").read_text())


def test_every_bad_input_fails_its_own_test_with_the_fix_and_the_run_goes_on(pytester: pytest.Pytester,
                                                                           shared_build_cache: Path) -> None:
    for case in [*BAD_CASES, CASES / "signature_edge"]:
        shutil.copytree(case, pytester.path / case.name)
    result = run_in(pytester, shared_build_cache, *[c.name for c in BAD_CASES], "signature_edge",
                    args=("-k", "correctness or contract or layout", "--dcuopt-examples=3", "-rf"))
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    failed = {line.split(" ", 2)[1] for line in result.stdout.lines if line.startswith("FAILED ")}
    assert failed == set(EXPECTED), failed ^ set(EXPECTED)
    for test_id, message in EXPECTED.items():
        assert re.search(message, failure_text(result, test_id), re.S), (test_id, failure_text(result, test_id))
    passed = re.findall(r"(\d+) passed", output)
    # signature_edge (2), bad_branches' baseline and latin1 (non-UTF-8), bad_kernel_files' baseline
    assert passed and int(passed[-1]) == 5
    state = state_of(pytester)
    assert set(state["cases"]) >= {c.name for c in BAD_CASES} | {"signature_edge"}
    dims_error = state["cases"]["bad_dims_not_json"]["toolchains"]["cpu"]["branches"]["baseline"]["error"]
    assert dims_error["kind"] == "case error" and "is not valid JSON" in dims_error["message"]
    branches = state["cases"]["bad_branches"]["toolchains"]["cpu"]["branches"]
    assert "holds no kernel file" in branches["no_kernel"]["error"]["message"]
    assert "2 source files" in branches["two"]["error"]["message"]
    assert branches["latin1"]["correct"] is True
    for case, message in [("bad_dims_folder", "is a folder, not a file"),
                          ("bad_branch_marks_unknown", "branch_marks names"),
                          ("bad_pytestmark_string", "is not a pytest mark")]:
        record = state["cases"][case]["toolchains"]["cpu"]["branches"]["baseline"]
        assert record["error"]["kind"] == "case error" and message in record["error"]["message"], (case, record)
    built = state["cases"]["bad_kernel_files"]["toolchains"]["cpu"]["branches"]
    assert built["baseline"]["correct"] is True and "failed (exit 1)" in built["compile_error"]["error"]["message"]
    assert (pytester.path / "run" / "summary.md").is_file()


def test_a_keyboard_interrupt_raised_by_ref_py_stops_the_run_as_ctrl_c_and_state_json_is_written(
        pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    """`raise KeyboardInterrupt` in ref.py is the user's own Ctrl-C: pytest stops (exit status 2, no plugin crash),
    the case after it does not run, and the partial results still reach state.json and summary.md, marked
    interrupted as after a SIGINT."""
    case = pytester.path / "a_interrupting"
    shutil.copytree(CASES / "bad_ref_raises", case)
    (case / "ref.py").write_text("raise KeyboardInterrupt\n")
    shutil.copytree(CASES / "signature_edge", pytester.path / "signature_edge")
    result = run_in(pytester, shared_build_cache, "a_interrupting", "signature_edge",
                    args=("-k", "correctness", "--dcuopt-examples=3"))
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    assert "INTERNALERROR" not in output and re.search(r"a_interrupting/ref.py:1: KeyboardInterrupt", output), output
    assert not re.search(r"\d+ (passed|failed)", output), output
    state = state_of(pytester)
    assert state["exit_status"] == pytest.ExitCode.INTERRUPTED and state["interrupted"] == "KeyboardInterrupt"
    assert set(state["cases"]) == {"a_interrupting", "signature_edge"}
    assert state["cases"]["signature_edge"]["toolchains"]["cpu"]["branches"]["baseline"]["correct"] is None
    assert "interrupted by KeyboardInterrupt: the results below are partial" in output
    head = (pytester.path / "run" / "summary.md").read_text().splitlines()[:3]
    assert any(line.startswith("> **Interrupted by KeyboardInterrupt**") for line in head), head


def tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_mode, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def test_a_read_only_case_is_tested_and_nothing_is_written_into_it(pytester: pytest.Pytester,
                                                                  shared_build_cache: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The run dir and the cache are elsewhere: a read-only case works, and the harness writes nothing into it
    (not even ref.py's bytecode, with bytecode writing on as for most users)."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    case = pytester.path / "signature_edge"
    shutil.copytree(CASES / "signature_edge", case)
    for path in [*case.rglob("*"), case]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    before = tree(case)
    try:
        result = run_in(pytester, shared_build_cache, "signature_edge", args=("-k", "correctness",
                                                                                "--dcuopt-examples=3"))
        result.assert_outcomes(passed=2, deselected=2)
        assert tree(case) == before
        assert state_of(pytester)["cases"]["signature_edge"]["toolchains"]["cpu"]["branches"]["baseline"]["correct"]
    finally:
        for path in [case, *case.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_a_run_dir_that_cannot_be_written_is_said_with_the_fix(pytester: pytest.Pytester,
                                                               shared_build_cache: Path) -> None:
    """The tests pass; the results cannot be written: the run fails with one message that names the folder and the
    option to change, and no plugin crash."""
    shutil.copytree(CASES / "signature_edge", pytester.path / "signature_edge")
    (pytester.path / "afile").write_text("a file where the run dir's parent should be")
    result = pytester.runpytest_subprocess("signature_edge", f"--dcuopt-cache-dir={shared_build_cache}",
                                           f"--dcuopt-run-dir={pytester.path / 'afile' / 'run'}", *FAST,
                                           "-k", "correctness", "--dcuopt-examples=3")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    assert result.ret != pytest.ExitCode.OK
    assert re.search(r"state.json: NotWritable: cannot write .*afile/run/state.json: the folder .*afile/run cannot be "
                     r"created or written \(NotADirectoryError: Not a directory\).*--dcuopt-run-dir", output), output


# ----- names that are hard on Markdown and on shells ----------------------------------------------------------------
HOSTILE_BRANCHES = ["a|b", "t```s", "x'$(touch PWNED)'"]


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def test_hostile_branch_names_keep_summary_md_whole_and_reproduce_commands_runnable(
        pytester: pytest.Pytester, shared_build_cache: Path) -> None:
    """Branches named `a|b`, `t```s` and `x'$(touch PWNED)'` (all wrong) in a case folder named `it's a case`:
    summary.md's table keeps its columns and each failure (whose message holds the name) stays in its block; the
    printed reproduce command, run through bash as a user would paste it, runs that one test and nothing else."""
    case = pytester.path / "it's a case"
    shutil.copytree(CASES / "unwritten", case)
    wrong = case / "branches" / "skips_last"
    for name in HOSTILE_BRANCHES:
        shutil.copytree(wrong, case / "branches" / name)
    shutil.rmtree(wrong)
    result = run_in(pytester, shared_build_cache, "it's a case", args=("-k", "correctness", "--dcuopt-examples=3"))
    result.assert_outcomes(passed=1, failed=3, deselected=4)
    assert not (pytester.path / "PWNED").exists()

    lines = (pytester.path / "run" / "summary.md").read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| branch"))
    rows = [line for line in lines[head:head + 6]]
    assert all(line.startswith("|") for line in rows), rows
    assert {unescaped_pipes(line) for line in rows} == {unescaped_pipes(lines[head])}, rows
    fences = [line for line in lines if re.fullmatch(r"`{3,}", line)]
    assert len(fences) == 6 and fences.count("````") == 2, fences  # t```s's block is fenced with four
    spans = [line for line in lines if line.startswith("Reproduce: ")]
    assert len(spans) == 3 and any(line.startswith("Reproduce: ````") for line in spans), spans

    printed = [line.split("reproduce: ", 1)[1] for line in result.stdout.lines if "reproduce: " in line
               and "touch PWNED" in line]
    assert printed, result.stdout.str()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    rerun = subprocess.run(["bash", "-c", f"{printed[0]} -p no:cacheprovider"], cwd=pytester.path,
                           capture_output=True, text=True, env=env, timeout=300)
    assert not (pytester.path / "PWNED").exists(), "pasting the command ran what the branch name held"
    assert rerun.returncode == 1, rerun.stdout + rerun.stderr
    assert re.search(r"\b1 failed\b", rerun.stdout), rerun.stdout
    assert "x'$(touch PWNED)'" in rerun.stdout


def test_branch_links_that_loop_back_are_named_and_never_walked(pytester: pytest.Pytester,
                                                                 shared_build_cache: Path) -> None:
    """`branches/loop -> .` and `branches/up -> ../..` point at folders holding them: walking them (pytest's walk of
    the tree, or the case's branch walk) would not end. Each fails its case's layout test, naming the link; the
    case's other branches run."""
    case = pytester.path / "cases" / "signature_edge"
    shutil.copytree(CASES / "signature_edge", case)
    (case / "branches").mkdir(exist_ok=True)
    (case / "branches" / "loop").symlink_to(".")
    (case / "branches" / "up").symlink_to("../..")
    result = subprocess_run_with_limit(pytester, shared_build_cache, "cases", limit_s=120,
                                       args=("-k", "correctness or layout", "--dcuopt-examples=3", "-rf"))
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    failed = {line.split(" ", 2)[1] for line in result.stdout.lines if line.startswith("FAILED ")}
    assert failed == {"cases/signature_edge/ref.py::test_case_layout[loop]",
                      "cases/signature_edge/ref.py::test_case_layout[up]"}, output
    assert re.search(r"branches/loop is a symlink to \. \(.*\), a folder that holds the link itself", output), output
    assert re.search(r"branches/up is a symlink to \.\./\.\. \(.*\), a folder that holds the link itself", output)
    assert re.search(r"2 passed", output), output


def subprocess_run_with_limit(pytester: pytest.Pytester, cache: Path, *names: str, limit_s: float,
                              args: tuple[str, ...] = ()) -> pytest.RunResult:
    """`run_in` with a time limit: a hang fails the test instead of the suite."""
    return pytester.runpytest_subprocess(*names, f"--dcuopt-cache-dir={cache}",
                                         f"--dcuopt-run-dir={pytester.path / 'run'}", *FAST, *args, timeout=limit_s)
