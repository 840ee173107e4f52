"""`ProfileSpec`: one validated `@pytest.mark.profile(...)`.

Keyword arguments (all optional):

    metrics     name | [names]   extra tool metrics/events/counters, added to the profiler's default set
                                 (ncu metric names, perf events, rocprof counters; hipprof uses its groups)
    sections    name | [names]   ncu sections to collect as well (e.g. "SpeedOfLight", "MemoryWorkloadAnalysis")
    sqtt        bool             hipprof SQTT thread trace as well (DCU only; files kept, not summarized)
    dims        {dim: value}     profile at these dims instead of the case's default dims
    precision   name             which compute peak the roofline uses: fp32 (default), fp64, fp16_matrix, ...
    timeout_s   seconds          per profiler run (default 300)
    top         count            how many metrics to rank as the most telling for the bound (default 5; the seed's
                                 --ncu-num)
    reason      text             what the profile is for, shown in the record
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import DcuOptError
from ..markers import PROFILE_MARKER, keyword_only

ALLOWED: tuple[str, ...] = ("metrics", "sections", "sqtt", "dims", "precision", "timeout_s", "reason", "top")
DEFAULT_TOP = 5
PRECISIONS: tuple[str, ...] = ("fp32", "fp64", "fp32_matrix", "tf32_matrix", "fp16_matrix", "bf16_matrix",
                               "int8_matrix")


class ProfileMarkError(DcuOptError):
    """A profile mark with an unknown keyword or a bad value."""


@dataclass(frozen=True)
class ProfileSpec:
    metrics: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    sqtt: bool = False
    dims: Mapping[str, int] = field(default_factory=dict)
    precision: str = "fp32"
    timeout_s: float = 300.0
    reason: str = ""
    origin: str = field(default="", compare=False)
    top: int = DEFAULT_TOP

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any], args: tuple[Any, ...] = (), origin: str = "") -> ProfileSpec:
        where = keyword_only(PROFILE_MARKER, args, origin, "profile(metrics=['dram__bytes_read.sum'])",
                             ProfileMarkError)
        unknown = sorted(set(kwargs) - set(ALLOWED))
        if unknown:
            raise ProfileMarkError(f"profile mark{where}: unknown keyword(s) {unknown}; allowed: {', '.join(ALLOWED)}")
        sqtt = kwargs.get("sqtt", False)
        if not isinstance(sqtt, bool):
            raise ProfileMarkError(f"profile mark{where}: sqtt={sqtt!r} must be True or False")
        precision = kwargs.get("precision", "fp32")
        if precision not in PRECISIONS:
            raise ProfileMarkError(f"profile mark{where}: precision={precision!r} is not one of "
                                   f"{', '.join(PRECISIONS)}")
        timeout = kwargs.get("timeout_s", 300.0)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ProfileMarkError(f"profile mark{where}: timeout_s={timeout!r} must be a positive number of seconds")
        reason = kwargs.get("reason", "")
        if not isinstance(reason, str):
            raise ProfileMarkError(f"profile mark{where}: reason={reason!r} must be text")
        top = kwargs.get("top", DEFAULT_TOP)
        if isinstance(top, bool) or not isinstance(top, int) or top < 1:
            raise ProfileMarkError(f"profile mark{where}: top={top!r} must be a positive integer (how many metrics "
                                   "to rank)")
        return cls(_names(kwargs.get("metrics"), "metrics", where), _names(kwargs.get("sections"), "sections", where),
                   sqtt, _dims(kwargs.get("dims"), where), precision, float(timeout), reason, origin, top)

    def to_json(self) -> dict[str, Any]:
        return {"metrics": list(self.metrics), "sections": list(self.sections), "sqtt": self.sqtt,
                "dims": dict(self.dims), "precision": self.precision, "timeout_s": self.timeout_s,
                "reason": self.reason, "origin": self.origin, "top": self.top}


def _names(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n.strip() for n in names):
        raise ProfileMarkError(f"profile mark{where}: {key}={value!r} must be a name or a list of names")
    return tuple(names)


def _dims(value: Any, where: str) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                                 for k, v in value.items()):
        raise ProfileMarkError(f"profile mark{where}: dims={value!r} must map dim names to integers, e.g. "
                               "dims={'N': 1 << 26}")
    return dict(value)


def merge_specs(specs: list[ProfileSpec]) -> ProfileSpec:
    """Several profile marks on one branch (case + branch level): lists add up, the branch's scalars win."""
    if not specs:
        return ProfileSpec()
    merged = specs[0]
    for spec in specs[1:]:
        merged = ProfileSpec(tuple(dict.fromkeys(merged.metrics + spec.metrics)),
                             tuple(dict.fromkeys(merged.sections + spec.sections)), merged.sqtt or spec.sqtt,
                             {**merged.dims, **spec.dims},
                             spec.precision if spec.precision != "fp32" else merged.precision,
                             max(merged.timeout_s, spec.timeout_s), spec.reason or merged.reason,
                             "; ".join(filter(None, (merged.origin, spec.origin))),
                             spec.top if spec.top != DEFAULT_TOP else merged.top)
    return merged
