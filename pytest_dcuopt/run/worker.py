"""The isolated worker process that loads and runs one kernel, and the supervisor above it.

Started by `launch.launch_worker` as
`python -m pytest_dcuopt.run.worker <response-fd> <pytest-pid> main-thread|other-thread [module,module...]`; the
worker imports the listed modules before it reads its first request (a spare worker does that ahead of need,
`spare_workers.py`, and answers `ping` once it has).
That process forks at once: the parent stays a small *supervisor*, the child is the *worker* that
loads the kernel. Requests arrive on stdin, responses leave on a dedicated pipe; the kernel's own
stdout is redirected to stderr (a log file) so that a printf in a kernel cannot corrupt the protocol.
A segfault or abort kills only the worker; faulthandler prints where it happened. Right after the fork, before any
kernel code is loaded, the worker contains itself (`containment.contain_worker`: no_new_privs, a seccomp filter).

Why a supervisor: a kernel's getppid() is the supervisor, not pytest, so a kernel that kills its
parent ends its own worker (reported as a crash), not the session. The supervisor is a subreaper:
a kernel's setsid/double-forked children stay below it and are ended when the worker ends. It
mirrors the worker's exit status (a signal is re-raised), dies with pytest (after ending its
subtree), and the worker dies with it. See `processes.py` for what is and is not covered.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any, cast

from ..timing.calibration import CalibratedRuntime
from .containment import contain_worker
from .processes import end_subtree, set_child_subreaper, set_parent_death_signal, watch_parent
from .protocol import (
    BatchRequest,
    CheckedCall,
    CheckPlan,
    LoadRequest,
    LoadResult,
    Reply,
    RunRequest,
    TimeRequest,
    TimeResult,
)

if TYPE_CHECKING:
    from ..toolchains.base import Binding, LoadedKernel, Runtime
    from ..toolchains.binding import BindSpec, Snapshot

# A frame: a magic tag, a header (the pickle's length, the number of out-of-band buffers), each buffer's length, the
# pickle (protocol 5), then each buffer's raw bytes. Contiguous arrays travel out of band: written from their own
# memory and read straight into fresh buffers, so a frame of large arrays is never copied whole on either side. The
# tag makes bytes that a kernel wrote into a descriptor it does not own (the reply pipe) show as what they are instead
# of as a length of 2**64 - 1.
_MAGIC = b"dcuopt2\n"
_HEADER = struct.Struct("<8sQQ")
_LENGTH = struct.Struct("<Q")
MAX_FRAME_BYTES = 1 << 40
MAX_FRAME_BUFFERS = 1 << 20


class FrameError(ValueError):
    """Bytes on the channel that are not a frame: something other than the worker wrote into it."""


def _read_into(stream: IO[bytes], view: memoryview) -> bool:
    """Fill `view` from `stream`; False when the stream ends first."""
    readinto = cast(Any, stream).readinto
    filled, size = 0, len(view)
    while filled < size:
        count = readinto(view[filled:])
        if not count:
            return False
        filled += count
    return True


class _FrameUnpickler(pickle.Unpickler):
    """Unpickles a frame's payload with its out-of-band buffers; every array comes out writable.

    A buffer that was read-only at the sender arrives as a read-only view (pickle's READONLY_BUFFER) of the fresh
    buffer `read_frame` read it into; numpy's rebuild is handed that fresh buffer itself, which no one else holds.
    """

    def __init__(self, payload: bytes, buffers: list[Any]) -> None:
        import io

        super().__init__(io.BytesIO(payload), buffers=buffers)
        self._fresh = {id(buffer) for buffer in buffers}

    def find_class(self, module: str, name: str, /) -> Any:
        found = super().find_class(module, name)
        if name != "_frombuffer" or not module.startswith("numpy"):
            return found
        fresh = self._fresh

        def rebuild(buffer: Any, *args: Any) -> Any:
            if isinstance(buffer, memoryview) and id(buffer.obj) in fresh:
                buffer = buffer.obj
            return found(buffer, *args)

        return rebuild


def read_frame(stream: IO[bytes]) -> Any:
    """The next message; None at the end of the stream (the writer closed it, or died mid-frame).

    Its arrays are fresh, writable and belong to the caller: each out-of-band buffer is read into its own new memory.
    """
    import numpy as np

    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    magic, pickled, count = _HEADER.unpack(header)
    if magic != _MAGIC:
        raise FrameError(f"bytes that are not a frame header: {header[:16]!r}")
    if count > MAX_FRAME_BUFFERS or pickled > MAX_FRAME_BYTES:
        raise FrameError(f"a frame header announcing {pickled} bytes and {count} buffers")
    table = stream.read(count * _LENGTH.size) if count else b""
    if len(table) < count * _LENGTH.size:
        return None
    sizes = [size for (size,) in _LENGTH.iter_unpack(table)]
    total = pickled + sum(sizes)
    if total > MAX_FRAME_BYTES:
        raise FrameError(f"a frame header announcing {total} bytes")
    payload = stream.read(pickled)
    if len(payload) < pickled:
        return None
    buffers = []
    for size in sizes:
        buffer = np.empty(size, dtype=np.uint8)  # not zeroed: its pages are touched once, by the read
        if not _read_into(stream, buffer.data):
            return None
        buffers.append(buffer)
    try:
        return _FrameUnpickler(payload, buffers).load()
    except Exception as exc:  # any bytes can reach unpickling: every error means the same thing here
        raise FrameError(f"a frame whose payload does not unpickle ({type(exc).__name__}: {exc})") from None


def write_frame(stream: IO[bytes], message: Any) -> None:
    views: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        view = buffer.raw() if memoryview(buffer).contiguous else None
        if view is None:
            return True  # in the pickle
        views.append(view)
        return False

    payload = pickle.dumps(message, protocol=5, buffer_callback=out_of_band)
    stream.write(_HEADER.pack(_MAGIC, len(payload), len(views)) + b"".join(_LENGTH.pack(view.nbytes) for view in views))
    stream.write(payload)
    for view in views:
        stream.write(view)  # straight from the array's memory
    stream.flush()


KEPT_BINDINGS = 2


class WorkerState:
    def __init__(self, containment: dict[str, Any] | None = None) -> None:
        self.containment = containment or {}  # what `containment.contain_worker` applied to this process
        self.kernel: LoadedKernel | None = None
        self.runtime: Runtime | None = None
        self.bindings: dict[tuple[Any, ...], Binding] = {}
        self.seeds: dict[tuple[Any, ...], int] = {}  # the seed each binding's inputs were last set from

    def load(self, request: LoadRequest) -> LoadResult:
        from ..toolchains import make_toolchain

        toolchain = make_toolchain(request["toolchain"], request.get("arch"), request.get("flags", ()))
        self.runtime = toolchain.runtime()
        self.kernel = toolchain.load(request["artifact"], request["params"])
        return {"pid": os.getpid(), "device": {**self.runtime.describe(), "containment": self.containment}}

    def binding(self, spec: BindSpec) -> Binding:
        """The buffers at `spec.dims`: bound once per dims; another seed at the same dims writes its inputs into the
        same buffers (a kernel that keeps results per pointer and size sees new inputs on the same pointers)."""
        assert self.kernel is not None and self.runtime is not None, "the kernel is loaded first"
        key = (tuple(sorted(spec.dims.items())), tuple(sorted(spec.domains.items())))  # domains: input sets
        if key in self.bindings:
            self.bindings[key] = found = self.bindings.pop(key)  # the most recently used last
            if self.seeds.get(key) != spec.seed:
                rebind = getattr(found, "rebind", None)
                if callable(rebind):
                    rebind(spec)
                else:
                    self.bindings[key] = self.kernel.bind(spec, self.runtime)
                self.seeds[key] = spec.seed
            return self.bindings[key]
        # Two sets of buffers stay alive: the default dims' (costly to draw at real sizes) survive the small
        # correctness examples in between. Sizes may be large: when binding fails, it is tried once more alone.
        while len(self.bindings) >= KEPT_BINDINGS:
            del self.bindings[self._evicted()]
        try:
            self.bindings[key] = self.kernel.bind(spec, self.runtime)
        except Exception:
            if not self.bindings:
                raise
            self.bindings.clear()
            self.bindings[key] = self.kernel.bind(spec, self.runtime)
        self.seeds[key] = spec.seed
        return self.bindings[key]

    def _evicted(self) -> tuple[Any, ...]:
        """The binding to drop: the least recently used one, but never the largest (the default dims' buffers, which
        take seconds to draw at real sizes, outlive the small boundary and Hypothesis examples in between)."""
        largest = max(self.bindings, key=lambda key: self.bindings[key].nbytes)
        return next((key for key in self.bindings if key != largest), largest)

    def run(self, request: RunRequest) -> Snapshot:
        binding = self.binding(request["spec"])
        binding.reset()
        binding.launch()
        return binding.snapshot()

    def batch(self, request: BatchRequest) -> dict[str, int]:
        """Back-to-back calls on the bound buffers, read with the clock like timed calls; the pytest process times
        the request itself (timing/bounds.py)."""
        binding = self.binding(request["spec"])
        assert self.runtime is not None
        clock = time.perf_counter_ns
        rotate = request.get("rotate")
        sizes: dict[str, int] = dict(getattr(binding, "input_sizes", None) or {})
        prepare = getattr(binding, "prepare_call", None) if rotate is not None and sizes else None
        from ..toolchains.binding import roll_offsets  # numpy: not in the supervisor, which imports this module

        for call in range(int(request["calls"])):
            if prepare is not None and rotate is not None:
                prepare(roll_offsets(sizes, rotate, call))  # other inputs for every call, as timed calls get
            begin = clock()
            binding.launch()
            clock() - begin
        self.runtime.synchronize()
        return {"calls": int(request["calls"])}

    def snap(self, request: BatchRequest) -> dict[str, int]:
        """Back-to-back calls on the bound buffers, each followed by its snapshot (kept by nobody): the pytest process
        times the request and compares it with a batch of calls alone (timing/bounds.py `snapshot_problem`)."""
        binding = self.binding(request["spec"])
        for _ in range(int(request["calls"])):
            binding.launch()
            binding.snapshot()
        return {"calls": int(request["calls"])}

    def time(self, request: TimeRequest) -> TimeResult:
        """Time the kernel; hand back the outputs of the calls the request's plan names (`protocol.CheckPlan`).

        Every call is prepared the same way: the outputs hold finite junk before the first call (not the NaN
        poison), and before each call every input is rotated in its buffer (`TimedCalls`), so a result kept from an
        earlier call is wrong for the next one. Calls the plan numbers are snapshotted after they return, outside
        the timed window; around the timed calls come the announced checked calls (before the first, on new input
        values right after the last, after the last per input set). The pytest process computes the inputs of every
        one itself and compares the outputs with the reference (bench/run.py).
        """
        started = time.perf_counter()
        binding = self.binding(request["spec"])
        assert self.kernel is not None and self.runtime is not None
        plan = request["plan"]
        ready = time.perf_counter()
        # protocol.TimeRequest types `calibration` as plain JSON; the runtime checks it (None from the first worker).
        offered = cast(Mapping[str, Any], request).get("calibration")
        calibrated = isinstance(self.runtime, CalibratedRuntime)
        if offered is not None and calibrated:
            cast(CalibratedRuntime, self.runtime).accept_calibration(offered)
        # Device runtimes rotate over extra input sets when one set would sit in the cache; only the hot-rotated
        # side figure uses them, so without side figures no extra sets are allocated.
        spec, working_set, policy = request["spec"], binding.nbytes, request["policy"]
        sets = self.runtime.rotation_sets(working_set) if policy.side_figures else 1
        others = [self.kernel.bind(replace(spec, seed=spec.seed + index, provided={}), self.runtime)
                  for index in range(1, sets)]
        checks: list[CheckedCall] = []
        if plan.announced:
            checks.append(_checked_call(binding, "the call before the first timed call", ("start",), plan.seed,
                                        plan.poisoned_start))
        else:  # prepared as for that call: starting inputs, junk (or the poison) in the outputs
            _prepare_start(binding, plan.seed, plan.poisoned_start)
        timed = TimedCalls(binding, plan)
        measured = time.perf_counter()
        samples = self.runtime.measure_sets([timed, *(other.launch for other in others)], policy, working_set)
        measure_wall_s = time.perf_counter() - measured
        checking = time.perf_counter()
        checks += timed.checks
        if plan.announced:
            checks += new_inputs_call(binding, plan.new_inputs_seed)
            for index, bound in enumerate([binding, *others]):
                checks.append(_checked_call(bound, f"the call after the last timed call (input set {index})",
                                            ("set", index), plan.seed + index + 1))
        del others
        ended = time.perf_counter()
        # Where the worker's time went besides the samples (the record's `timing.harness_phases_s`).
        phases = {"bind": ready - started, "checked_calls": (measured - ready) + (ended - checking)}
        result: TimeResult = {"samples": samples, "device": self.runtime.describe(), "measure_wall_s": measure_wall_s,
                              "checks": checks, "timed_calls": timed.calls, "sets": sets,
                              "worker_wall_s": ended - started, "worker_phases_s": phases}
        # For the next worker on this device (run/isolation.py keeps it), as the protocol's plain JSON.
        cast(dict[str, Any], result)["calibration"] = (cast(CalibratedRuntime, self.runtime).calibration()
                                                       if calibrated else None)
        return result


class TimedCalls:
    """The launch a runtime times, with what happens between two timed calls, outside the timed window: `prepare`
    rotates every input (`binding.roll_offsets` from the plan's seed and the call's number), `finish` snapshots the
    calls the plan names. A runtime that times on the host calls both around every call (timing/host.py); one that
    does not (device event timing) times `__call__` alone: then the inputs stay put and only the announced calls
    are checked."""

    def __init__(self, binding: Any, plan: CheckPlan) -> None:
        self.binding = binding
        self.plan = plan
        self.calls = 0
        self.checks: list[CheckedCall] = []
        sizes = getattr(binding, "input_sizes", None)
        self._sizes: dict[str, int] | None = dict(sizes) if sizes is not None and callable(
            getattr(binding, "prepare_call", None)) else None
        from ..toolchains.binding import roll_offsets  # numpy: not in the supervisor, which imports this module

        self._offsets = roll_offsets

    def __call__(self) -> None:
        self.binding.launch()

    def prepare(self) -> None:
        if self._sizes is not None:
            self.binding.prepare_call(self._offsets(self._sizes, self.plan.seed, self.calls))

    def finish(self) -> None:
        call = self.calls
        self.calls += 1
        if self.plan.every_call or call in self.plan.checked:
            # The next call's inputs go in first: a call's outputs are what it left, whatever the inputs hold now. A
            # worker whose snapshot computes the outputs when they are read (replaced through the CPython C API or
            # by monkey-patching) computes them from other inputs, and the call is wrong. Not where an in/out buffer
            # is rotated too: that would overwrite the very output being checked.
            if not getattr(self.binding, "rotates_outputs", False):
                self.prepare()
            self.checks.append({"call": f"timed call {call} (counted from the first warm-up call)",
                                "inputs": ("timed", call), "snapshot": self.binding.snapshot(), "setup": TIMED})


JUNK_OUTPUTS = ("Before that call its outputs held finite junk, as after an earlier call, not the NaN poison: a kernel "
                "that skips work when its output already holds a value, or that changes behaviour after many calls, "
                "fails here.")
POISONED_OUTPUTS = ("Before that call its outputs held the NaN poison, as before a correctness call, and the timed "
                    "calls after it found the previous call's result there: a kernel that computes only in a run of "
                    "calls that starts from junk fails here.")
TIMED = ("That call was one of the timed calls, prepared like every other (each call's inputs rotated in their "
         "buffers, the outputs holding the previous call's result), chosen at random from the run's secret seed: a "
         "kernel that computes only when it is checked, or hands back a result kept from earlier inputs, fails here.")
NEW_INPUTS = ("That call ran right after the timed calls, on the same buffers, with the outputs still holding the last "
              "timed call's result, but with new input values: a kernel that hands back a result kept from an "
              "earlier call (memoized on its pointers, or skipped because the output still holds what it wrote) "
              "fails here.")


def _prepare_start(binding: Any, seed: int, poisoned: bool = False) -> None:
    """The starting inputs, and junk (finite, earlier-result-like) outputs, or the NaN poison with `poisoned`."""
    if poisoned:
        binding.reset()
        return
    getattr(binding, "reset_inputs", binding.reset)()  # the outputs get junk next: poisoning them first is wasted
    scramble = getattr(binding, "scramble_outputs", None)
    if callable(scramble):
        scramble(seed)


def _checked_call(binding: Any, label: str, inputs: tuple[Any, ...], seed: int,
                  poisoned: bool = False) -> CheckedCall:
    """One call on the starting inputs with junk outputs (the poison with `poisoned`); its snapshot for the check."""
    _prepare_start(binding, seed, poisoned)
    binding.launch()
    return {"call": label, "inputs": inputs, "snapshot": binding.snapshot(),
            "setup": POISONED_OUTPUTS if poisoned else JUNK_OUTPUTS}


def new_inputs_call(binding: Any, seed: int) -> list[CheckedCall]:
    """The call after the last timed call, on new input values in the same buffers (see `redraw_inputs`); []
    for a binding that cannot redraw its inputs in place."""
    if not callable(getattr(binding, "redraw_inputs", None)):
        return []
    try:
        binding.redraw_inputs(seed)
        binding.launch()
        snapshot = binding.snapshot()
    finally:
        binding.restore_inputs()
    return [{"call": "the call after the last timed call, on new input values in the same buffers",
             "inputs": ("new",), "snapshot": snapshot, "setup": NEW_INPUTS}]


def main() -> int:
    response_fd, parent = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else os.getppid()
    # Linux sends the parent-death signal when the *thread* that started us ends: only trust it for a main thread.
    started_by_main_thread = len(sys.argv) > 3 and sys.argv[3] == "main-thread"
    preload = [name for name in sys.argv[4].split(",") if name] if len(sys.argv) > 4 else []
    supervisor = os.getpid()
    worker = os.fork()
    if worker:
        return supervise(worker, parent, response_fd, started_by_main_thread)
    containment = contain_worker()  # before any kernel code is loaded, and before this process starts threads
    die_with(supervisor)
    return serve(response_fd, preload, containment)


def import_ahead(modules: list[str]) -> list[str]:
    """Import what loading the kernel will import, while nobody waits for it yet; the names imported. A module that
    fails to import is left to the `load` request, which imports it again and reports the error there."""
    import importlib

    imported = []
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # reported by `load`, where the kernel needs it
            continue
        imported.append(name)
    return imported


def die_with(supervisor: int) -> None:
    """The worker must not outlive its supervisor: a parent-death SIGKILL, and a watchdog thread behind it."""
    set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != supervisor:  # it died before prctl took effect
        os._exit(1)
    watch_parent(supervisor, lambda: os._exit(1))


def supervise(worker: int, parent: int, response_fd: int, parent_death_signal: bool) -> int:
    """Wait for the worker, end every process left below us, then exit as the worker did."""
    os.close(response_fd)  # only the worker answers: its death must close the channel
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # pytest closing stdin must reach the worker alone
    os.close(devnull)
    set_child_subreaper()

    def end_everything(*_: Any) -> None:
        end_subtree(os.getpid())
        os._exit(1)

    signal.signal(signal.SIGTERM, end_everything)
    if parent_death_signal:
        set_parent_death_signal(signal.SIGTERM)
    watch_parent(parent, end_everything)
    if os.getppid() != parent:  # pytest died before prctl took effect
        end_everything()
    try:
        _, status, usage = os.wait4(worker, 0)
        peak_kib = usage.ru_maxrss  # KiB on Linux: the worker's peak resident memory
    except ChildProcessError:
        status, peak_kib = 0, 0
    if status:
        note_end(status, worker, peak_kib)
    end_subtree(os.getpid())
    return _mirror(status)


# A line the supervisor writes into the worker's log when the worker ends abnormally: the pytest side reads the
# worker's peak memory from it (`isolation._raise_dead`).
END_NOTE = "dcuopt supervisor: the worker ended"
# Exit statuses the worker itself chooses (besides a kernel's own exit()):
CHANNEL_BROKEN_STATUS = 86  # its reply could not be written: the kernel closed or reused the harness's descriptors
FORKED_CHILD_STATUS = 87  # a process the kernel forked returned into the harness and was stopped there
FATAL_STATUS = 3  # a fatal error (a sticky GPU fault) was replied; the process's context is gone


def note_end(status: int, pid: int, peak_kib: int) -> None:
    how = (f"signal {_signal_label(os.WTERMSIG(status))}" if os.WIFSIGNALED(status)
           else f"exit status {os.waitstatus_to_exitcode(status)}")
    try:
        os.write(2, f"{END_NOTE} (pid {pid}) with {how}; its peak memory (max RSS) was {peak_kib // 1024} MiB\n"
                    .encode())
    except OSError:
        pass  # no log to write to: the message on the pytest side still names the signal or status


def _signal_label(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _mirror(status: int) -> int:
    """Exit like the worker: re-raise its signal (without a core dump), or return its exit status."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if number not in (signal.SIGKILL, signal.SIGSTOP):  # their action cannot be changed (EINVAL)
            signal.signal(number, signal.SIG_DFL)
        sys.stdout.flush()
        os.kill(os.getpid(), number)
        time.sleep(1)  # the signal is delivered before this returns, unless its default action is to ignore it
        return 128 + number
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1


def serve(response_fd: int, preload: list[str] | None = None, containment: dict[str, Any] | None = None) -> int:
    faulthandler.enable(file=sys.stderr, all_threads=True)
    os.dup2(2, 1)  # kernel printf -> the log, never into the protocol
    requests = sys.stdin.buffer
    responses = os.fdopen(response_fd, "wb")
    imported = import_ahead(preload or [])
    state = WorkerState(containment or {})
    me = os.getpid()
    patience = FORKED_WAIT_S  # 0 once the kernel left a child that kept running: later calls do not wait on it
    # Requests arrive untyped off the pipe; each handler takes its own request shape (run/protocol.py).
    handlers: dict[str, Callable[[Any], Any]] = {"load": state.load, "run": state.run, "time": state.time,
                                                 "batch": state.batch, "snap": state.snap,
                                                 "ping": lambda _: {"pid": os.getpid(), "imported": imported}}
    while True:
        request = read_frame(requests)
        if request is None:
            return 0
        try:
            result = handlers[request["op"]](request)
            leave_if_forked(me)
            forked, lingering = forked_children(patience)
            patience = 0.0 if lingering else patience
            reply: Reply = ({"ok": True, "result": result} if not forked else
                            {"ok": False, "error": forked, "traceback": "", "fatal": True})
        except Exception as exc:  # report, keep serving
            leave_if_forked(me)
            fatal = bool(getattr(exc, "fatal", False))  # e.g. a sticky GPU fault: this process's context is gone
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(),
                     "fatal": fatal}
        try:
            write_frame(responses, reply)
        except (OSError, ValueError):  # its descriptor was closed, or is now another file: nothing can be said
            os._exit(CHANNEL_BROKEN_STATUS)
        if reply.get("fatal"):
            return FATAL_STATUS


