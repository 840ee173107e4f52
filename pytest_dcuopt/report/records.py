"""BranchRecord: everything a run learned about one branch, and how two processes' views of it merge."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping


@dataclass
class BranchRecord:
    """Everything the run learned about one branch of one case on one toolchain."""

    case: str
    toolchain: str
    branch: str
    source: str
    correct: bool | None = None
    examples: int = 0
    failure: dict[str, Any] | None = None
    build: dict[str, Any] | None = None
    timing: dict[str, Any] | None = None
    throughput: dict[str, float] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    skipped: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    isa: dict[str, Any] | None = None  # ISA verdicts (isa/runner.py record_summary); details in isa_check.json

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case, self.toolchain, self.branch)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BranchRecord:
        return cls(**dict(data))

    def merge(self, other: BranchRecord) -> None:
        """Fold another process's view of the same branch into this one (xdist)."""
        for name, value in other.__dict__.items():
            if name in ("throughput", "device", "extra"):
                getattr(self, name).update(value)
            elif value not in (None, 0, {}, "") and name not in ("case", "toolchain", "branch"):
                if name == "correct" and self.correct is False:
                    continue  # a failure seen anywhere stands
                setattr(self, name, value)
