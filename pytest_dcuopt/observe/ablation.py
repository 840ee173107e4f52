"""The `ablation` marker: what each claimed optimization is worth, by building the branch without it.

    branch_marks = {"b2": [pytest.mark.ablation(methods={"latency.ilp_unroll": "-DDCUOPT_NO_UNROLL"})]}

For every method the branch is built once more with that method's compile-time switch (a toolchain made with
the extra flag; the build cache keys on flags, so nothing stale is reused), the ablated build is checked against
the reference at every boundary dims example (`check.verify.checked_call`: tails, tops of ranges), and then the
full branch and every ablated build are timed in alternating short rounds in their own workers
(`bench.run.measure`), so drift cancels. Per method: the slowdown when it is removed = ablated median / full
median, with an interval from the two medians' 95% confidence intervals. The interval wholly above
1 + min_effect (default 2%, the seed's noise threshold): the method helps; wholly below 1 - min_effect: the
branch is faster without it; otherwise "no measurable effect". An ablated build that fails to build or is wrong
is reported as such, never as proof that the method was essential.

`test_ablation_<toolchain>[<branch>]` fails only when the full branch itself cannot be measured (it does not
build or is wrong); per-method outcomes go to `record.observations["ablation"]` and `ablation.json`.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..bench.run import measure
from ..case.model import Branch
from ..check.compare import boundary_dims
from ..check.verify import checked_call
from ..errors import DcuOptError, ToolchainUnavailable
from ..options import Options
from ..report.records import BranchRecord
from ..timing.policy import Summary, TimingPolicy, summarize
from ..toolchains import make_toolchain
from ..toolchains.cache import BuildCache
from ..variant import BuildSettings, Variant, resolve

if TYPE_CHECKING:
    from ..toolchains.base import Toolchain
    from . import ObserverContext

ABLATION_MARKER = "ablation"
REPORT_NAME = "ablation.json"
REPORT_SCHEMA_VERSION = 1
ALLOWED_KEYWORDS = ("methods", "rounds", "min_effect", "reason")
DEFAULT_ROUNDS = 4
# The smallest slowdown that counts as an effect (the seed's 2% noise threshold): a precisely measured 1% change
# from code layout is no evidence that a method works.
DEFAULT_MIN_EFFECT = 0.02

HELPS = "helps"
HURTS = "hurts"
NO_EFFECT = "no measurable effect"
BUILD_FAILED = "build failed"
INCORRECT = "incorrect"


class AblationMarkError(DcuOptError):
    """An `ablation` mark whose keywords are missing or wrong."""


@dataclass(frozen=True)
class AblationSpec:
    """A validated `ablation` mark: method id -> compiler flags that remove it, and how many A/B rounds."""

    methods: dict[str, tuple[str, ...]]
    rounds: int = DEFAULT_ROUNDS
    min_effect: float = DEFAULT_MIN_EFFECT
    reason: str = ""

    @classmethod
    def from_mark(cls, mark: pytest.Mark) -> AblationSpec:
        if mark.args:
            raise AblationMarkError(f"ablation mark takes keywords only ({', '.join(ALLOWED_KEYWORDS)}); got "
                                    f"positional {mark.args!r}. Write pytest.mark.ablation(methods={{...}}).")
        unknown = sorted(set(mark.kwargs) - set(ALLOWED_KEYWORDS))
        if unknown:
            raise AblationMarkError(f"ablation mark: unknown keyword(s) {unknown}; allowed: {list(ALLOWED_KEYWORDS)}.")
        methods = mark.kwargs.get("methods")
        if not isinstance(methods, Mapping) or not methods:
            raise AblationMarkError(f"ablation mark: methods={methods!r} must be a non-empty dict "
                                    "{method id: flag or [flags]}, e.g. {'latency.ilp_unroll': '-DDCUOPT_NO_UNROLL'}.")
        parsed = {str(name): _flags(name, flags) for name, flags in methods.items()}
        rounds = mark.kwargs.get("rounds", DEFAULT_ROUNDS)
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise AblationMarkError(f"ablation mark: rounds={rounds!r} must be a positive integer (A/B rounds).")
        min_effect = mark.kwargs.get("min_effect", DEFAULT_MIN_EFFECT)
        if isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) or not 0 <= min_effect < 1:
            raise AblationMarkError(f"ablation mark: min_effect={min_effect!r} must be a fraction in [0, 1), e.g. "
                                    "0.02: a slowdown interval must clear 1 +/- this to count as an effect.")
        reason = mark.kwargs.get("reason", "")
        if not isinstance(reason, str):
            raise AblationMarkError(f"ablation mark: reason={reason!r} must be a string.")
        return cls(parsed, rounds, float(min_effect), reason)


def _flags(method: Any, value: Any) -> tuple[str, ...]:
    flags = (value,) if isinstance(value, str) else value
    if not isinstance(flags, (list, tuple)) or not flags or not all(isinstance(f, str) and f.strip() for f in flags):
        raise AblationMarkError(f"ablation mark: methods[{method!r}] = {value!r} must be a compiler flag such as "
                                "'-DDCUOPT_NO_UNROLL' (or a list of flags) that removes the method from the build.")
    return tuple(flags)


class AblationObserver:
    """The `ablation` marker: per method, build without it, check it, time it against the full branch."""

    name = "ablation"
    marker = ABLATION_MARKER
    report_name = REPORT_NAME

    def applies(self, toolchain: type[Toolchain], marks: Sequence[pytest.Mark]) -> bool:
        # Compile-time switches need a compiled kernel: the Python contract has no flags to set.
        return toolchain.c_abi and any(m.name == ABLATION_MARKER for m in marks)

    def observe(self, context: ObserverContext, variant: Variant, item: pytest.Item) -> None:
        try:
            specs = [AblationSpec.from_mark(m) for m in item.iter_markers(ABLATION_MARKER)]
        except AblationMarkError as exc:
            pytest.fail(str(exc), pytrace=False)
        methods = {name: flags for spec in reversed(specs) for name, flags in spec.methods.items()}
        rounds = max(spec.rounds for spec in specs)
        min_effect = min(spec.min_effect for spec in specs)
        options = Options.from_config(item.config)
        run_ablation(context, variant, methods, Rules(rounds, min_effect), options, item.nodeid)

    def write_report(self, path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
        from ..files import write_atomic

        ordered = sorted(entries, key=lambda e: (e["case"], e["toolchain"], e["branch"]))
        document = {"schema_version": REPORT_SCHEMA_VERSION, **dict(header), "ablations": ordered}
        write_atomic(path, json.dumps(document, indent=2, default=str) + "\n")


@dataclass(frozen=True)
class Rules:
    """How the ablation is measured and judged."""

    rounds: int = DEFAULT_ROUNDS
    min_effect: float = DEFAULT_MIN_EFFECT


def run_ablation(context: ObserverContext, variant: Variant, methods: Mapping[str, tuple[str, ...]], rules: Rules,
                 options: Options, nodeid: str) -> dict[str, Any]:
    """The test body: measure the full branch against each ablated build; record and report per method."""
    availability = context.availability(variant.toolchain.name)
    if not availability.can_run:
        pytest.skip(f"ablation needs to run kernels; the {variant.toolchain.name} toolchain cannot here: "
                    f"{availability.reason}")
    context.resolve(variant)
    if variant.setup_error is not None:
        pytest.fail(f"ablation of {variant.label}: the full branch does not build, so nothing can be attributed:\n"
                    f"{variant.setup_error}", pytrace=False)
    _check_full_branch(variant, nodeid)
    settings = BuildSettings(BuildCache(options.cache_dir), options.arch, options.extra_flags, options.log_dir,
                             options.timeout_s)
    ablated: dict[str, Variant] = {}
    outcomes: dict[str, dict[str, Any]] = {}
    try:
        for method, flags in methods.items():
            outcome, built = build_and_check(variant, method, flags, settings, nodeid)
            outcomes[method] = outcome
            if built is not None:
                ablated[method] = built
        samples = interleaved_samples(variant, ablated, rules.rounds, options.policy, options.timeout_s, outcomes)
    finally:
        for other in ablated.values():
            if other.worker is not None:
                other.worker.close()
    full = summarize(samples.pop(""))
    for method, seconds in samples.items():
        outcomes[method].update(attribution(full, summarize(seconds), rules.min_effect))
    result = {"full_median_ms": full.median_ms, "full_ci95_ms": list(full.ci95_ms), "rounds": rules.rounds,
              "min_effect": rules.min_effect, "methods": outcomes}
    variant.record.observations["ablation"] = result
    context.add_report(AblationObserver.name, {"case": variant.case.name, "toolchain": variant.toolchain.name,
                                               "branch": variant.branch.name, "source": variant.record.source,
                                               "nodeid": nodeid, **result})
    return result


def _check_full_branch(variant: Variant, nodeid: str) -> None:
    if variant.default_verified:
        return
    try:
        checked_call(variant, variant.case.dims, 0, nodeid)
    except (AssertionError, DcuOptError) as exc:
        pytest.fail(f"ablation of {variant.label}: the full branch is wrong at the default dims, so nothing can be "
                    f"attributed to its methods. Fix the branch first.\n{exc}", pytrace=False)
    variant.default_verified = True


def build_and_check(variant: Variant, method: str, flags: tuple[str, ...], settings: BuildSettings,
                    nodeid: str) -> tuple[dict[str, Any], Variant | None]:
    """The ablated build of one method, checked at the boundary dims: (its outcome so far, the variant or None)."""
    full = variant.toolchain
    try:
        toolchain = make_toolchain(full.name, full.arch, (*full.extra_flags, *flags))
    except (KeyError, TypeError) as exc:
        return {"flags": list(flags), "outcome": BUILD_FAILED, "message": str(exc)}, None
    name = f"{variant.branch.name}-without-{method}"
    record = BranchRecord(variant.case.name, full.name, name, variant.record.source)
    ablated = Variant(variant.case, toolchain, Branch(name, variant.branch.source), record)
    outcome: dict[str, Any] = {"flags": list(flags)}
    try:
        resolve(ablated, settings)
    except ToolchainUnavailable as exc:
        return {**outcome, "outcome": BUILD_FAILED, "message": str(exc)}, None
    if ablated.setup_error is not None:
        return {**outcome, "outcome": BUILD_FAILED, "message": str(ablated.setup_error)[-2000:]}, ablated
    if ablated.artifact is not None and variant.artifact is not None and ablated.artifact.key == variant.artifact.key:
        outcome["note"] = "the ablated build has the full branch's cache key: the flag changed nothing in the build"
    assert ablated.reference is not None
    for dims in boundary_dims(variant.case.dims, ablated.reference.dim_ranges):
        try:
            checked_call(ablated, dims, 0, f"{nodeid} (ablated: {method})")
        except (AssertionError, DcuOptError) as exc:
            return {**outcome, "outcome": INCORRECT, "dims": dims, "message": str(exc)[-2000:]}, ablated
    ablated.default_verified = True
    return outcome, ablated


def interleaved_samples(variant: Variant, ablated: Mapping[str, Variant], rounds: int, policy: TimingPolicy,
                        timeout_s: float, outcomes: dict[str, dict[str, Any]]) -> dict[str, list[float]]:
    """Samples of the full branch (key "") and of each correct ablated build, taken in alternating rounds."""
    short = replace(policy, max_time_s=policy.max_time_s / rounds, min_samples=3, min_time_s=0.0,
                    warmup_s=policy.warmup_s / rounds)
    timed = {method: other for method, other in ablated.items() if other.default_verified}
    samples: dict[str, list[float]] = {"": [], **{method: [] for method in timed}}
    for _ in range(rounds):
        try:
            samples[""] += measure(variant, short, timeout_s)["samples"].seconds
        except DcuOptError as exc:
            pytest.fail(f"ablation of {variant.label}: timing the full branch failed: {exc}", pytrace=False)
        for method, other in list(timed.items()):
            try:
                samples[method] += measure(other, short, timeout_s)["samples"].seconds
            except DcuOptError as exc:  # wrong timed calls, a crash or a hang: this build is out
                outcomes[method].update(outcome=INCORRECT, message=str(exc)[-2000:])
                del timed[method], samples[method]
    return samples


def attribution(full: Summary, ablated: Summary, min_effect: float = DEFAULT_MIN_EFFECT) -> dict[str, Any]:
    """The slowdown when the method is removed (ablated / full medians) with its interval, and the verdict:
    an effect only when the whole interval clears 1 by `min_effect` (beyond the noise and material)."""
    low = ablated.ci95_ms[0] / full.ci95_ms[1] if full.ci95_ms[1] > 0 else float("inf")
    high = ablated.ci95_ms[1] / full.ci95_ms[0] if full.ci95_ms[0] > 0 else float("inf")
    verdict = HELPS if low > 1 + min_effect else HURTS if high < 1 - min_effect else NO_EFFECT
    return {"outcome": verdict, "slowdown_when_removed": round(ablated.median_ms / full.median_ms, 4),
            "slowdown_interval": [round(low, 4), round(high, 4)], "ablated_median_ms": ablated.median_ms,
            "ablated_ci95_ms": list(ablated.ci95_ms)}
