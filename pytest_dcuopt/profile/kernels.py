"""Which profiler rows belong to the kernel under test.

A profiled process runs more than the kernel: the framework's own kernels (buffer fills, copies, the
L2 flush), the warm-up call and the profiled call. Rows are kept when their kernel name matches a
name found in the artifact (mangled, demangled, or the demangled name without its parameter list),
and the record says which names were counted and which were dropped. Without a profiled range (a tool
that records the whole process), the target made exactly two calls (warm-up + profiled), so the
matching rows split into two equal halves and the second half is the profiled call.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

_ARCH_SUFFIX = re.compile(r"\s*\[(?:sm_|gfx|compute_)\w*\]\s*$")
_CLONE_SUFFIX = re.compile(r"\s*\[clone [^\]]*\]\s*$")


@dataclass
class KernelRow:
    """One kernel dispatch (or, for a CPU range, the range itself) as a profiler reported it."""

    kernel: str
    index: int  # dispatch index / ID in the tool's output
    counters: dict[str, float] = field(default_factory=dict)  # raw counters, per-instance columns summed
    fields: dict[str, str] = field(default_factory=dict)  # non-counter columns kept as text (grid, stream...)

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "index": self.index, "counters": dict(self.counters),
                "fields": dict(self.fields)}


def name_keys(name: str) -> set[str]:
    """Forms under which a kernel name may appear in a profiler's output."""
    text = _CLONE_SUFFIX.sub("", _ARCH_SUFFIX.sub("", name.strip().strip('"'))).strip()
    if text.endswith(".kd"):
        text = text[:-3]
    keys = {text}
    base = text.split("(", 1)[0].strip()
    if base:
        keys.add(base)
        # "void vadd4<4>" -> "vadd4<4>"; the return type may precede a demangled template's name
        keys.add(base.rsplit(" ", 1)[-1])
    return {k for k in keys if k}


@dataclass(frozen=True)
class KernelFilter:
    """The artifact's kernel names (mangled -> demangled); an empty filter matches nothing."""

    names: Mapping[str, str]

    @classmethod
    def from_symbols(cls, symbols: Iterable[str], demangled: Mapping[str, str] | None = None) -> KernelFilter:
        demangled = demangled or {}
        return cls({_ARCH_SUFFIX.sub("", s): demangled.get(s, s) for s in symbols})

    def keys(self) -> set[str]:
        found: set[str] = set()
        for mangled, plain in self.names.items():
            found |= name_keys(mangled) | name_keys(plain)
        return found

    def matches(self, kernel: str) -> bool:
        return bool(name_keys(kernel) & self.keys())


@dataclass
class Selection:
    counted: list[KernelRow]
    dropped: list[KernelRow]
    rule: str
    problem: str | None = None  # set when the rows cannot be trusted (nothing matched, odd split)

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "problem": self.problem,
            "counted": [{"kernel": r.kernel, "index": r.index} for r in self.counted],
            "dropped": _summarize(self.dropped),
        }


def select_rows(rows: Sequence[KernelRow], kernels: KernelFilter, last_call_only: bool) -> Selection:
    """Keep the kernel-under-test rows; with `last_call_only`, only the profiled (second) call's half."""
    matched = [r for r in rows if kernels.matches(r.kernel)]
    others = [r for r in rows if not kernels.matches(r.kernel)]
    names = sorted(set(kernels.names.values()))
    if not matched:
        seen = sorted({r.kernel for r in rows})
        return Selection([], list(rows), "match the artifact's kernel names",
                         f"no profiled kernel matches the artifact's kernels {names}; the profiler saw {seen[:12]}")
    if not last_call_only:
        return Selection(matched, others, f"rows whose kernel is one of {names} (profiled range: one call)")
    if len(matched) % 2:
        return Selection([], list(rows), "second half of the matching rows (warm-up + profiled call)",
                         f"{len(matched)} rows match {names}: not an even split between the warm-up call and "
                         "the profiled call; the kernel may launch a data-dependent number of kernels")
    half = len(matched) // 2
    return Selection(matched[half:], others + matched[:half],
                     f"rows whose kernel is one of {names}, second half (the profiled call; the first half is "
                     "the warm-up call)")


def _summarize(rows: Sequence[KernelRow]) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.kernel] = counts.get(row.kernel, 0) + 1
    return [{"kernel": name, "rows": n} for name, n in sorted(counts.items())]
