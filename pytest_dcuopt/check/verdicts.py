"""The one writer of a branch's verdicts: `Variant.verdicts` (what this process's checks found) and the record's
`correct` (what state.json says and the gate and the champion read). Every other module reads them;
tests/unit/test_architecture.py holds that no module outside check/ assigns either.
"""
from __future__ import annotations

from dataclasses import replace

from ..variant import Variant


def found_correct(variant: Variant) -> None:
    """The correctness test found no wrong result (its boundary dims, input sets and Hypothesis examples)."""
    variant.record.correct = True


def found_incorrect(variant: Variant) -> None:
    """A check found the branch wrong (a wrong result, a crash, a hang, a timing not believed): neither timed nor
    ranked, whatever it measured before. The caller keeps why in the record (`failure` or `error`)."""
    variant.verdicts = replace(variant.verdicts, failed_correctness=True)
    variant.record.correct = False


def verified_default(variant: Variant) -> None:
    """A checked call at the default dims, seed 0, passed in this process: the call `before_timing.verify_default`
    makes, so a benchmark or an A/B of this branch does not make it again."""
    variant.verdicts = replace(variant.verdicts, default_verified=True)


def checked_boundary(variant: Variant) -> None:
    """The boundary dims were checked before timing (pass or fail), once for every benchmark size of the branch."""
    variant.verdicts = replace(variant.verdicts, boundary_checked=True)
