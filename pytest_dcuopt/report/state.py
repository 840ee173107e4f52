"""Per-branch records and the run's state.json (versioned, validated, written atomically)."""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ..timing.policy import Summary, significantly_faster
from .records import SIZE_FIELDS, BranchRecord

# 2: cases keyed by their folder relative to pytest's rootdir (`case.model.case_key`); 1: by the folder's name, so two
# folders of one name in different places were one record. The gate reads both (gate/baseline.py).
SCHEMA_VERSION = 2
READABLE_SCHEMA_VERSIONS = (1, 2)
SCHEMA_PATH = Path(__file__).with_name("schema") / "state.schema.json"


def summary_of(record: BranchRecord) -> Summary | None:
    timing = record.timing
    if not timing:
        return None
    return Summary(timing["median_ms"], timing["iqr_ms"], timing["min_ms"], timing["max_ms"], timing["mean_ms"],
                   tuple(timing["ci95_ms"]), timing["rounds"], timing["rel_spread"])


# A branch's own-run medians and its interleaved A/B rounds measure the same two kernels; when their speedups differ by
# more than this factor, the machine's load changed between them (seen: 6.4x own-run, 1.52x A/B on a loaded 2-core
# VM), and neither figure can crown anything. Ordinary drift on that VM stayed under 2x (README's dram row: 2.08x vs
# 1.16x, 1.8 apart).
DISAGREE_FACTOR = 3.0
NO_BASELINE_NOTE = ("no correct baseline was timed in this run, so nothing was beaten: run the baseline's benchmark "
                    "in the same run (it was deselected, skipped or failed)")


def rank_branches(records: Iterable[BranchRecord]) -> dict[str, Any]:
    """Speedups vs the baseline measured in the same run, and the champion.

    The champion is the fastest correct branch whose median's confidence interval lies wholly
    below the baseline's; when no branch clears the noise, the baseline stays champion. Without
    a correct baseline timed in this run there is nothing to beat: no champion and no speedup.
    When a branch's own-run and A/B figures disagree by more than DISAGREE_FACTOR, the branch is
    marked (`measurements_disagree`) and nothing is crowned; `champion_note` says why.
    """
    by_name = {r.branch: r for r in records}
    baseline = by_name.get("baseline")
    # correct=None with a timing means: checked at the boundary dims only, before timing (the correctness test
    # did not run in the process that timed it).
    base = summary_of(baseline) if baseline is not None and may_rank(baseline) else None
    entries: dict[str, Any] = {}
    candidates: list[tuple[float, str]] = []
    disagreeing: list[str] = []
    for name, record in by_name.items():
        mine = summary_of(record)
        entry: dict[str, Any] = {"speedup_vs_baseline": None, "beats_baseline": False}
        own = None
        if mine is not None and base is not None:
            own = entry["speedup_vs_baseline"] = base.median_ms / mine.median_ms if mine.median_ms > 0 else None
            entry["beats_baseline"] = name != "baseline" and significantly_faster(mine, base)
        ab = (record.timing or {}).get("interleaved")
        if ab and base is not None:  # the interleaved A/B is immune to drift between the two measurements
            entry["speedup_vs_baseline"] = ab["speedup"]
            entry["beats_baseline"] = ab["ci95_ms"][1] < ab["baseline_ci95_ms"][0]
            disagreement = measurements_disagree(own, ab["speedup"])
            if disagreement:
                entry["measurements_disagree"] = disagreement
                disagreeing.append(f"{name}: {disagreement}")
        if held_back(record) or not may_rank(record):
            entry["beats_baseline"] = False
        entries[name] = entry
        eligible = entry["beats_baseline"] or name == "baseline"
        # A median from too few clean samples, or from an emulator (the Triton interpreter), may be shown but never
        # crowns a branch.
        timing = record.timing or {}
        trusted = ((timing.get("quality", "ok") == "ok" or name == "baseline")
                   and timing.get("representative", True) is not False)
        if may_rank(record) and mine is not None and base is not None and eligible and trusted:
            # Rank by speedup where there is one: it is the drift-free interleaved figure when that ran.
            speedup = entry["speedup_vs_baseline"] if name != "baseline" else 1.0
            candidates.append((-speedup if speedup else mine.median_ms, name))
    note = None
    if disagreeing:
        note = ("the own-run and A/B measurements disagree (" + "; ".join(disagreeing) + "): the machine's load "
                "changed while timing, so no branch is crowned; time again on a quieter machine")
        candidates = []
    elif base is None and any(summary_of(r) is not None for r in by_name.values()):
        note = NO_BASELINE_NOTE
    champion = min(candidates)[1] if candidates else None
    ranking = {"branches": entries, "champion": champion,
               "champion_speedup": entries[champion]["speedup_vs_baseline"] if champion else None,
               "baseline_ms": base.median_ms if base else None}
    if note:
        ranking["champion_note"] = note
    return ranking


