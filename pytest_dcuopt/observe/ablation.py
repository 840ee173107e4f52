"""The `ablation` marker: what each claimed optimization is worth, by building the branch without it.

    branch_marks = {"b2": [pytest.mark.ablation(methods={"latency.ilp_unroll": "-DDCUOPT_NO_UNROLL"})]}

For every method the branch is built once more with that method's compile-time switch (a toolchain made with the extra
flag; the build cache keys on flags, so nothing stale is reused), the ablated build is checked against the reference at
every boundary dims example (`check.before_timing.check_ablated_build`: tails, tops of ranges), and then the full
branch and every ablated build are timed in alternating short rounds in their own workers (`bench.run.measure`, each
reply checked by `check.checked_calls.TIMING_REPLY_CHECK`), so drift cancels. Per method and round: the ratio of the
ablated build's median to the full branch's median in that round. The rounds are the replicates (samples inside one
round share the machine's momentary load, so pooling them as independent would make the interval far too narrow): the
slowdown when the method is removed is the geometric mean of the paired ratios, with a 95% Student-t interval on their
logarithms. The interval wholly above 1 + min_effect (default 2%, the seed's noise threshold): the method helps; wholly
below 1 - min_effect: the branch is faster without it; wholly inside 1 +/- negligible (default 10%): "no measurable
effect" (whatever the method is worth, it is less than that); anything else is "inconclusive" (the interval holds both
an effect and none). Rounds go on past `rounds` while a method is inconclusive, up to `max_rounds`: a large effect
measured on a noisy machine is not called ineffective for want of rounds. An ablated build that fails to build or is
wrong is reported as such, never as proof that the method was essential.

`test_ablation_<toolchain>[<branch>]` fails only when the full branch itself cannot be measured (it does not
build or is wrong); per-method outcomes go to `record.observations["ablation"]` and `ablation.json`.
"""
from __future__ import annotations

import itertools
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..bench.run import measure
from ..case.model import Branch
from ..check.before_timing import check_ablated_build, verify_default
from ..check.checked_calls import TIMING_REPLY_CHECK
from ..context import require_built
from ..errors import DcuOptError, ToolchainUnavailable
from ..markers import ABLATION_KEYWORDS, ABLATION_MARKER
from ..report.records import BranchRecord
from ..timing.policy import TimingPolicy, summarize
from ..variant import BuildSettings, Variant, resolve

if TYPE_CHECKING:
    from ..context import RunContext
    from ..toolchains.base import Toolchain

REPORT_NAME = "ablation.json"
REPORT_SCHEMA_VERSION = 1
DEFAULT_ROUNDS = 4
DEFAULT_MAX_ROUNDS = 12  # three times the minimum: a round costs max_time / rounds, so at most 3x the time
MIN_ROUNDS = 2  # a paired interval needs the spread of at least two rounds' ratios
# Pairwise interactions are estimated when a mark claims 2 to this many methods (n(n-1)/2 extra builds).
MAX_INTERACTION_METHODS = 4
PAIR_JOIN = " + "
# The smallest slowdown that counts as an effect (the seed's 2% noise threshold): a precisely measured 1% change
# from code layout is no evidence that a method works.
DEFAULT_MIN_EFFECT = 0.02
# "No measurable effect" is a claim too: the whole interval must lie within 1 +/- this (a method worth 10% or more
# is never called ineffective); an interval wider than that around 1 is inconclusive.
DEFAULT_NEGLIGIBLE = 0.10

HELPS = "helps"
HURTS = "hurts"
NO_EFFECT = "no measurable effect"
INCONCLUSIVE = "inconclusive"
BUILD_FAILED = "build failed"
INCORRECT = "incorrect"
SYNERGY, REDUNDANT, INDEPENDENT = "synergy", "redundant", "independent"


class AblationMarkError(DcuOptError):
    """An `ablation` mark whose keywords are missing or wrong."""


