"""--dcuopt-dims replays one example: a dim the collected case does not have is refused once collection has
finished, naming the case and its dims, instead of being ignored."""
from __future__ import annotations

from tests.conftest import CASES

CASE = CASES / "python_scale"  # dims.json: {"N": 256}


def test_a_dim_the_case_does_not_have_is_a_usage_error(run_plugin) -> None:
    result = run_plugin(CASE, args=('--dcuopt-dims={"M": 3}', "-k", "correctness"))
    assert result.ret == 4, result.outlines  # pytest's usage error
    result.stderr.fnmatch_lines(['*--dcuopt-dims={"M": 3}: the case *python_scale has no dim(s) M (its dims: N)*'])


def test_the_case_s_own_dim_replays(run_plugin) -> None:
    result = run_plugin(CASE, args=('--dcuopt-dims={"N": 3}', "-k", "correctness"))
    result.assert_outcomes(passed=1)
