"""What this run selected: the branch a generated test covers, the usage checks of --dcuopt-sizes and --dcuopt-dims
against the collected cases, and what on the command line (or what cut the run short) made it partial."""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .case.sizes import ALL
from .collect import TestId, declared_dims, declared_sizes
from .errors import DcuOptError
from .option_declarations import DIMS_OPTION, SIZES_OPTION
from .options import Options

if TYPE_CHECKING:
    from .session_view import SessionView
    from .variant import Variant


def branch_of(item: pytest.Item) -> tuple[Path, str, str] | None:
    """(case folder, toolchain, branch) of a kernel case's generated test of one branch; None for any other test."""
    test = TestId.of_item(item)
    return None if test is None else (item.path.parent, test.toolchain, test.branch)


def built_by(session: SessionView, items: Sequence[pytest.Item]) -> list[Variant]:
    """The variants the selected tests will build here, once each, in the tests' order."""
    found = (_variant_or_none(session, item) for item in items)
    return list({id(v): v for v in found if v is not None}.values())


def _variant_or_none(session: SessionView, item: pytest.Item) -> Variant | None:
    try:
        return _variant_for(session, item)
    except (DcuOptError, OSError):  # a case that cannot load: its own tests report it, nothing is pre-built
        return None


def _variant_for(session: SessionView, item: pytest.Item) -> Variant | None:
    """The variant a selected generated test builds, when its toolchain can do what that test needs here."""
    test = TestId.of_item(item)
    if test is None:
        return None
    timed, checks = test.kind == "benchmark", test.kind == "correctness"
    config = session.config
    if timed and config.getoption("benchmark_skip", False):
        return None  # pytest-benchmark skips it
    if checks and config.getoption("benchmark_only", False):
        return None
    availability = session.availability(test.toolchain)
    if not (availability.can_run if timed or checks else availability.can_build):
        return None  # the test skips without building (or cannot build at all)
    return session.branch_variant(item.path.parent, test.toolchain, test.branch)


def check_size_selection(config: pytest.Config, options: Options, collected_cases: int) -> None:
    """--dcuopt-sizes may only name sizes that a collected case declares for a selected toolchain: anything else
    is a usage error naming the sizes there are (checked once collection has finished)."""
    picked = options.bench_sizes
    if ALL in picked or not collected_cases:
        return
    known = declared_sizes(config)
    unknown = [name for name in picked if name not in known]
    if not unknown:
        return
    if not known:
        raise pytest.UsageError(f"{SIZES_OPTION}={','.join(picked)}: no collected case declares benchmark sizes "
                                "(ref.py `bench_sizes`), so there is nothing to pick; leave the option out to time "
                                "every case at its default dims.")
    listed = "; ".join(f"{name} ({', '.join(groups)})" for name, groups in known.items())
    raise pytest.UsageError(f"{SIZES_OPTION}: unknown benchmark size(s) {', '.join(unknown)}; the collected cases "
                            f"declare: {listed}. Give some of these, or `all`.")


def check_replay_dims(config: pytest.Config, options: Options) -> None:
    """--dcuopt-dims may only name dims every collected case has: a name a case lacks would be replayed as if
    it meant something there (checked once collection has finished)."""
    wanted = options.replay_dims
    if not wanted:
        return
    for root, names in declared_dims(config).items():
        unknown = sorted(set(wanted) - names)
        if unknown:
            raise pytest.UsageError(
                f"{DIMS_OPTION}={json.dumps(wanted)}: the case {root} has no dim(s) {', '.join(unknown)} "
                f"(its dims: {', '.join(sorted(names)) or 'none'}), so the replay would not be the example you "
                "mean. Name only dims of dims.json, or select only the case these dims belong to (the failure's "
                "`reproduce:` command names its test).")


def run_selection(config: pytest.Config) -> list[str]:
    """What on the command line picked part of the collected tests ([] when nothing did). Two runs with the same
    selection ran the same tests, so one can be the other's gate baseline."""
    option = config.option
    keyword, markexpr = getattr(option, "keyword", ""), getattr(option, "markexpr", "")
    chosen = [why for given, why in (
        (keyword, f"-k {keyword!r}"),
        (markexpr, f"-m {markexpr!r}"),
        (getattr(option, "deselect", None), "--deselect"),
        (getattr(option, "lf", False), "--lf (the last failures only)"),
        (getattr(option, "stepwise", False), "--sw (stepwise)"),
        (ALL not in config.getoption(SIZES_OPTION), f"{SIZES_OPTION} (some benchmark sizes)"),
    ) if given]
    named = [arg for arg in config.args if "::" in arg]
    if named:
        more = ", ..." if len(named) > 3 else ""
        chosen.append(f"test ids named on the command line ({', '.join(named[:3])}{more})")
    return chosen


def partial_because(config: pytest.Config, deselected: int, stopped_early: str | None,
                    interrupted: str | None) -> list[str]:
    """Why this run did not run every test it collected, at every benchmark size, to the end ([] for a complete
    run): its selection (`run_selection`), and what cut it short or left timings out."""
    option = config.option
    reasons = run_selection(config)
    if deselected and not reasons:  # by another plugin
        reasons.append(f"{deselected} tests deselected")
    reasons += [why for given, why in (
        (getattr(option, "collectonly", False), "--collect-only (nothing ran)"),
        (getattr(option, "benchmark_skip", False), "--benchmark-skip (nothing timed)"),
        (getattr(option, "benchmark_disable", False), "--benchmark-disable (nothing timed)"),
        (interrupted, f"interrupted by {interrupted}"),
        (stopped_early, f"stopped early ({stopped_early})"),
    ) if given]
    return reasons


def case_group(session: SessionView, item: pytest.Item) -> tuple[str, str] | None:
    """(case name, toolchain) of a kernel case's generated test; None for any other test."""
    marker = item.get_closest_marker("dcuopt")
    if marker is None or "toolchain" not in marker.kwargs:
        return None
    try:
        return session.case(item.path.parent).name, str(marker.kwargs["toolchain"])
    except (DcuOptError, OSError):
        return None
