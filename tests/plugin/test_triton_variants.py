"""Triton config and hint variants as branches of their own, in a whole run (pytester), with no GPU.

Fixture case: tests/data/cases/triton_hints. Its kernel reads each row from a stride it does not specialise on;
the bare branch cannot prove a row starts on 16 bytes, `@hinted` says so with `tl.multiple_of`,
`@hinted_no_buffer_ops` is `@hinted` with AMDGCN_USE_BUFFER_OPS=0, and `@rejected` asks for a conversion gfx90a
does not provide. `--dcuopt-arch gfx90a` makes the run compile-probe every variant for gfx90a and check the
ISA marks on gfx90a's AMDGCN, while the kernels themselves run in Triton's interpreter.
"""
from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from tests.conftest import CASES

_MISSING = [name for name in ("triton", "torch") if importlib.util.find_spec(name) is None]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"{' and '.join(_MISSING)} not installed: "
                                "`pip install -r scripts/requirements.txt` (pins triton==3.9.0, torch==2.13.0)")

CASE = CASES / "triton_hints"


def branches(pytester: pytest.Pytester) -> dict[str, Any]:
    state = json.loads((pytester.path / "run" / "state.json").read_text())
    return state["cases"]["triton_hints"]["toolchains"]["triton"]["branches"]


def test_hint_variants_are_branches_judged_by_isa_marks_and_a_rejected_one_is_unavailable(
        run_plugin, pytester: pytest.Pytester) -> None:
    result = run_plugin(CASE, args=("--dcuopt-toolchain=triton", "--dcuopt-arch=gfx90a", "-rs",
                                    "-k", "test_correctness or test_isa"))
    # correctness: baseline, @hinted, @hinted_no_buffer_ops pass, @rejected skips; isa: the bare branch fails the
    # 16-byte-load mark that @hinted passes, and @hinted_no_buffer_ops has 16-byte global loads.
    result.assert_outcomes(passed=5, failed=1, skipped=1, deselected=4)
    result.stdout.fnmatch_lines([
        "*ISA check FAILED: triton_hints/triton/baseline on gfx90a (amdgcn)*",
        r"*FAIL require /\bbuffer_load_dwordx4\b/: required at least 1, found 0*",
        "*closest: buffer_load_dword x*",
    ])
    result.stdout.fnmatch_lines(["*SKIPPED*unavailable: variant 'rejected' of *kernel.triton.py is unavailable on "
                                 "hip:gfx90a: the compiler rejected it (triton.compiler.errors.CompilationError: "
                                 "at *target doesn't provide conversion for this type.)*"])
    assert "test_isa_triton[baseline@hinted]" not in "\n".join(line for line in result.stdout.lines if "FAIL" in line)
    found = branches(pytester)
    assert found["baseline"]["isa"]["outcome"] == "fail" and found["baseline@hinted"]["isa"]["outcome"] == "pass"
    assert found["baseline@hinted_no_buffer_ops"]["isa"]["outcome"] == "pass"
    assert all(found[name]["correct"] is True for name in ("baseline", "baseline@hinted",
                                                           "baseline@hinted_no_buffer_ops"))

    rejected = found["baseline@rejected"]
    assert rejected["correct"] is None and rejected["skipped"].startswith("unavailable: ")
    assert rejected["failure"] is None and rejected["error"] is None  # never a failed branch
    probe = rejected["build"]["details"]["probe"]
    assert probe["outcome"] == "rejected" and probe["target"] == "hip:gfx90a"
    assert "target doesn't provide conversion for this type" in probe["reason"]
    assert rejected["build"]["details"]["variant"]["options"] == {"FP8": True}

    hinted = found["baseline@hinted"]["build"]["details"]
    assert hinted["variant"] == {"name": "hinted", "options": {"HINTS": True}, "env": {}, "origin": "variants"}
    assert hinted["probe"]["outcome"] == "compiled" and hinted["probe"]["kernels"][0]["num_warps"] == 4
    assert hinted["probe"]["kernels"][0]["spills"] == 0
    assert found["baseline@hinted_no_buffer_ops"]["build"]["details"]["env"]["AMDGCN_USE_BUFFER_OPS"] == "0"
    assert "details" not in found["baseline"]["build"]  # the bare branch: solve's defaults, no probe