FORKED = ("the kernel forked and the child returned into the harness: both processes came back from solve() into "
          "the worker, which would have answered twice on one channel. The child was stopped. A kernel may start "
          "processes only if they never return from solve(): a child must exec() or _exit(), and the parent should "
          "wait for it before returning")


def leave_if_forked(me: int) -> None:
    """In a process the kernel forked that returned from solve() into the worker's loop: exit at once, before it
    writes anything, with a status its parent (the worker) recognises (`forked_children`)."""
    if os.getpid() != me:
        os._exit(FORKED_CHILD_STATUS)


# How long the worker waits, after a call, for the children the kernel left to end: a forked copy of the worker ends
# at once (`leave_if_forked`); a helper still running after this is left to the supervisor.
FORKED_WAIT_S = 2.0


def forked_children(wait_s: float) -> tuple[str | None, bool]:
    """(FORKED when a child of this process exited with FORKED_CHILD_STATUS, else None; whether a child was still
    running after `wait_s`). Returns at once when the kernel left no child, the usual case."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None, False  # no child left
        if pid and os.WIFEXITED(status) and os.WEXITSTATUS(status) == FORKED_CHILD_STATUS:
            return f"{FORKED} (child pid {pid})", False
        if not pid:
            if time.monotonic() >= deadline:
                return None, True
            time.sleep(0.005)


if __name__ == "__main__":
    sys.exit(main())
