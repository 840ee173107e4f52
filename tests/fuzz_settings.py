"""Hypothesis settings of the project's own fuzz tests (every parser of tool output and every loader of user files):
`dcuopt-fuzz-ci` (the short one CI runs) and `dcuopt-fuzz-long` (at least 10,000 examples per parser), chosen by
$DCUOPT_FUZZ_PROFILE (`ci`, the default, or `long`); see docs/reliability.md."""
from __future__ import annotations

import os
from typing import Any

FUZZ_PROFILE_ENV = "DCUOPT_FUZZ_PROFILE"
FUZZ_EXAMPLES = {"ci": 60, "long": 10_000}


def register_fuzz_profiles() -> None:
    from hypothesis import HealthCheck, settings

    for name, examples in FUZZ_EXAMPLES.items():
        # No example database: a long run must not leave examples behind that change what CI draws.
        settings.register_profile(f"dcuopt-fuzz-{name}", max_examples=examples, deadline=None, database=None,
                                  suppress_health_check=list(HealthCheck), print_blob=True)


def fuzz_settings() -> Any:
    """The settings of a fuzz test: the profile $DCUOPT_FUZZ_PROFILE names (`ci` when unset)."""
    from hypothesis import settings

    chosen = os.environ.get(FUZZ_PROFILE_ENV, "").strip() or "ci"
    if chosen not in FUZZ_EXAMPLES:
        raise ValueError(f"${FUZZ_PROFILE_ENV}={chosen!r} is not a fuzz profile; use one of {sorted(FUZZ_EXAMPLES)} "
                         f"(ci: {FUZZ_EXAMPLES['ci']} examples per parser, long: {FUZZ_EXAMPLES['long']})")
    register_fuzz_profiles()
    return settings(settings.get_profile(f"dcuopt-fuzz-{chosen}"))