@dataclass(frozen=True)
class AblationSpec:
    """A validated `ablation` mark: method id -> compiler flags that remove it, and how many A/B rounds."""

    methods: dict[str, tuple[str, ...]]
    rounds: int = DEFAULT_ROUNDS
    min_effect: float = DEFAULT_MIN_EFFECT
    reason: str = ""
    max_rounds: int = DEFAULT_MAX_ROUNDS
    negligible: float = DEFAULT_NEGLIGIBLE

    @classmethod
    def from_mark(cls, mark: pytest.Mark) -> AblationSpec:
        if mark.args:
            raise AblationMarkError(f"ablation mark takes keywords only ({', '.join(ABLATION_KEYWORDS)}); got "
                                    f"positional {mark.args!r}. Write pytest.mark.ablation(methods={{...}}).")
        unknown = sorted(set(mark.kwargs) - set(ABLATION_KEYWORDS))
        if unknown:
            raise AblationMarkError(f"ablation mark: unknown keyword(s) {unknown}; allowed: {list(ABLATION_KEYWORDS)}.")
        methods = mark.kwargs.get("methods")
        if not isinstance(methods, Mapping) or not methods:
            raise AblationMarkError(f"ablation mark: methods={methods!r} must be a non-empty dict "
                                    "{method id: flag or [flags]}, e.g. {'latency.ilp_unroll': '-DDCUOPT_NO_UNROLL'}.")
        parsed = {str(name): _flags(name, flags) for name, flags in methods.items()}
        rounds = mark.kwargs.get("rounds", DEFAULT_ROUNDS)
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < MIN_ROUNDS:
            raise AblationMarkError(f"ablation mark: rounds={rounds!r} must be an integer >= {MIN_ROUNDS} (A/B rounds: "
                                    "the slowdown's interval comes from the spread of the rounds' paired ratios).")
        min_effect = mark.kwargs.get("min_effect", DEFAULT_MIN_EFFECT)
        if isinstance(min_effect, bool) or not isinstance(min_effect, (int, float)) or not 0 <= min_effect < 1:
            raise AblationMarkError(f"ablation mark: min_effect={min_effect!r} must be a fraction in [0, 1), e.g. "
                                    "0.02: a slowdown interval must clear 1 +/- this to count as an effect.")
        reason = mark.kwargs.get("reason", "")
        if not isinstance(reason, str):
            raise AblationMarkError(f"ablation mark: reason={reason!r} must be a string.")
        max_rounds = mark.kwargs.get("max_rounds", max(rounds, DEFAULT_MAX_ROUNDS))
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < rounds:
            raise AblationMarkError(f"ablation mark: max_rounds={max_rounds!r} must be an integer >= rounds "
                                    f"({rounds}): rounds go on past `rounds` while a method is inconclusive, up to "
                                    "this cap.")
        negligible = mark.kwargs.get("negligible", DEFAULT_NEGLIGIBLE)
        if isinstance(negligible, bool) or not isinstance(negligible, (int, float)) or not min_effect <= negligible < 1:
            raise AblationMarkError(f"ablation mark: negligible={negligible!r} must be a fraction in [min_effect, 1), "
                                    "e.g. 0.1: an interval within 1 +/- this is 'no measurable effect'.")
        return cls(parsed, rounds, float(min_effect), reason, max_rounds, float(negligible))


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
    measures = True

    def applies(self, toolchain: type[Toolchain], marks: Sequence[pytest.Mark]) -> bool:
        # Compile-time switches need a compiled kernel: the Python contract has no flags to set.
        return toolchain.c_abi and any(m.name == ABLATION_MARKER for m in marks)

    def observe(self, context: RunContext, variant: Variant, item: pytest.Item) -> None:
        try:
            specs = [AblationSpec.from_mark(m) for m in item.iter_markers(ABLATION_MARKER)]
        except AblationMarkError as exc:
            pytest.fail(str(exc), pytrace=False)
        methods = {name: flags for spec in reversed(specs) for name, flags in spec.methods.items()}
        rounds = max(spec.rounds for spec in specs)
        rules = Rules(rounds, min(spec.min_effect for spec in specs), max(rounds, *(s.max_rounds for s in specs)),
                      min(spec.negligible for spec in specs))
        run_ablation(context, variant, methods, rules, item.nodeid)

    def write_report(self, path: Path, entries: Sequence[Mapping[str, Any]], header: Mapping[str, Any]) -> None:
        from ..files import write_atomic

        ordered = sorted(entries, key=lambda e: (e["case"], e["toolchain"], e["branch"]))
        document = {"schema_version": REPORT_SCHEMA_VERSION, **dict(header), "ablations": ordered}
        write_atomic(path, json.dumps(document, indent=2, default=str) + "\n")


