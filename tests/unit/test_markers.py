"""Every marker the plugin declares: its `pytest --markers` line lists exactly the keywords its validator accepts."""
from __future__ import annotations

import re

import pytest

from pytest_dcuopt import markers
from pytest_dcuopt.isa import spec as isa_spec
from pytest_dcuopt.observe.ablation import AblationMarkError, AblationSpec
from pytest_dcuopt.profile import spec as profile_spec


def listed(marker: str) -> list[str]:
    """The keywords of `marker(k1=, k2=...)` at the head of its help line."""
    head = re.match(rf"{marker}\((.*?)\):", markers.MARKERS[marker])
    assert head is not None, f"the {marker} help line starts with {marker}(keywords): {markers.MARKERS[marker]!r}"
    return re.findall(r"(\w+)=", head.group(1))


@pytest.mark.parametrize(("marker", "accepted"), [
    (markers.ISA_MARKER, isa_spec.ALLOWED),
    (markers.PROFILE_MARKER, profile_spec.ALLOWED),
    (markers.ABLATION_MARKER, markers.ABLATION_KEYWORDS),
])
def test_the_help_line_lists_what_the_validator_accepts(marker: str, accepted: tuple[str, ...]) -> None:
    assert sorted(listed(marker)) == sorted(accepted)


def test_the_ablation_validator_accepts_every_listed_keyword_and_nothing_else() -> None:
    given = {"methods": {"a": "-DA"}, "rounds": 4, "max_rounds": 8, "min_effect": 0.02, "negligible": 0.1,
             "reason": "why"}
    assert sorted(given) == sorted(listed(markers.ABLATION_MARKER))
    spec = AblationSpec.from_mark(pytest.mark.ablation(**given).mark)
    assert (spec.max_rounds, spec.min_effect, spec.negligible) == (8, 0.02, 0.1)
    with pytest.raises(AblationMarkError, match=r"unknown keyword\(s\) \['min_efect'\]; allowed: \['methods'"):
        AblationSpec.from_mark(pytest.mark.ablation(methods={"a": "-DA"}, min_efect=0.02).mark)
