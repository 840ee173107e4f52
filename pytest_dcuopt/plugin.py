"""pytest entry point (`pytest11: dcuopt`). Kept thin: options, markers, hooks, collection, the session object."""
from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import markers
from .errors import DcuOptError
from .files import RunDirLock
from .option_declarations import add_options
from .options import RUN_DIR_KEY, RUN_SEED_KEY, Options

if TYPE_CHECKING:
    from .case_handle import CaseHandle
    from .observe import Observer
    from .run.interrupt import InterruptGuard
    from .session import DcuOptSession

SESSION_KEY = pytest.StashKey["DcuOptSession"]()
INTERRUPT_KEY = pytest.StashKey["InterruptGuard"]()
RUN_DIR_LOCK_KEY = pytest.StashKey[RunDirLock]()
SKIPPED_RUNS_KEY = pytest.StashKey[list[Path]]()  # loop run folders left out of collection
WORKER_OUTPUT_KEY = "dcuopt_session"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspec

    pluginmanager.add_hookspecs(hookspec)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from .check.hypothesis_settings import register_hypothesis_settings
    from .session import DcuOptSession

    markers.register(config)
    register_hypothesis_settings()
    _warn_deprecated_options(config)
    observers = [o for found in config.hook.pytest_dcuopt_observers(config=config) for o in found]
    config.stash[SESSION_KEY] = DcuOptSession(config, Options.from_config(config), observers)
    _start_triton_capture(config)
    if not hasattr(config, "workerinput"):  # xdist workers end with their controller; it writes the state
        from .run.interrupt import InterruptGuard

        _lock_run_dir(config)
        guard = config.stash[INTERRUPT_KEY] = InterruptGuard()
        guard.install()
        config.pluginmanager.register(guard, "dcuopt-interrupt-guard")  # hears a KeyboardInterrupt raised by code
    else:  # an xdist worker: its own torch work (the reference outputs) keeps to its share of the host's cores
        from .run.devices import cpu_share, limit_harness_threads, note_host_workers

        note_host_workers(config.workerinput)
        share = cpu_share()
        if share is not None:
            limit_harness_threads(share)


def pytest_unconfigure(config: pytest.Config) -> None:
    guard: InterruptGuard | None = config.stash.get(INTERRUPT_KEY, None)
    if guard is not None:
        guard.uninstall()
    lock = config.stash.get(RUN_DIR_LOCK_KEY, None)
    if lock is not None:
        lock.release()


def _lock_run_dir(config: pytest.Config) -> None:
    """A --dcuopt-run-dir given by name is held for the whole session (the default one is unique to the process)."""
    from .files import RunDirInUse
    from .option_declarations import RUN_DIR_OPTION

    if not config.getoption(RUN_DIR_OPTION, None):
        return
    lock = RunDirLock(config.stash[SESSION_KEY].options.run_dir)
    try:
        lock.acquire()
    except RunDirInUse as exc:
        raise pytest.UsageError(f"{RUN_DIR_OPTION}: {exc}") from None
    config.stash[RUN_DIR_LOCK_KEY] = lock


def _start_triton_capture(config: pytest.Config) -> None:
    """--dcuopt-triton-capture DIR (or $DCUOPT_TRITON_CAPTURE): record Inductor's autotuning in this process; the
    variable is set too, so a process started from here can call capture.install_from_env()."""
    import os

    from .option_declarations import TRITON_CAPTURE_OPTION
    from .triton_flow.capture import CAPTURE_ENV, install_from_env

    folder = config.getoption(TRITON_CAPTURE_OPTION, None)
    if folder:
        os.environ[CAPTURE_ENV] = os.path.abspath(folder)
    if not os.environ.get(CAPTURE_ENV):
        return
    try:
        install_from_env()
    except ImportError as exc:
        raise pytest.UsageError(f"{TRITON_CAPTURE_OPTION} / ${CAPTURE_ENV}={os.environ[CAPTURE_ENV]}: TorchInductor "
                                f"cannot be imported here ({exc}); install torch with Triton support, or drop the "
                                "option") from None