@dataclass(frozen=True)
class Rules:
    """How the ablation is measured and judged: at least `rounds` rounds, more while a method is inconclusive, up to
    `max_rounds`."""

    rounds: int = DEFAULT_ROUNDS
    min_effect: float = DEFAULT_MIN_EFFECT
    max_rounds: int = DEFAULT_MAX_ROUNDS
    negligible: float = DEFAULT_NEGLIGIBLE

    def verdict(self, low: float, high: float) -> str:
        """The outcome of a slowdown interval [low, high] (see the module docstring)."""
        if low > 1 + self.min_effect:
            return HELPS
        if high < 1 - self.min_effect:
            return HURTS
        if 1 - self.negligible <= low and high <= 1 + self.negligible:
            return NO_EFFECT
        return INCONCLUSIVE


def run_ablation(context: RunContext, variant: Variant, methods: Mapping[str, tuple[str, ...]], rules: Rules,
                 nodeid: str) -> dict[str, Any]:
    """The test body: measure the full branch against each ablated build; record and report per method. The ablated
    builds take the run's build settings (cache, devices, host lock, calibrations, spare workers)."""
    require_built(context, variant, runs_kernel=True,
                  failing=f"ablation of {variant.label}: the full branch does not build, so nothing can be "
                          "attributed:\n")
    _check_full_branch(variant, nodeid)
    options, settings = context.options, context.build_settings()
    ablated: dict[str, Variant] = {}
    outcomes: dict[str, dict[str, Any]] = {}
    pairs = method_pairs(methods)
    try:
        for name, flags in {**methods, **pairs}.items():
            outcome, built = build_and_check(variant, name, flags, settings, nodeid)
            outcomes[name] = outcome
            if built is not None:
                ablated[name] = built
        samples = interleaved_samples(variant, ablated, rules, options.policy, options.timeout_s, outcomes,
                                      singles=tuple(methods))
    finally:
        for other in ablated.values():
            if other.worker is not None:
                other.worker.close()
    full_rounds = samples.pop("")
    full = summarize([s for one in full_rounds for s in one])
    for name, rounds in samples.items():
        outcomes[name].update(attribution(full_rounds, rounds, rules))
    for name in pairs:
        first, second = name.split(PAIR_JOIN)
        if all(n in samples for n in (first, second, name)):
            outcomes[name].update(interaction(full_rounds, samples[first], samples[second], samples[name],
                                              rules.min_effect))
    result = {"full_median_ms": full.median_ms, "full_ci95_ms": list(full.ci95_ms), "rounds": len(full_rounds),
              "min_rounds": rules.rounds, "max_rounds": rules.max_rounds, "min_effect": rules.min_effect,
              "negligible": rules.negligible, "methods": {m: outcomes[m] for m in methods},
              "interactions": {pair: outcomes[pair] for pair in pairs}}
    variant.record.observations["ablation"] = result
    context.add_report(AblationObserver.name, {"case": variant.case.name, "toolchain": variant.toolchain.name,
                                               "branch": variant.branch.name, "source": variant.record.source,
                                               "nodeid": nodeid, **result})
    return result


def _check_full_branch(variant: Variant, nodeid: str) -> None:
    try:
        verify_default(variant, nodeid)
    except (AssertionError, DcuOptError) as exc:
        pytest.fail(f"ablation of {variant.label}: the full branch is wrong at the default dims, so nothing can be "
                    f"attributed to its methods. Fix the branch first.\n{exc}", pytrace=False)


