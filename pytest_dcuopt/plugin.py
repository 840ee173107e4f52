"""pytest entry point (`pytest11: dcuopt`). Kept thin: options, markers, collection, the session object."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Generator

import pytest

from . import markers
from .options import Options, add_options

SESSION_KEY = pytest.StashKey["DcuOptSession"]()
RECORDS_KEY = "dcuopt_records"
ISA_KEY = "dcuopt_isa_checks"


class SampleClock:
    """A clock that replays measured samples, so pytest-benchmark stores device/host-measured times.

    pytest-benchmark reads `timer()` before and after each round; `advance()` (the benchmarked
    target) moves this clock forward by exactly the next measured sample.
    """

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


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from .session import DcuOptSession
    from .strategies import register_profiles

    markers.register(config)
    register_profiles()
    session = DcuOptSession(config, Options.from_config(config))
    config.stash[SESSION_KEY] = session


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    from .collect import KernelCaseModule, wants

    if wants(file_path):
        return KernelCaseModule.from_parent(parent, path=file_path)
    return None


@pytest.fixture(scope="session")
def dcuopt_session(request: pytest.FixtureRequest) -> Any:
    """The run's DcuOptSession: builds branches, checks them, times them, records results."""
    return request.config.stash[SESSION_KEY]


@pytest.fixture
def dcuopt_case(request: pytest.FixtureRequest) -> Any:
    """The kernel case in this test module's directory: `dcuopt_case.check("b1", {"N": 4097})`."""
    from .handle import CaseHandle

    return CaseHandle(request.config.stash[SESSION_KEY], request.path.parent, request.node.nodeid)


def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: fold a worker's records into the controller's session."""
    payload = getattr(node, "workeroutput", {}).get(RECORDS_KEY)
    if payload:
        node.config.stash[SESSION_KEY].merge_records(payload)
    isa_checks = getattr(node, "workeroutput", {}).get(ISA_KEY)
    if isa_checks:
        node.config.stash[SESSION_KEY].isa_checks.extend(json.loads(isa_checks))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """An `isa` mark only means something on a kernel case's generated tests; elsewhere it is an error."""
    if item.get_closest_marker(markers.ISA_MARKER) is not None and item.get_closest_marker(markers.CASE_MARKER) is None:
        pytest.fail(f"{item.nodeid}: the isa mark applies to kernel cases only (it checks a built branch's ISA). Put it "
                    "in the case's ref.py as `pytestmark = [pytest.mark.isa(...)]` or in "
                    "`branch_marks = {'<branch>': [pytest.mark.isa(...)]}`; see docs/isa.md.", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None, None, None]:
    yield
    dcuopt = session.config.stash.get(SESSION_KEY, None)
    if dcuopt is None:
        return
    dcuopt.close_workers()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand records to the controller
        workeroutput[RECORDS_KEY] = dcuopt.export_records()
        workeroutput[ISA_KEY] = json.dumps(dcuopt.isa_checks, default=str)
    elif dcuopt.records:
        dcuopt.finish(int(exitstatus))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    dcuopt = config.stash.get(SESSION_KEY, None)
    if dcuopt is None or dcuopt.state is None:
        return
    terminalreporter.section("dcuopt: branches per case")
    for line in dcuopt.terminal_lines():
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"state: {dcuopt.options.run_dir / 'state.json'}")
    terminalreporter.write_line(f"summary: {dcuopt.options.run_dir / 'summary.md'}")
    if dcuopt.isa_checks:
        terminalreporter.write_line(f"isa checks: {dcuopt.options.run_dir / 'isa_check.json'}")
