"""The profile mark's `top` keyword: how many metrics are ranked (the seed's --ncu-num)."""
from __future__ import annotations

import pytest

from pytest_dcuopt.profile.spec import ProfileMarkError, ProfileSpec, merge_specs


def test_top_is_five_by_default_and_a_branch_mark_sets_it() -> None:
    case, branch = ProfileSpec.from_kwargs({}), ProfileSpec.from_kwargs({"top": 8})
    assert case.top == 5 and merge_specs([case, branch]).top == 8 and branch.to_json()["top"] == 8


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "5"])
def test_top_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ProfileMarkError, match=r"top=.* must be a positive integer"):
        ProfileSpec.from_kwargs({"top": bad})