def build_and_check(variant: Variant, method: str, flags: tuple[str, ...], settings: BuildSettings,
                    nodeid: str) -> tuple[dict[str, Any], Variant | None]:
    """The ablated build of one method, checked at the boundary dims: (its outcome so far, the variant or None)."""
    full = variant.toolchain
    ablated_settings = settings.adding_flags(flags)  # the run's flags, then the switch: one route to build and worker
    try:
        toolchain = ablated_settings.toolchain(full.name)
    except (KeyError, TypeError) as exc:
        return {"flags": list(flags), "outcome": BUILD_FAILED, "message": str(exc)}, None
    name = f"{variant.branch.name}-without-{method}"
    record = BranchRecord(variant.case.name, full.name, name, variant.record.source)
    ablated = Variant(variant.case, toolchain, Branch(name, variant.branch.source), record)
    outcome: dict[str, Any] = {"flags": list(flags)}
    try:
        resolve(ablated, ablated_settings)
    except ToolchainUnavailable as exc:
        return {**outcome, "outcome": BUILD_FAILED, "message": str(exc)}, None
    if ablated.setup_error is not None:
        return {**outcome, "outcome": BUILD_FAILED, "message": str(ablated.setup_error)[-2000:]}, ablated
    if ablated.artifact is not None and variant.artifact is not None and ablated.artifact.key == variant.artifact.key:
        outcome["note"] = "the ablated build has the full branch's cache key: the flag changed nothing in the build"
    wrong = check_ablated_build(ablated, f"{nodeid} (ablated: {method})")
    if wrong is not None:
        dims, message = wrong
        return {**outcome, "outcome": INCORRECT, "dims": dims, "message": message[-2000:]}, ablated
    return outcome, ablated


def interleaved_samples(variant: Variant, ablated: Mapping[str, Variant], rules: Rules, policy: TimingPolicy,
                        timeout_s: float, outcomes: dict[str, dict[str, Any]],
                        singles: Sequence[str] = ()) -> dict[str, list[list[float]]]:
    """Per-round samples of the full branch (key "") and of each correct ablated build, in alternating rounds:
    `rules.rounds` of them, then more while one of `singles` (the claimed methods; pairs do not decide) is
    inconclusive, up to `rules.max_rounds`."""
    short = replace(policy, max_time_s=policy.max_time_s / rules.rounds, min_samples=3, min_time_s=0.0,
                    warmup_s=policy.warmup_s / rules.rounds)
    timed = {method: other for method, other in ablated.items() if other.verdicts.default_verified}
    samples: dict[str, list[list[float]]] = {"": [], **{method: [] for method in timed}}
    for _ in range(rules.max_rounds):
        try:
            samples[""].append(list(measure(variant, TIMING_REPLY_CHECK, short, timeout_s)["samples"].seconds))
        except DcuOptError as exc:
            pytest.fail(f"ablation of {variant.label}: timing the full branch failed: {exc}", pytrace=False)
        for method, other in list(timed.items()):
            try:
                samples[method].append(list(measure(other, TIMING_REPLY_CHECK, short, timeout_s)["samples"].seconds))
            except DcuOptError as exc:  # wrong timed calls, a crash or a hang: this build is out
                outcomes[method].update(outcome=INCORRECT, message=str(exc)[-2000:])
                del timed[method], samples[method]
        if not another_round(samples, singles, rules):
            break
    return samples


def another_round(samples: Mapping[str, Sequence[Sequence[float]]], singles: Sequence[str], rules: Rules) -> bool:
    """Fewer than `rules.rounds` rounds so far, or (below the cap) a claimed method still timed is inconclusive."""
    done = len(samples[""])
    if done < rules.rounds:
        return True
    return done < rules.max_rounds and any(attribution(samples[""], samples[m], rules)["outcome"] == INCONCLUSIVE
                                           for m in singles if m in samples)


# Two-sided 95% Student-t quantiles by degrees of freedom (1-30); above 30 the normal 1.96 is used.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(degrees: int) -> float:
    return _T975[degrees - 1] if degrees <= len(_T975) else 1.96


def paired_ratios(full_rounds: Sequence[Sequence[float]], ablated_rounds: Sequence[Sequence[float]]) -> list[float]:
    """Per round: the ablated build's median over the full branch's median (rounds where both were timed)."""
    return [statistics.median(ablated) / statistics.median(full)
            for full, ablated in zip(full_rounds, ablated_rounds, strict=False)
            if full and ablated and statistics.median(full) > 0]