def _warn_deprecated_options(config: pytest.Config) -> None:
    from .option_declarations import DEPRECATED_BACKEND_OPTION, TOOLCHAIN_OPTION

    if any(str(arg).split("=")[0] == DEPRECATED_BACKEND_OPTION for arg in config.invocation_params.args):
        config.issue_config_time_warning(pytest.PytestDeprecationWarning(
            f"{DEPRECATED_BACKEND_OPTION} is the old name of {TOOLCHAIN_OPTION} (the project calls a compiler and "
            f"runtime family a toolchain everywhere); it still works, but write {TOOLCHAIN_OPTION}"), stacklevel=2)


def pytest_dcuopt_observers(config: pytest.Config) -> list[Observer]:
    """The built-in observers: ISA checks (`isa`), method ablation (`ablation`) and profiling (`profile`)."""
    from .observe.ablation import AblationObserver
    from .observe.isa import IsaObserver
    from .observe.profile import ProfileObserver

    return [IsaObserver(), AblationObserver(), ProfileObserver()]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    from .collect import KernelCaseModule, wants

    if wants(file_path):
        parent.config.stash[SESSION_KEY].collected_cases += 1
        return KernelCaseModule.from_parent(parent, path=file_path)
    return None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Branch links that loop back to a folder holding them are never walked (collect.ignores). A `dcuopt` loop run
    inside a case folder holds copies of the case: found while walking the tree, it is left out (named once
    collection ends); pytest never asks this for a path named on the command line or above one, so `pytest RUN_DIR`
    and `pytest RUN_DIR/iterv<i>` still collect it."""
    from .case.model import is_loop_run_dir
    from .collect import ignores

    if ignores(collection_path):
        return True
    if collection_path.name.startswith("run_") and is_loop_run_dir(collection_path):
        config.stash.setdefault(SKIPPED_RUNS_KEY, []).append(collection_path)
        return True
    return None


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    skipped = config.stash.get(SKIPPED_RUNS_KEY, [])
    if not skipped:
        return []
    names = ", ".join(str(path) for path in skipped)
    return [f"dcuopt: not collected: {len(skipped)} dcuopt loop run folder(s) inside case folders ({names}): they "
            "hold copies of the case; name one on the command line to collect it (`pytest RUN_DIR`)"]


@pytest.fixture(scope="session")
def dcuopt_session(request: pytest.FixtureRequest) -> DcuOptSession:
    """The run's DcuOptSession: builds branches, checks them, times them, records results."""
    return request.config.stash[SESSION_KEY]


@pytest.fixture
def dcuopt_case(request: pytest.FixtureRequest) -> CaseHandle:
    """The kernel case in this test module's directory: `dcuopt_case.check("b1", {"N": 4097})`."""
    from .case_handle import CaseHandle

    return CaseHandle(request.config.stash[SESSION_KEY], request.path.parent, request.node.nodeid)


