"""A clock that replays measured samples, so pytest-benchmark stores the harness's own times."""
from __future__ import annotations


class SampleClock:
    """pytest-benchmark reads `timer()` before and after each round; `advance()` (the benchmarked
    target) moves this clock forward by exactly the next measured sample."""

    __name__ = "pytest_dcuopt.SampleClock"

    def __init__(self) -> None:
        self._now = 0.0
        self._pending: list[float] = []

    def load(self, seconds: list[float]) -> None:
        self._pending = list(reversed(seconds))

    def advance(self) -> None:
        self._now += self._pending.pop()

    def __call__(self) -> float:
        return self._now

    def __repr__(self) -> str:
        return "pytest_dcuopt.SampleClock"
