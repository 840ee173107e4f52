"""BranchRecord: everything a run learned about one branch, and how two processes' views of it merge."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

# Fields that name the branch: equal on both sides of a merge.
_IDENTITY = ("case", "toolchain", "branch", "size")
# Dicts that observers, the timing stage and hooks fill piecewise: merged key by key.
_DICTS = ("throughput", "device", "observations")
# What one benchmark size holds in `BranchRecord.sizes` (the branch-level fields of the same names, per size).
SIZE_FIELDS = ("timing", "throughput", "device", "skipped", "error")


@dataclass
class BranchRecord:
    """Everything the run learned about one branch of one case on one toolchain."""

    case: str
    toolchain: str
    branch: str
    source: str
    correct: bool | None = None  # None: the correctness test did not run (here)
    examples: int = 0  # checked calls made (boundary dims, Hypothesis draws, identical re-runs)
    examples_run: list[dict[str, Any]] = field(default_factory=list)  # the deterministic boundary dims, in order
    failure: dict[str, Any] | None = None
    build: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    throughput: dict[str, float] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    skipped: str | None = None
    # What observers and `pytest_dcuopt_update_branch_record` hooks add (hookspec.py); kept in state.json.
    observations: dict[str, Any] = field(default_factory=dict)
    isa: dict[str, Any] | None = None  # ISA verdicts (observe/isa.py record_summary); details in isa_check.json
    # Per benchmark size (ref.py `bench_sizes`): {"dims", "order" (its place among the declared sizes), "timing",
    # "throughput", "device", "skipped", "error"}. Empty for a case timed at its default dims only, whose timing is
    # the fields above.
    sizes: dict[str, dict[str, Any]] = field(default_factory=dict)
    size: str | None = None  # set on a view of one size (`at_size`) only: what the gate and the ranking judge
    # Figures over what the machine can do (report/plausibility.py): {"reason", "allowed"}; None: plausible.
    implausible: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case, self.toolchain, self.branch)

    def size_entry(self, size: str, dims: Mapping[str, Any], order: int = 0) -> dict[str, Any]:
        """The results of one benchmark size, made empty at its first use."""
        return self.sizes.setdefault(size, {"dims": dict(dims), "order": order, "timing": None, "throughput": {},
                                            "device": {}, "skipped": None, "error": None})

    def at_size(self, size: str) -> BranchRecord:
        """This branch as timed at one benchmark size: the size's timing, throughput, device, skip reason and error
        (the branch's own skip reason and error where the size has none) with the branch's verdict, build and ISA."""
        entry = self.sizes.get(size) or {}
        return replace(self, size=size, sizes={}, timing=entry.get("timing"),
                       throughput=dict(entry.get("throughput") or {}), device=dict(entry.get("device") or {}),
                       skipped=entry.get("skipped") or self.skipped, error=entry.get("error") or self.error)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BranchRecord:
        return cls(**dict(data))

    def merge(self, other: BranchRecord) -> None:
        """Fold another process's view of the same branch into this one (xdist).

        Each xdist worker ran some of the branch's tests, so each field comes from whichever side has it:
        `correct` False from either side wins (a failure seen anywhere stands), then True, then None;
        `examples` is summed (each process counts only the calls it made) and `examples_run` concatenated;
        of two failures the correctness test's (`stage`) is kept; dicts are merged key by key, and benchmark sizes
        size by size (the sizes of one branch may be timed in different processes); any other
        field keeps this side's value when it has one (set, not None/empty), else takes the other side's.
        The verdict does not depend on the merge order.
        """
        if other.key != self.key:
            raise ValueError(f"cannot merge the record of {other.key} into that of {self.key}: different branches")
        for spec in fields(self):
            name = spec.name
            mine, theirs = getattr(self, name), getattr(other, name)
            if name in _IDENTITY:
                continue
            if name == "correct":
                self.correct = _merged_verdict(mine, theirs)
            elif name == "examples":
                self.examples = mine + theirs
            elif name == "examples_run":
                self.examples_run = mine + [dims for dims in theirs if dims not in mine]
            elif name == "failure" and mine is not None and theirs is not None:
                self.failure = _preferred_failure(mine, theirs)
            elif name in _DICTS:
                mine.update({k: v for k, v in theirs.items() if mine.get(k) is None})
            elif name == "sizes":
                _merge_sizes(mine, theirs)
            elif _unset(mine) and not _unset(theirs):
                setattr(self, name, theirs)


def _merge_sizes(mine: dict[str, dict[str, Any]], theirs: Mapping[str, Mapping[str, Any]]) -> None:
    """Each size from whichever side has it; a size both sides hold keeps this side's fields where they are set."""
    for size, entry in theirs.items():
        own = mine.setdefault(size, dict(entry))
        own.update({k: v for k, v in entry.items() if _unset(own.get(k)) and not _unset(v)})


def _merged_verdict(mine: bool | None, theirs: bool | None) -> bool | None:
    if mine is False or theirs is False:
        return False
    if mine is True or theirs is True:
        return True
    return None


def _preferred_failure(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """The correctness test's failure (Hypothesis shrank it) over one found by the check before timing."""
    if mine.get("stage") != "correctness" and theirs.get("stage") == "correctness":
        return theirs
    return mine


def _unset(value: Any) -> bool:
    # Not `value in (None, 0, {}, "")`: False == 0 would make a False verdict look unset.
    return value is None or (isinstance(value, (str, dict, list)) and len(value) == 0)