def method_pairs(methods: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Every pair of claimed methods with both switches set, when 2 to MAX_INTERACTION_METHODS are claimed."""
    if not 2 <= len(methods) <= MAX_INTERACTION_METHODS:
        return {}
    return {f"{a}{PAIR_JOIN}{b}": (*methods[a], *methods[b]) for a, b in itertools.combinations(methods, 2)}


def interaction(full_rounds: Sequence[Sequence[float]], first_rounds: Sequence[Sequence[float]],
                second_rounds: Sequence[Sequence[float]], both_rounds: Sequence[Sequence[float]],
                min_effect: float = DEFAULT_MIN_EFFECT) -> dict[str, Any]:
    """How two methods combine: the slowdown when both are removed over the product of their single slowdowns,
    per round (log(both) - log(first) - log(second) + log(full) of the round's medians), with a 95% t-interval.
    Above 1 beyond `min_effect`: `synergy` (each needs the other: together they are worth more than apart); below:
    `redundant` (they overlap: removing one leaves the other doing much of the work); otherwise `independent`."""
    terms = [math.log(statistics.median(both)) - math.log(statistics.median(first))
             - math.log(statistics.median(second)) + math.log(statistics.median(full))
             for full, first, second, both in zip(full_rounds, first_rounds, second_rounds, both_rounds, strict=False)
             if full and first and second and both]
    if len(terms) < MIN_ROUNDS:
        return {"interaction": None, "interaction_interval": None, "interaction_outcome": "not estimated",
                "interaction_note": f"{len(terms)} round(s) with all four builds timed; {MIN_ROUNDS} needed"}
    centre = statistics.fmean(terms)
    half = t975(len(terms) - 1) * statistics.stdev(terms) / math.sqrt(len(terms))
    low, high = math.exp(centre - half), math.exp(centre + half)
    verdict = SYNERGY if low > 1 + min_effect else REDUNDANT if high < 1 - min_effect else INDEPENDENT
    return {"interaction": round(math.exp(centre), 4), "interaction_interval": [round(low, 4), round(high, 4)],
            "interaction_outcome": verdict}


def attribution(full_rounds: Sequence[Sequence[float]], ablated_rounds: Sequence[Sequence[float]],
                rules: Rules | None = None) -> dict[str, Any]:
    """The slowdown when the method is removed: the geometric mean of the rounds' paired ratios, with a 95%
    t-interval on their logarithms, and the verdict (`Rules.verdict`): an effect only when the whole interval clears
    1 by `min_effect` (beyond the round-to-round noise, and material), no effect only when the whole interval lies
    within 1 +/- `negligible`, else inconclusive."""
    rules = rules or Rules()
    ratios = paired_ratios(full_rounds, ablated_rounds)
    pooled = summarize([s for one in ablated_rounds for s in one])
    found: dict[str, Any] = {"ablated_median_ms": pooled.median_ms, "ablated_ci95_ms": list(pooled.ci95_ms),
                             "round_ratios": [round(r, 4) for r in ratios]}
    if len(ratios) < MIN_ROUNDS:
        return {**found, "outcome": INCONCLUSIVE, "slowdown_when_removed": round(ratios[0], 4) if ratios else None,
                "slowdown_interval": None,
                "note": f"{len(ratios)} paired round(s): an interval needs {MIN_ROUNDS}, so nothing can be claimed"}
    logs = [math.log(r) for r in ratios]
    centre = statistics.fmean(logs)
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    low, high = math.exp(centre - half), math.exp(centre + half)
    verdict = rules.verdict(low, high)
    if verdict == INCONCLUSIVE:
        found["note"] = (f"after {len(ratios)} paired rounds the interval [{low:.3g}, {high:.3g}] holds both an effect "
                         f"(beyond {rules.min_effect:g}) and none (within {rules.negligible:g})")
    return {**found, "outcome": verdict, "slowdown_when_removed": round(math.exp(centre), 4),
            "slowdown_interval": [round(low, 4), round(high, 4)]}