def measurements_disagree(own: float | None, ab: float | None) -> str | None:
    """What the two figures say when they are more than DISAGREE_FACTOR apart, else None."""
    if not own or not ab or own <= 0 or ab <= 0 or max(own / ab, ab / own) <= DISAGREE_FACTOR:
        return None
    return f"own-run medians give {own:.2f}x, the A/B rounds {ab:.2f}x"


def may_rank(record: BranchRecord) -> bool:
    """Only a branch with no failure on record may be baseline or champion: any failure (a wrong value, a crash,
    a nondeterministic result, seen in any process) excludes it, even where a timing exists (xdist); so do figures
    over what the machine can do, unless allowed."""
    return record.correct is not False and record.failure is None and not held_back(record)


def held_back(record: BranchRecord) -> bool:
    """Implausible figures (report/plausibility.py) that the user did not allow: never champion, never beats noise."""
    return record.implausible is not None and not record.implausible.get("allowed")


def build_state(records: Iterable[BranchRecord], header: Mapping[str, Any]) -> dict[str, Any]:
    cases: dict[str, Any] = {}
    grouped: dict[tuple[str, str], list[BranchRecord]] = {}
    for record in records:
        grouped.setdefault((record.case, record.toolchain), []).append(record)
    for (case, toolchain), group in sorted(grouped.items()):
        group = sorted(group, key=lambda r: (r.branch != "baseline", r.branch))
        ranking = rank_branches(group)
        sizes = rank_sizes(group)
        branches = {}
        for record in group:
            entry = record.to_json()
            for drop in ("case", "toolchain", "branch", "size", "sizes"):
                entry.pop(drop)
            entry.update(ranking["branches"][record.branch])
            entry["champion"] = record.branch == ranking["champion"]
            if record.sizes:
                entry["sizes"] = {size: ranked["branches"][record.branch] for size, ranked in sizes.items()
                                  if record.branch in ranked["branches"]}
            branches[record.branch] = entry
        result = {"champion": ranking["champion"], "champion_speedup": ranking["champion_speedup"],
                  "baseline_ms": ranking["baseline_ms"], "branches": branches}
        if "champion_note" in ranking:
            result["champion_note"] = ranking["champion_note"]
        if sizes:
            result["sizes"] = {size: {k: v for k, v in ranked.items() if k != "branches"} for size, ranked in
                               sizes.items()}
        cases.setdefault(case, {"toolchains": {}})["toolchains"][toolchain] = result
    return {"schema_version": SCHEMA_VERSION, **dict(header), "cases": cases}


def rank_sizes(group: Sequence[BranchRecord]) -> dict[str, dict[str, Any]]:
    """Per benchmark size (in declaration order): its dims, the champion at that size, its speedup and the baseline's
    median, and per branch timed there its size entry with speedup and champion."""
    order = {size: entry.get("order", 0) for record in group for size, entry in record.sizes.items()}
    names = sorted(order, key=lambda size: order[size])  # stable: ties keep the order the records name them
    found: dict[str, dict[str, Any]] = {}
    for size in names:
        views = [record.at_size(size) for record in group if size in record.sizes]
        ranking = rank_branches(views)
        branches = {}
        for view in views:
            entry = {name: getattr(view, name) for name in SIZE_FIELDS}
            entry.update(ranking["branches"][view.branch])
            entry["champion"] = view.branch == ranking["champion"]
            branches[view.branch] = entry
        dims = next(record.sizes[size]["dims"] for record in group if size in record.sizes)
        found[size] = {"dims": dims, "champion": ranking["champion"], "champion_speedup": ranking["champion_speedup"],
                       "baseline_ms": ranking["baseline_ms"], "branches": branches}
        if "champion_note" in ranking:
            found[size]["champion_note"] = ranking["champion_note"]
    return found


def find_case(state: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The `cases` entry keyed `name`, or else the one case whose key's last folder is `name` (a caller that knows
    a case folder's name, not pytest's rootdir); None when there is neither, or several."""
    cases = state.get("cases") or {}
    if name in cases:
        return cases[name]
    found = [entry for key, entry in cases.items() if PurePosixPath(key).name == name]
    return found[0] if len(found) == 1 else None


def validate_state(state: Mapping[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(dict(state), json.loads(SCHEMA_PATH.read_text()))
