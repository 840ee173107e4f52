"""RunContext: the one view of the running session that the stages and the observers are given.

An observer (and any stage that needs the run) asks this protocol for the run's options, its run directory, the
build settings every branch of the run is built with, a toolchain's availability, a build (`resolve`) and a place
for its report entries; it never parses the options again nor reaches into the session by attribute. The session
(`session.DcuOptSession`) is the implementation; a test may hand any object with these members.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from .errors import ToolchainUnavailable

if TYPE_CHECKING:
    from .options import Options
    from .toolchains.base import Availability
    from .variant import BuildSettings, Variant


class RunContext(Protocol):
    """What the running session offers its stages and observers."""

    @property
    def options(self) -> Options:
        """The run's options, read once at configure time."""

    @property
    def run_dir(self) -> Path:
        """The run's folder (the xdist controller's in every worker): results and work folders go under it."""

    def build_settings(self) -> BuildSettings:
        """How this run builds and starts a branch: cache, flags, devices, host lock, calibrations, spare workers
        and background builds. A build of the run's (an ablated one too) takes these, never settings of its own."""

    def availability(self, toolchain: str) -> Availability:
        """What the named toolchain can do here (probed once per process)."""

    def resolve(self, variant: Variant) -> None:
        """Build and load the branch once (no device is taken); errors stay on the variant."""

    def add_report(self, observer: str, entry: dict[str, Any]) -> None:
        """Keep one entry of an observer's report (xdist workers hand them to the controller)."""


def require_built(context: RunContext, variant: Variant, *, runs_kernel: bool, record_skip: bool = False,
                  failing: str = "") -> None:
    """The start of every test of a branch: skip when its toolchain cannot do here what the test needs (run kernels,
    or only build), build it (once), skip a branch the stack rejects, fail with its build error.

    `record_skip`: the reason also becomes the record's `skipped` (the generated correctness and benchmark tests);
    `failing` heads a build error's message (what the failure costs the test, e.g. an ablation)."""
    name = variant.toolchain.name
    availability = context.availability(name)
    if not (availability.can_run if runs_kernel else availability.can_build):
        reason = f"{name} toolchain cannot {'run kernels' if runs_kernel else 'build'} here: {availability.reason}"
        if record_skip:
            variant.record.skipped = reason
        pytest.skip(reason)
    try:
        context.resolve(variant)
    except ToolchainUnavailable as exc:
        pytest.skip(f"{name}: {exc}")
    if isinstance(variant.setup_error, ToolchainUnavailable):  # a branch the stack rejects (BranchUnavailable)
        pytest.skip(f"unavailable: {variant.setup_error}")
    if variant.setup_error is not None:
        pytest.fail(f"{failing}{variant.setup_error}", pytrace=False)