@pytest.fixture
def dcuopt_probe(request: pytest.FixtureRequest) -> Callable[..., dict[str, Any]]:
    """Compile-probe a builtin call shape for an arch into the run dir's probes/:
    `dcuopt_probe("i32[0] = __builtin_amdgcn_readfirstlane(i32[1])", "gfx90a")["status"] == "available"`."""
    from .cli.probe import PROBES_DIR, Probe, probe_call

    folder = request.config.stash[SESSION_KEY].options.run_dir / PROBES_DIR
    return lambda call, arch, prelude="": probe_call(Probe(call, arch, prelude), folder)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: tell each worker how many workers share its host (their builds and references split its
    cores, run/devices.py `CpuShare`); remote workers (`--tx ssh=...`, `socket=...`) count per host."""
    from .run.devices import HOST_WORKERS_KEY, workers_on_host

    node.workerinput[HOST_WORKERS_KEY] = workers_on_host(node.nodemanager.specs, node.gateway.spec)
    dcuopt = node.config.stash.get(SESSION_KEY, None)
    if dcuopt is not None:  # the run's id: its workers share calibrations in a folder named by it, removed at the end
        dcuopt.xdist_run = str(node.workerinput.get("testrunuid", "")) or None
        node.workerinput[RUN_SEED_KEY] = dcuopt.options.run_seed  # one run, one secret seed
        node.workerinput[RUN_DIR_KEY] = str(dcuopt.run_dir)  # one run, one folder


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist controller, `--dist load` (the default with -n): a branch's tests go to one worker together
    (run/schedule.py), unless --dcuopt-xdist-schedule=xdist."""
    from .option_declarations import XDIST_SCHEDULE_OPTION

    if config.getvalue("dist") != "load" or config.getoption(XDIST_SCHEDULE_OPTION) != "branch":
        return None
    from .collect import branch_unit
    from .run.schedule import BranchScheduling

    return BranchScheduling(config, log, branch_unit)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: fold a worker's records and observer reports into the controller's session."""
    payload = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if payload:
        node.config.stash[SESSION_KEY].merge(payload)


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Check --dcuopt-sizes against the collected cases; start building every selected branch in the background
    (--dcuopt-build-jobs at a time) while the tests run."""
    from .selection import check_replay_dims, check_size_selection

    dcuopt = session.config.stash.get(SESSION_KEY, None)
    if dcuopt is not None:
        check_size_selection(session.config, dcuopt.options, dcuopt.collected_cases)
        check_replay_dims(session.config, dcuopt.options)
    if dcuopt is None or session.config.option.collectonly or not session.items:
        return
    dcuopt.note_selected(session.items)
    builds = dcuopt.start_builds(session.items)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if builds is not None and reporter is not None:
        reporter.write_line(f"dcuopt: building {builds.count} branches in the background, {builds.jobs} at a time "
                            "(--dcuopt-build-jobs); a test waits only for its own branch, a timing for all")


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        dcuopt = items[0].config.stash.get(SESSION_KEY, None)
        if dcuopt is not None:
            dcuopt.deselected += len(items)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """An `isa` mark only means something on a kernel case's generated tests; elsewhere it is an error."""
    if item.get_closest_marker(markers.ISA_MARKER) is not None and item.get_closest_marker(markers.CASE_MARKER) is None:
        pytest.fail(f"{item.nodeid}: the isa mark applies to kernel cases only (it checks a built branch's ISA). "
                    "Put it in the case's ref.py as `pytestmark = [pytest.mark.isa(...)]` or in "
                    "`branch_marks = {'<branch>': [pytest.mark.isa(...)]}`; see docs/isa.md.", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """After a kernel case's last test in a row, its branches' workers end (session.release_workers)."""
    yield
    dcuopt = item.config.stash.get(SESSION_KEY, None)
    if dcuopt is not None:
        dcuopt.release_workers(item, nextitem)


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> Generator[None, None, None]:
    guard = session.config.stash.get(INTERRUPT_KEY, None)
    if guard is not None:
        guard.finishing = True  # a signal from now on must not cut the state write short
    yield
    dcuopt = session.config.stash.get(SESSION_KEY, None)
    if dcuopt is None:
        return
    dcuopt.close_workers()
    dcuopt.forget_shared_calibrations()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand records to the controller
        workeroutput[WORKER_OUTPUT_KEY] = dcuopt.export()
    elif dcuopt.records or dcuopt.collected_cases:
        from .results import finish
        from .selection import partial_because

        interrupted = guard.stopped_by if guard is not None else None
        stopped = session.shouldfail or session.shouldstop
        partial = partial_because(session.config, dcuopt.deselected, str(stopped) if stopped else None, interrupted)
        try:
            finish(dcuopt, int(exitstatus), interrupted=interrupted, partial=partial)
        except DcuOptError as exc:  # what could be written is written; say what was not, and fail the run
            dcuopt.finish_error = str(exc)
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR if exitstatus == 0 else exitstatus


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    dcuopt = config.stash.get(SESSION_KEY, None)
    if dcuopt is None or dcuopt.state is None:
        return
    from .results import report_paths, summary_lines

    terminalreporter.section("dcuopt: branches per case")
    if dcuopt.finish_error:
        terminalreporter.write_line(f"dcuopt: {dcuopt.finish_error}", red=True)
    if dcuopt.state.get("interrupted"):
        terminalreporter.write_line(f"interrupted by {dcuopt.state['interrupted']}: the results below are partial")
    for line in summary_lines(dcuopt):
        terminalreporter.write_line(line)
    if dcuopt.builds is not None:
        terminalreporter.write_line(f"dcuopt: {dcuopt.builds.report().describe()}")
    for what, path in report_paths(dcuopt):
        terminalreporter.write_line(f"{what}: {path}")
    if dcuopt.latest_note:
        terminalreporter.write_line(dcuopt.latest_note)
